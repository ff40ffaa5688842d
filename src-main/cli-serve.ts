/**
 * `certdesk serve`: CertDesk without Electron (src-main/runtime.ts), its URLs on stdout, and a
 * clean stop on SIGTERM or SIGINT (Ctrl-C) with exit code 0.
 */
import { port, type Values } from './cli-args'
import { centsToUsd } from './core/money'
import { DEMO_CREDIT_CENTS } from './core/service'
import { shellQuote } from './core/shell-quote'
import { DEFAULT_PORT, startCertDesk } from './runtime'

export const SERVE_USAGE = `  certdesk serve [--data-dir D] [--port P] [--host H] [--log-level L] [--acme-port P] [--ui] [--demo]
                 [--accounts]   (a team server: the UI for admins who sign in with their own accounts)`

const say = (line: string): void => {
  process.stderr.write(`certdesk: ${line}\n`)
}

export async function serve(dataDir: string, v: Values): Promise<number> {
  const apiPort = port(v, 'port') ?? DEFAULT_PORT
  const acmePort = port(v, 'acme-port')
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
    host: v.host ?? '127.0.0.1',
    port: apiPort,
    acmePort,
    logLevel: v['log-level'] ?? 'warn',
    demo: v.demo,
    // --ui: the desktop UI in browser mode on the same listener. A new link is printed whenever
    // a browser session has ended (signed out, or idle), so the desktop user can sign in again
    // without a restart; like the first, it goes to stdout only, never to the request log.
    // --accounts: a team server's UI, where admins sign in with their own accounts; no link.
    browserUi: v.accounts
      ? { accounts: true }
      : v.ui
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
    // The data dir is the user's own text: quoted so that the pasted command passes it as one argument.
    say(
      `get its API key with: npx certdesk admin --data-dir ${shellQuote(dataDir)} apikey create --reseller ${demo.id}`
    )
  }
  if (running.noReseller) {
    // A headless serve is for scripts: it makes no reseller of its own (docs/decisions.md, "A new
    // data dir"), so a first start says how to add one. Quoted as above.
    say(
      `this data dir has no reseller yet: add one with: npx certdesk admin --data-dir ${shellQuote(dataDir)} reseller add --name 'My Hosting' --email ops@example.com` +
        ` (or start serve with --demo once for a demo reseller with ${centsToUsd(DEMO_CREDIT_CENTS).toFixed(2)} USD of credit)`
    )
  }
  const { urls } = running
  process.stdout.write(`CertDesk reseller API v3.0 listening on ${urls.api}\n`)
  if (urls.acmeDirectory) process.stdout.write(`CertDesk ACME directory at ${urls.acmeDirectory}\n`)
  if (urls.dnsResponder) process.stdout.write(`CertDesk DNS responder for the delegated zone on ${urls.dnsResponder}\n`)
  if (urls.browserLogin) process.stdout.write(`CertDesk desktop UI (browser mode), open once: ${urls.browserLogin}\n`)
  if (urls.adminUi) {
    process.stdout.write(`CertDesk admin UI (sign in with an admin account) at ${urls.adminUi}\n`)
    if (!running.service.admins.accounts.any())
      say(
        `no admin account yet: add the first owner with: certdesk admin --data-dir ${shellQuote(dataDir)} admins add --name NAME --role owner (the password is asked for, or read from stdin)`
      )
  }
  await stopped
  await running.stop()
  say('stopped')
  return 0
}
