/**
 * `certdesk serve`: CertDesk without Electron (src-main/runtime.ts), its URLs on stdout, a clean
 * stop on SIGTERM or SIGINT (Ctrl-C) with exit code 0, and the listeners' certificates read or
 * issued again on SIGHUP (as nginx and HAProxy reload theirs), without a restart.
 */
import { databaseOf, port, secretSource, UsageError, type Values } from './cli-args'
import { centsToUsd } from './core/billing/money'
import { DEMO_CREDIT_CENTS } from './core/service'
import { shellQuote } from './core/shell-quote'
import type { RateLimit } from './http/rate-limit'
import { DEFAULT_PORT, startCertDesk, type PublicOptions } from './runtime'

export const SERVE_USAGE = `  certdesk serve [--data-dir D] [--database postgres://…] [--port P] [--host H] [--log-level L] [--acme-port P] [--ui] [--demo]
                 [--accounts]   (a team server: the UI for admins who sign in with their own accounts)
                 [--public-url https://NAME[:PORT]] [--public-listen ADDR:PORT] [--tls-cert FILE --tls-key FILE]
                 [--public-api] [--public-ui] [--public-rate-limit N] [--secrets file:PATH|systemd]
                 [--scheduler-interval SECONDS]   (how often a scheduler pass runs, across every node)
                 (the public listener: docs/team-server.md; each also as CERTDESK_PUBLIC_URL,
                  CERTDESK_PUBLIC_LISTEN, CERTDESK_TLS_CERT, CERTDESK_TLS_KEY, CERTDESK_SECRETS)`

/** `ADDR:PORT` or `[V6]:PORT` of --public-listen. */
export function listenAddress(value: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value.trim())
  const n = m ? Number(m[3]) : -1
  if (!m || n > 65535)
    throw new UsageError(
      `--public-listen must be ADDR:PORT such as 0.0.0.0:443 or [::]:443, not ${JSON.stringify(value)}`
    )
  return { host: m[1] ?? m[2], port: n }
}

/** The public listener's options from the command line, then the environment; undefined when none is asked for. */
export function publicOptions(v: Values, env: NodeJS.ProcessEnv = process.env): PublicOptions | undefined {
  const url = v['public-url'] ?? env.CERTDESK_PUBLIC_URL
  const listen = v['public-listen'] ?? env.CERTDESK_PUBLIC_LISTEN
  const cert = v['tls-cert'] ?? env.CERTDESK_TLS_CERT
  const key = v['tls-key'] ?? env.CERTDESK_TLS_KEY
  if ((cert === undefined) !== (key === undefined)) throw new UsageError('--tls-cert and --tls-key go together')
  if ((cert || v['public-api'] || v['public-ui'] || v['public-rate-limit']) && !listen)
    throw new UsageError('--tls-cert, --public-api, --public-ui and --public-rate-limit need --public-listen ADDR:PORT')
  if (url === undefined && listen === undefined) return undefined
  let rateLimit: RateLimit | null | undefined
  const rate = v['public-rate-limit']
  if (rate !== undefined) {
    if (!/^\d{1,6}$/.test(rate))
      throw new UsageError('--public-rate-limit must be requests per second per address, 0 for none')
    const perSecond = Number(rate)
    // A burst of four seconds' worth, as the default (50 a second, 200 at once) has.
    rateLimit = perSecond === 0 ? null : { perSecond, burst: perSecond * 4 }
  }
  return {
    url,
    listen: listen === undefined ? undefined : listenAddress(listen),
    tlsFiles: cert && key ? { cert, key } : undefined,
    resellerApi: v['public-api'] === true,
    ui: v['public-ui'] === true,
    rateLimit
  }
}

const say = (line: string): void => {
  process.stderr.write(`certdesk: ${line}\n`)
}

/** Seconds between scheduler passes: at least one, at most a day (reissues are due by the day). */
function schedulerInterval(v: Values): number | undefined {
  const s = v['scheduler-interval']
  if (s === undefined) return undefined
  if (!/^\d+$/.test(s) || Number(s) < 1 || Number(s) > 86_400)
    throw new UsageError('--scheduler-interval must be whole seconds, 1-86400')
  return Number(s) * 1000
}

export async function serve(dataDir: string, v: Values): Promise<number> {
  const apiPort = port(v, 'port') ?? DEFAULT_PORT
  const acmePort = port(v, 'acme-port')
  const publicListener = publicOptions(v)
  const secrets = secretSource(v)
  const schedulerIntervalMs = schedulerInterval(v)
  // Listen for the stop signals before anything starts: a caller may signal at once, and a
  // signal during start-up stops CertDesk as soon as it is up.
  let signalled = (): void => undefined
  const stopped = new Promise<void>((resolve) => (signalled = resolve))
  const onSignal = (): void => {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    signalled()
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  const running = await startCertDesk({
    dataDir,
    database: databaseOf(v),
    secretSource: secrets,
    public: publicListener,
    host: v.host ?? '127.0.0.1',
    port: apiPort,
    acmePort,
    schedulerIntervalMs,
    logLevel: v['log-level'] ?? 'warn',
    demo: v.demo,
    // --ui (or --public-ui): the desktop UI in browser mode on the same listener. A new link is
    // printed whenever a browser session has ended (signed out, or idle), so the desktop user can
    // sign in again without a restart; like the first, it goes to stdout only, never to the
    // request log.
    // --accounts: a team server's UI, where admins sign in with their own accounts (on the public
    // listener too with --public-ui); no link.
    browserUi: v.accounts
      ? { accounts: true }
      : v.ui || v['public-ui']
        ? {
            onNewLink: (url) =>
              process.stdout.write(`CertDesk desktop UI (browser mode), sign in again, open once: ${url}\n`)
          }
        : undefined,
    log: { info: say, error: say }
  }).catch((err: unknown) => {
    // Nothing runs: Node's own signal handling applies again.
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    throw err
  })
  // The data dir is the user's own text: quoted so that a pasted command passes it as one
  // argument. A database URL may hold a password, which is never printed. The same key source
  // as this server, or a secret would go to another store.
  const from =
    secrets.kind === 'file'
      ? ` --secrets ${shellQuote(`file:${secrets.path}`)}`
      : secrets.kind === 'systemd'
        ? ' --secrets systemd'
        : ''
  const where = `${databaseOf(v) === undefined ? `--data-dir ${shellQuote(dataDir)}` : '--database <the same URL>'}${from}`
  const demo = running.demoReseller
  if (demo) {
    say(`created demo reseller ${demo.id} (${demo.name}) with ${centsToUsd(demo.creditBalance).toFixed(2)} USD credit.`)
    say(`get its API key with: npx certdesk admin ${where} apikey create --reseller ${demo.id}`)
  }
  if (running.noReseller) {
    // A headless serve is for scripts: it makes no reseller of its own (docs/decisions.md, "A new
    // data dir"), so a first start says how to add one.
    say(
      `${databaseOf(v) === undefined ? 'this data dir' : 'this book'} has no reseller yet: add one with: npx certdesk admin ${where} reseller add --name 'My Hosting' --email ops@example.com` +
        ` (or start serve with --demo once for a demo reseller with ${centsToUsd(DEMO_CREDIT_CENTS).toFixed(2)} USD of credit)`
    )
  }
  const { urls } = running
  process.stdout.write(`CertDesk reseller API v3.0 listening on ${urls.api}\n`)
  if (urls.acmeDirectory) process.stdout.write(`CertDesk ACME directory at ${urls.acmeDirectory}\n`)
  if (urls.dnsResponder) process.stdout.write(`CertDesk DNS responder for the delegated zone on ${urls.dnsResponder}\n`)
  if (urls.browserLogin) process.stdout.write(`CertDesk desktop UI (browser mode), open once: ${urls.browserLogin}\n`)
  if (urls.adminUi) process.stdout.write(`CertDesk admin UI (sign in with an admin account) at ${urls.adminUi}\n`)
  if (urls.publicUrl) process.stdout.write(`CertDesk public base URL ${urls.publicUrl}\n`)
  if (urls.publicListener)
    process.stdout.write(`CertDesk public listener (TLS) on ${urls.publicListener} for ${urls.publicUrl}\n`)
  if (urls.publicLogin)
    process.stdout.write(`CertDesk desktop UI by the public name (same one-time link): ${urls.publicLogin}\n`)
  if (urls.publicAdminUi)
    process.stdout.write(
      `CertDesk admin UI by the public name (sign in with an admin account) at ${urls.publicAdminUi}\n`
    )
  if (urls.publicRootSha256)
    process.stdout.write(
      `CertDesk root SHA-256 (the desktop app and the set-up commands pin it to trust this server): ${urls.publicRootSha256}\n`
    )
  if ((urls.adminUi || urls.publicAdminUi) && !(await running.service.admins.accounts.any()))
    say(
      `no admin account yet: add the first owner with: certdesk admin ${where} admins add --name NAME --role owner (the password is asked for, or read from stdin)`
    )
  // SIGHUP: the listeners' certificates read or issued again; new connections get them.
  const onHangUp = (): void => {
    void running.reloadTls().then(() => say('TLS certificates reloaded'))
  }
  process.on('SIGHUP', onHangUp)
  await stopped
  process.off('SIGHUP', onHangUp)
  await running.stop()
  say('stopped')
  return 0
}
