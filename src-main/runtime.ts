/**
 * Starting and stopping CertDesk's long-running pieces, for `certdesk serve` and the Electron
 * window alike: the service over the data dir, the reseller API's listener (with the desktop UI
 * in browser mode when asked), the embedded ACME server, and the scheduler loop with its deploy
 * retries. Both entry points differ only in the options they pass and in what they show.
 */
import { startAcmeServer } from './acme/server'
import { browserUiOptions } from './app/browser-mode'
import { DEFAULT_ACME_PORT } from './core/acme-subscriptions'
import type { Reseller } from './core/resellers'
import { startConfiguredResponder } from './core/delegated-dns-server'
import { startBackgroundWork } from './core/cluster/background'
import { DELEGATED_DNS_SETTINGS } from './core/setting-keys'
import { ensureDemoReseller, openService, type Service } from './core/service'
import { buildServer, listen } from './http/server'

/** The reseller API's port unless `--port` says otherwise (the ACME server's is 7781). */
export const DEFAULT_PORT = 7780

/** Names of this machine that need no `allowedHosts` entry: the Host check accepts them anyway. */
const LOOPBACK_HOSTS = ['127.0.0.1', '::1', 'localhost']

export interface RuntimeLog {
  /** What the scheduler did (one line per pass that changed something) and its failures. */
  info(line: string): void
  /** A piece that could not start while the rest runs on (the ACME server's port taken). */
  error(line: string): void
}

export interface StartOptions {
  dataDir: string
  /** A PostgreSQL URL: the book lives there instead of the data dir's SQLite file. */
  database?: string
  /** better-sqlite3 built for another runtime's ABI (Electron's). */
  nativeBinding?: string
  /** The reseller API's interface: 127.0.0.1 by default; another name is also accepted as Host. */
  host?: string
  /** The reseller API's port: DEFAULT_PORT by default, 0 for a free one. */
  port?: number
  /** The ACME server's port (always on 127.0.0.1): a free one when `port` is 0, else 7781. */
  acmePort?: number
  /**
   * The ACME server's base URL when clients reach it through a balancer in front of several
   * nodes (`https://localhost:<balancer port>`); its own address otherwise.
   */
  acmeBaseUrl?: string
  /** How often a scheduler pass runs (hourly unless said); across all nodes of a shared store. */
  schedulerIntervalMs?: number
  /** The listener's request log level (pino's levels); no request log without it. */
  logLevel?: string
  /** On an empty store, create the demo reseller (`ensureDemoReseller`). */
  demo?: boolean
  /**
   * Serve the desktop UI in browser mode on the same listener. `onNewLink` gets each sign-in
   * link made after the first, once a browser session has ended.
   */
  browserUi?: { onNewLink?: (url: string) => void }
  log: RuntimeLog
}

export interface RunningCertDesk {
  service: Service
  /** The demo reseller when this start created it. */
  demoReseller: Reseller | null
  urls: {
    /** The reseller API's base URL. */
    api: string
    /** The ACME directory, null when the ACME server could not start. */
    acmeDirectory: string | null
    /** `address:port` of the delegated-zone DNS responder, null when not configured or not started. */
    dnsResponder: string | null
    /** The one-time sign-in link of browser mode, null without `browserUi`. */
    browserLogin: string | null
  }
  /**
   * Stops in dependency order and resolves when everything is closed: the scheduler (after the
   * pass in flight) and the deploys it started, the ACME server, the listener, then the store.
   * Calling it again returns the same promise.
   */
  stop(): Promise<void>
}

/**
 * One line when no durable keychain answers at start, else null. CertDesk then starts anyway:
 * everything that needs no new secret (reads, orders of plain products, existing API keys,
 * which are matched by hash) works, and whatever would create a key or keep a secret is refused
 * with 503 until the keychain answers, without a restart.
 */
export function keychainNotice(service: Service): string | null {
  const reason = service.ctx.secrets.unavailableReason?.()
  if (!reason) return null
  return (
    `no durable OS keychain (${reason}): CertDesk serves and reads, but refuses to create keys and keep secrets ` +
    '(the local CA, kept private keys, API keys, ACME subscriptions) until one answers; ' +
    'start or unlock the OS keychain (on Linux: a Secret Service such as gnome-keyring, or --keyring-dir on a headless server)'
  )
}

export async function startCertDesk(opts: StartOptions): Promise<RunningCertDesk> {
  const host = opts.host ?? '127.0.0.1'
  const port = opts.port ?? DEFAULT_PORT
  const acmePort = opts.acmePort ?? (port === 0 ? 0 : DEFAULT_ACME_PORT)
  const service = await openService({
    dataDir: opts.dataDir,
    database: opts.database,
    nativeBinding: opts.nativeBinding
  })
  try {
    const keychain = keychainNotice(service)
    if (keychain) opts.log.error(keychain)
    const demoReseller = opts.demo ? await ensureDemoReseller(service) : null
    let apiUrl = ''
    const ui = opts.browserUi
      ? browserUiOptions(service, () => apiUrl, undefined, { onNewLink: opts.browserUi.onNewLink })
      : null
    const app = await buildServer(service, {
      logger: opts.logLevel === undefined ? false : { level: opts.logLevel },
      allowedHosts: LOOPBACK_HOSTS.includes(host) ? [] : [host],
      ...(ui?.server ?? {})
    })
    const listening = await listen(app, host, port).catch(async (err: unknown) => {
      await app.close()
      throw err
    })
    apiUrl = listening.url
    // Without its ACME server (port taken, keychain locked) the reseller API still serves.
    const acme = await startAcmeServer(service, {
      host: '127.0.0.1',
      port: acmePort,
      baseUrl: opts.acmeBaseUrl
    }).catch((err: unknown) => {
      opts.log.error(`could not start the ACME server on port ${acmePort}: ${(err as Error).message}`)
      return null
    })
    // Delegated DNS validation: the authoritative responder for the zone, when one is configured.
    const listenAt = await service.settings.get(DELEGATED_DNS_SETTINGS.listen)
    const dnsResponder = await startConfiguredResponder(listenAt, service.acmeIssuer.delegation).catch(
      (err: unknown) => {
        opts.log.error(`could not start the DNS responder on ${listenAt}: ${(err as Error).message}`)
        return null
      }
    )
    // The scheduler runs a pass at once (catching up on reissues that fell due while CertDesk
    // was closed or the machine slept), then hourly, and retries due deploys every minute; orders
    // due an installation check are checked each minute. On a store several nodes share, one
    // node at a time does all of it (core/cluster/background.ts).
    const background = startBackgroundWork(
      {
        ctx: service.ctx,
        scheduler: service.scheduler,
        installations: service.installations
      },
      { passIntervalMs: opts.schedulerIntervalMs, info: opts.log.info, error: opts.log.error }
    )

    let stopping: Promise<void> | null = null
    const stop = async (): Promise<void> => {
      await background.stop()
      await acme?.close()
      await dnsResponder?.close()
      await listening.close()
      // A request answered just before the listener closed may have stored a certificate and
      // started its deploys: they finish before the store closes under them.
      await service.deploys.idle()
      await service.close()
    }
    return {
      service,
      demoReseller,
      urls: {
        api: listening.url,
        acmeDirectory: acme?.directoryUrl ?? null,
        dnsResponder: dnsResponder ? `${dnsResponder.host}:${dnsResponder.port}` : null,
        browserLogin: ui ? ui.loginUrl(listening.url) : null
      },
      stop: () => (stopping ??= stop())
    }
  } catch (err) {
    await service.close()
    throw err
  }
}
