/**
 * The settings of the desktop Settings screen under its field names, mapped once onto the
 * core's setting keys (setting-keys.ts owns the keys, settings.ts the rules): where domain
 * validation looks and mails, and the seller block of invoices. Empty text means "the default":
 * the core reads '' like an unset key. A refused value is explained with the field's label, as
 * the screen shows it, not with the key a command line uses.
 */
import type { SettingsInput, SettingsProblems, SettingsValues } from '../../../src-shared/records'
import { DCV_SETTINGS, INVOICE_SETTINGS } from './setting-keys'
import { invalid } from '../errors'
import { SETTING_RULES, type Settings } from './settings'

type Field = keyof SettingsValues

const KEY_OF: Record<Field, string> = {
  dcvResolver: DCV_SETTINGS.resolver,
  dcvHttpPort: DCV_SETTINGS.httpPort,
  dcvHttpsPort: DCV_SETTINGS.httpsPort,
  smtpUrl: DCV_SETTINGS.smtpUrl,
  smtpFrom: DCV_SETTINGS.smtpFrom,
  dcvAllowPrivateAddresses: DCV_SETTINGS.allowPrivateAddresses,
  sellerName: INVOICE_SETTINGS.sellerName,
  sellerAddress: INVOICE_SETTINGS.sellerAddress
}
/** Each field as the Settings screen labels it. */
const LABEL_OF: Record<Field, string> = {
  dcvResolver: 'the DNS resolver',
  dcvHttpPort: 'the HTTP validation port',
  dcvHttpsPort: 'the HTTPS validation port',
  smtpUrl: 'the SMTP relay',
  smtpFrom: 'the sender address',
  dcvAllowPrivateAddresses: 'lab use',
  sellerName: 'the business name',
  sellerAddress: 'the business address'
}
const FIELDS = Object.keys(KEY_OF) as Field[]

/** The typed values by core key, trimmed; a field left out is not changed. */
const changesOf = (input: SettingsInput): Record<string, string> =>
  Object.fromEntries(FIELDS.filter((f) => input[f] !== undefined).map((f) => [KEY_OF[f], String(input[f]).trim()]))

/** Why the core would refuse each typed value, by field, in the screen's words; accepted fields are absent. */
export function settingsViewProblems(input: SettingsInput): SettingsProblems {
  const out: SettingsProblems = {}
  for (const f of FIELDS) {
    if (input[f] === undefined) continue
    const value = String(input[f]).trim()
    const reason = value === '' ? null : SETTING_RULES[KEY_OF[f]](value)
    if (reason) out[f] = `could not save ${LABEL_OF[f]}: it ${reason}`
  }
  return out
}

/**
 * Saves every typed value or none: one refused value refuses the whole change (400, every
 * problem in the screen's words) and nothing is written.
 */
export async function updateSettingsView(settings: Settings, input: SettingsInput): Promise<void> {
  const problems = Object.values(settingsViewProblems(input))
  if (problems.length > 0) throw invalid(problems.join('; '))
  await settings.update(changesOf(input))
}

export async function settingsView(settings: Settings): Promise<SettingsValues> {
  const text = async (f: Field): Promise<string> => (await settings.get(KEY_OF[f])) ?? ''
  return {
    dcvResolver: await text('dcvResolver'),
    dcvHttpPort: await text('dcvHttpPort'),
    dcvHttpsPort: await text('dcvHttpsPort'),
    smtpUrl: await text('smtpUrl'),
    smtpFrom: await text('smtpFrom'),
    dcvAllowPrivateAddresses: await settings.flag(KEY_OF.dcvAllowPrivateAddresses),
    sellerName: await text('sellerName'),
    sellerAddress: await text('sellerAddress')
  }
}
