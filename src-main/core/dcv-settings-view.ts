/**
 * The domain-validation settings under the desktop app's field names, mapped once onto the
 * core's setting keys (dcv.ts owns the keys, settings.ts the rules). Empty text means "the
 * default": the core reads '' like an unset key.
 */
import type { DcvSettingsView, SettingsInput, SettingsProblems } from '../../src-shared/records'
import { DCV_SETTINGS } from './dcv'
import { settingProblems, type Settings } from './settings'

const KEY_OF: Record<keyof DcvSettingsView, string> = {
  dcvResolver: DCV_SETTINGS.resolver,
  dcvHttpPort: DCV_SETTINGS.httpPort,
  dcvHttpsPort: DCV_SETTINGS.httpsPort,
  smtpUrl: DCV_SETTINGS.smtpUrl,
  smtpFrom: DCV_SETTINGS.smtpFrom,
  dcvAllowPrivateAddresses: DCV_SETTINGS.allowPrivateAddresses
}
const FIELDS = Object.keys(KEY_OF) as (keyof DcvSettingsView)[]

/** The typed values by core key, trimmed; a field left out is not changed. */
export const dcvSettingChanges = (input: SettingsInput): Record<string, string> =>
  Object.fromEntries(FIELDS.filter((f) => input[f] !== undefined).map((f) => [KEY_OF[f], String(input[f]).trim()]))

/** The core's reason for each typed value it would refuse, by field; accepted fields are absent. */
export function dcvSettingProblems(input: SettingsInput): SettingsProblems {
  const problems = settingProblems(dcvSettingChanges(input))
  return Object.fromEntries(FIELDS.filter((f) => problems[KEY_OF[f]]).map((f) => [f, problems[KEY_OF[f]]]))
}

/** Saves every typed value or none (settings.ts refuses the lot on one bad value). */
export const updateDcvSettings = async (settings: Settings, input: SettingsInput): Promise<void> =>
  await settings.update(dcvSettingChanges(input))

export async function dcvSettingsView(settings: Settings): Promise<DcvSettingsView> {
  return {
    dcvResolver: (await settings.get(KEY_OF.dcvResolver)) ?? '',
    dcvHttpPort: (await settings.get(KEY_OF.dcvHttpPort)) ?? '',
    dcvHttpsPort: (await settings.get(KEY_OF.dcvHttpsPort)) ?? '',
    smtpUrl: (await settings.get(KEY_OF.smtpUrl)) ?? '',
    smtpFrom: (await settings.get(KEY_OF.smtpFrom)) ?? '',
    dcvAllowPrivateAddresses: await settings.flag(KEY_OF.dcvAllowPrivateAddresses)
  }
}
