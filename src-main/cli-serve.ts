/**
 * `certdesk serve`: CertDesk without Electron (src-main/runtime.ts), its URLs on stdout, and a
 * clean stop on SIGTERM or SIGINT (Ctrl-C) with exit code 0.
 */
import { balancerBase } from './acme/server'
import { databaseOf, port, UsageError, type Values } from './cli-args'
import { centsToUsd } from './core/money'
import { shellQuote } from './core/shell-quote'
import { DEFAULT_PORT, startCertDesk } from './runtime'

export const SERVE_USAGE =
  '  certdesk serve [--data-dir D] [--database postgres://…] [--port P] [--host H] [--log-level L] [--acme-port P]\n' +
  '                [--acme-url https://localhost:P] [--scheduler-interval SECONDS] [--ui] [--demo]'

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

/** --acme-url, checked before anything starts. */
function acmeUrl(v: Values): string | undefined {
  const s = v['acme-url']
  if (s === undefined) return undefined
  try {
    return balancerBase(s)
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}

export async function serve(dataDir: string, v: Values): Promise<number> {
  const apiPort = port(v, 'port') ?? DEFAULT_PORT
  const acmePort = port(v, 'acme-port')
  const acmeBaseUrl = acmeUrl(v)
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
    host: v.host ?? '127.0.0.1',
    port: apiPort,
    acmePort,
    acmeBaseUrl,
    schedulerIntervalMs,
    logLevel: v['log-level'] ?? 'warn',
    demo: v.demo,
    // --ui: the desktop UI in browser mode on the same listener. A new link is printed whenever
    // a browser session has ended (signed out, or idle), so the desktop user can sign in again
    // without a restart; like the first, it goes to stdout only, never to the request log.
    browserUi: v.ui
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
  const demo = running.demoReseller
  if (demo) {
    say(`created demo reseller ${demo.id} (${demo.name}) with ${centsToUsd(demo.creditBalance).toFixed(2)} USD credit.`)
    // The data dir is the user's own text: quoted so that the pasted command passes it as one
    // argument. A database URL may hold a password, which is never printed.
    const where = databaseOf(v) === undefined ? `--data-dir ${shellQuote(dataDir)}` : '--database <the same URL>'
    say(`get its API key with: npx certdesk admin ${where} apikey create --reseller ${demo.id}`)
  }
  const { urls } = running
  process.stdout.write(`CertDesk reseller API v3.0 listening on ${urls.api}\n`)
  if (urls.acmeDirectory) process.stdout.write(`CertDesk ACME directory at ${urls.acmeDirectory}\n`)
  if (urls.dnsResponder) process.stdout.write(`CertDesk DNS responder for the delegated zone on ${urls.dnsResponder}\n`)
  if (urls.browserLogin) process.stdout.write(`CertDesk desktop UI (browser mode), open once: ${urls.browserLogin}\n`)
  await stopped
  await running.stop()
  say('stopped')
  return 0
}
