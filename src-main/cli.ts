/**
 * The `certdesk` command: `serve` runs the service and the reseller API without Electron;
 * `admin …` changes the store and prints JSON. Admin commands work while `serve` runs on the
 * same data dir (SQLite WAL with a busy timeout).
 */
import { parseArgs } from 'node:util'
import { DEPLOY_USAGE, deployAdmin, isDeployCommand } from './cli-deploy'
import { ServiceError } from './core/errors'
import { centsToUsd, usdToCents } from './core/money'
import { defaultDataDir } from './core/paths'
import { ensureDemoReseller, openService, type Service } from './core/service'
import { buildServer, listen } from './http/server'
import { DEFAULT_ACME_PORT, startAcmeServer } from './acme/server'
import { browserUiOptions } from './app/browser-mode'
import { startSchedulerLoop } from './core/scheduler'
import { shellQuote } from './core/shell-quote'
import { EDITABLE_SETTINGS } from './core/settings'
import { fixedClock, isValidDate } from './core/time'
import { readFileSync, writeFileSync } from 'node:fs'

export const DEFAULT_PORT = 7780

const USAGE = `usage:
  certdesk serve [--data-dir D] [--port P] [--host H] [--log-level L] [--acme-port P] [--ui] [--demo]
  certdesk admin [--data-dir D] reseller add --name N --email E [--company C] [--group ID] [--discount PCT]
  certdesk admin [--data-dir D] reseller list
  certdesk admin [--data-dir D] reseller api-access --reseller ID --enable|--disable
  certdesk admin [--data-dir D] reseller set-group --reseller ID --group ID|none
  certdesk admin [--data-dir D] credit add --reseller ID --amount USD [--description TEXT]
  certdesk admin [--data-dir D] apikey create --reseller ID [--label TEXT]
  certdesk admin [--data-dir D] apikey list --reseller ID
  certdesk admin [--data-dir D] apikey revoke --key-id ID
  certdesk admin [--data-dir D] group list
  certdesk admin [--data-dir D] product list
  certdesk admin [--data-dir D] scheduler run [--as-of YYYY-MM-DD]
  certdesk admin [--data-dir D] settings get [KEY]
  certdesk admin [--data-dir D] settings set KEY VALUE
  certdesk admin [--data-dir D] ca root [--out FILE]
  certdesk admin [--data-dir D] acme-issuer set --directory URL [--eab-kid KID --eab-hmac-file FILE] [--ca-bundle FILE]
  certdesk admin [--data-dir D] acme-issuer show|off
${DEPLOY_USAGE}
  Headless Linux (no desktop keyring): [--keyring-dir D] [--keyring-password-file F] on any command
  choose the private keyring's folder (outside the data dir) and the file holding its password.`

class UsageError extends Error {}

const OPTIONS = {
  'data-dir': { type: 'string' },
  // Read by bin/certdesk.cjs before the CLI runs (the headless keyring); accepted here so that
  // every command takes them.
  'keyring-dir': { type: 'string' },
  'keyring-password-file': { type: 'string' },
  port: { type: 'string' },
  'acme-port': { type: 'string' },
  host: { type: 'string' },
  'log-level': { type: 'string' },
  name: { type: 'string' },
  email: { type: 'string' },
  company: { type: 'string' },
  group: { type: 'string' },
  discount: { type: 'string' },
  reseller: { type: 'string' },
  amount: { type: 'string' },
  description: { type: 'string' },
  label: { type: 'string' },
  'key-id': { type: 'string' },
  enable: { type: 'boolean' },
  disable: { type: 'boolean' },
  demo: { type: 'boolean' },
  ui: { type: 'boolean' },
  order: { type: 'string' },
  folder: { type: 'string' },
  layout: { type: 'string' },
  pfx: { type: 'boolean' },
  command: { type: 'string' },
  timeout: { type: 'string' },
  cwd: { type: 'string' },
  webhook: { type: 'string' },
  target: { type: 'string' },
  type: { type: 'string' },
  limit: { type: 'string' },
  offset: { type: 'string' },
  'as-of': { type: 'string' },
  out: { type: 'string' },
  directory: { type: 'string' },
  'eab-kid': { type: 'string' },
  'eab-hmac-file': { type: 'string' },
  'ca-bundle': { type: 'string' },
  help: { type: 'boolean', short: 'h' }
} as const

type Values = ReturnType<typeof parse>['values']
const parse = (argv: string[]) => parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true })

function need(v: Values, name: keyof Values): string {
  const value = v[name]
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`)
  return value
}

function int(v: Values, name: keyof Values): number {
  const s = need(v, name)
  if (!/^\d+$/.test(s)) throw new UsageError(`--${name} must be a whole number`)
  return Number(s)
}

const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`)
}

export async function main(argv: string[]): Promise<number> {
  let parsed
  try {
    parsed = parse(argv)
  } catch (err) {
    process.stderr.write(`certdesk: ${(err as Error).message}\n${USAGE}\n`)
    return 2
  }
  const { values, positionals } = parsed
  if (values.help || positionals.length === 0) {
    process.stdout.write(`${USAGE}\n`)
    return values.help ? 0 : 2
  }
  const dataDir = values['data-dir'] ?? defaultDataDir()
  try {
    if (positionals[0] === 'serve') return await serve(dataDir, values)
    if (positionals[0] === 'admin' && ['scheduler', 'settings', 'ca'].includes(positionals[1] ?? '')) {
      return await certificateAdmin(dataDir, positionals.slice(1), values)
    }
    if (positionals[0] === 'admin') {
      const service = openService({ dataDir, clock: values['as-of'] ? fixedClock(values['as-of']) : undefined })
      try {
        if (isDeployCommand(positionals[1])) return await deployAdmin(service, positionals.slice(1), values, (m) => new UsageError(m))
        admin(service, positionals.slice(1), values)
      } finally {
        service.close()
      }
      return 0
    }
    throw new UsageError(`unknown command ${positionals[0]}`)
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`certdesk: ${err.message}\n${USAGE}\n`)
      return 2
    }
    if (err instanceof ServiceError || err instanceof RangeError) {
      process.stderr.write(`${JSON.stringify({ success: false, error: err.message })}\n`)
      return 1
    }
    throw err
  }
}

function admin(service: Service, words: string[], v: Values): void {
  const [noun, verb] = words
  const key = `${noun ?? ''} ${verb ?? ''}`.trim()
  switch (key) {
    case 'reseller add': {
      // Without --group the core puts the reseller in its default group.
      const group = v.group === undefined ? undefined : v.group === 'none' ? null : int(v, 'group')
      const discount = v.discount === undefined ? 0 : Number(v.discount)
      if (Number.isNaN(discount)) throw new UsageError('--discount must be a number')
      const r = service.resellers.create({
        name: need(v, 'name'),
        email: need(v, 'email'),
        company: v.company,
        groupId: group,
        discountRate: discount
      })
      return print({ success: true, reseller: resellerOut(r) })
    }
    case 'reseller list':
      return print({ success: true, resellers: service.resellers.list().map(resellerOut) })
    case 'reseller api-access': {
      if (v.enable === v.disable) throw new UsageError('give exactly one of --enable or --disable')
      const r = service.resellers.setApiAccess(int(v, 'reseller'), Boolean(v.enable))
      return print({ success: true, reseller: resellerOut(r) })
    }
    case 'reseller set-group': {
      const g = need(v, 'group')
      const r = service.resellers.setGroup(int(v, 'reseller'), g === 'none' ? null : int(v, 'group'))
      return print({ success: true, reseller: resellerOut(r) })
    }
    case 'credit add': {
      const amount = Number(need(v, 'amount'))
      if (!Number.isFinite(amount)) throw new UsageError('--amount must be a number of USD, such as 250 or 99.50')
      const tx = service.ledger.topUp(int(v, 'reseller'), usdToCents(amount), v.description ?? 'Credit top-up')
      return print({
        success: true,
        transaction: { id: tx.id, amount: centsToUsd(tx.amount), type: tx.type, description: tx.description, balance_after: centsToUsd(tx.balanceAfter), created_at: tx.createdAt },
        new_balance: centsToUsd(tx.balanceAfter)
      })
    }
    case 'apikey create': {
      const { key, info } = service.resellers.createApiKey(int(v, 'reseller'), v.label ?? '')
      return print({
        success: true,
        api_key: key,
        key_id: info.id,
        reseller_id: info.resellerId,
        note: 'This key is shown once. CertDesk keeps it in the OS keychain; the database holds only its hash.'
      })
    }
    case 'apikey list':
      return print({ success: true, api_keys: service.resellers.apiKeys(int(v, 'reseller')).map(keyOut) })
    case 'apikey revoke':
      return print({ success: true, api_key: keyOut(service.resellers.revokeApiKey(int(v, 'key-id'))) })
    // The external ACME CA TLS orders are issued from (RFC 8555). The HMAC key is read from a
    // file, never from the command line (shell history, process list), and goes to the keychain.
    case 'acme-issuer set': {
      const hmacFile = v['eab-hmac-file']
      const hmac = hmacFile ? readFileSync(hmacFile, 'utf8').trim() : null
      service.acmeIssuer.configure(need(v, 'directory'), v['eab-kid'] ?? null, hmac, v['ca-bundle'] ?? null)
      return print({ success: true, acme_issuer: service.acmeIssuer.summary() })
    }
    case 'acme-issuer show':
      return print({ success: true, acme_issuer: service.acmeIssuer.summary() })
    case 'acme-issuer off':
      service.acmeIssuer.disable()
      return print({ success: true, acme_issuer: service.acmeIssuer.summary() })
    case 'group list':
      return print({ success: true, groups: service.catalogue.groups() })
    case 'product list':
      return print({
        success: true,
        products: service.catalogue.allProducts().map((p) => ({
          id: p.id,
          name: p.name,
          brand: p.brand,
          type: p.type,
          validation_type: p.validationType,
          fulfillment: p.fulfillment,
          acme_type: p.acmeType,
          max_years: p.maxYears,
          list_pricing: Object.fromEntries(Object.entries(p.listPricing).map(([y, x]) => [y, centsToUsd(x.price)]))
        }))
      })
    default:
      throw new UsageError(`unknown admin command: ${key || '(none)'}`)
  }
}

/**
 * `scheduler run`, `settings get|set` and `ca root`: the certificate admin commands. The
 * scheduler runs with the clock stopped at `--as-of` (UTC midnight), so a run applies the
 * CA/B rules and due dates of that day.
 */
async function certificateAdmin(dataDir: string, words: string[], v: Values): Promise<number> {
  const [noun, verb, ...rest] = words
  const key = `${noun ?? ''} ${verb ?? ''}`.trim()
  if (key === 'scheduler run') {
    const asOf = v['as-of']
    if (asOf !== undefined && !isValidDate(asOf)) throw new UsageError('--as-of must be a calendar day, YYYY-MM-DD')
    const service = openService({ dataDir, ...(asOf ? { clock: fixedClock(asOf) } : {}) })
    try {
      print({ success: true, ...(await service.scheduler.run()) })
    } finally {
      service.close()
    }
    return 0
  }
  const service = openService({ dataDir })
  try {
    switch (key) {
      case 'settings get': {
        const keys = rest[0] ? [rest[0]] : EDITABLE_SETTINGS
        print({ success: true, settings: Object.fromEntries(keys.map((k) => [k, service.settings.get(k)])) })
        return 0
      }
      case 'settings set': {
        const [k, value] = rest
        if (!k || value === undefined) throw new UsageError('settings set needs KEY VALUE')
        // The core refuses a value its rule refuses (exit 1, the reason on stderr) and keeps the old one.
        service.settings.update({ [k]: value })
        print({ success: true, settings: { [k]: value } })
        return 0
      }
      case 'ca root': {
        const pem = await service.localCa.rootPem()
        if (v.out) {
          writeFileSync(v.out, pem, { mode: 0o644 })
          print({ success: true, path: v.out, note: 'the local CA root certificate; add it to a trust store to trust what CertDesk issues' })
        } else {
          print({ success: true, root_pem: pem })
        }
        return 0
      }
      default:
        throw new UsageError(`unknown admin command: ${key || '(none)'}`)
    }
  } finally {
    service.close()
  }
}

const resellerOut = (r: ReturnType<Service['resellers']['get']>) => ({
  id: r.id,
  name: r.name,
  email: r.email,
  company: r.company,
  group_id: r.groupId,
  discount_rate: r.discountRate,
  status: r.status,
  api_access: r.apiAccess,
  credit_balance: centsToUsd(r.creditBalance),
  created_at: r.createdAt
})

const keyOut = (k: ReturnType<Service['resellers']['apiKey']>) => ({
  id: k.id,
  reseller_id: k.resellerId,
  prefix: k.prefix,
  label: k.label,
  created_at: k.createdAt,
  revoked_at: k.revokedAt
})

async function serve(dataDir: string, v: Values): Promise<number> {
  const port = v.port === undefined ? DEFAULT_PORT : Number(v.port)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be 0-65535')
  const host = v.host ?? '127.0.0.1'
  const service = openService({ dataDir })
  if (v.demo) {
    const demo = ensureDemoReseller(service)
    if (demo) {
      process.stderr.write(
        `certdesk: created demo reseller ${demo.id} (${demo.name}) with ${centsToUsd(demo.creditBalance).toFixed(2)} USD credit.\n` +
          `certdesk: get its API key with: npx certdesk admin --data-dir ${shellQuote(dataDir)} apikey create --reseller ${demo.id}\n`
      )
    }
  }
  let apiUrl = ''
  // --ui: the desktop UI in browser mode on the same listener (src-main/app/browser-mode.ts).
  // A new link is printed whenever a browser session has ended (signed out, or idle), so the
  // desktop user can sign in again without a restart; like the first, it goes to stdout only.
  const ui = v.ui
    ? browserUiOptions(service, () => apiUrl, undefined, {
        onNewLink: (url) => process.stdout.write(`CertDesk desktop UI (browser mode), sign in again, open once: ${url}\n`)
      })
    : null
  const app = await buildServer(service, {
    logger: { level: v['log-level'] ?? 'warn' },
    allowedHosts: host === '127.0.0.1' || host === '::1' || host === 'localhost' ? [] : [host],
    ...(ui?.server ?? {})
  })
  // Listen for the stop signals before announcing the URL: a caller may signal at once.
  const stopped = new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      resolve()
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
  const listening = await listen(app, host, port)
  // The embedded ACME server of ACME subscription products: its own HTTPS port.
  const acmePort = v['acme-port'] === undefined ? (port === 0 ? 0 : DEFAULT_ACME_PORT) : Number(v['acme-port'])
  if (!Number.isInteger(acmePort) || acmePort < 0 || acmePort > 65535) throw new UsageError('--acme-port must be 0-65535')
  // Without its ACME server (port taken, keychain locked) the reseller API still serves.
  const acme = await startAcmeServer(service, { host: '127.0.0.1', port: acmePort }).catch((err: unknown) => {
    process.stderr.write(`certdesk: could not start the ACME server on port ${acmePort}: ${(err as Error).message}\n`)
    return null
  })
  apiUrl = listening.url
  process.stdout.write(`CertDesk reseller API v3.0 listening on ${listening.url}\n`)
  if (acme) process.stdout.write(`CertDesk ACME directory at ${acme.directoryUrl}\n`)
  if (ui) process.stdout.write(`CertDesk desktop UI (browser mode), open once: ${ui.loginUrl(listening.url)}\n`)
  // Design page: the scheduler runs on start (catching up after sleep) and on a timer.
  const stopScheduler = startSchedulerLoop(service.scheduler, (line) => process.stderr.write(`certdesk: ${line}\n`))
  await stopped
  await stopScheduler()
  await acme?.close()
  await listening.close()
  service.close()
  process.stderr.write('certdesk: stopped\n')
  return 0
}

// Run when executed as the CLI (bin/certdesk.cjs requires this module and calls main).
