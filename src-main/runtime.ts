/**
 * Starting and stopping CertDesk's long-running pieces, for `certdesk serve` and the Electron
 * window alike: the service over the data dir, the reseller API's listener (with the desktop UI
 * in browser mode when asked), the embedded ACME server, and the scheduler loop with its deploy
 * retries. Both entry points differ only in the options they pass and in what they show.
 */
import { startAcmeServer } from './acme/server'
import { browserUiOptions } from './app/browser-mode'
import { DEFAULT_ACME_PORT } from './core/acme-server/acme-subscriptions'
import type { Reseller } from './core/billing/resellers'
import { startConfiguredResponder } from './core/dcv/delegated-dns-server'
import { startBackgroundWork } from './core/cluster/background'
import { DELEGATED_DNS_SETTINGS } from './core/settings/setting-keys'
import { PUBLIC_LISTENER_SETTINGS, PUBLIC_URL_SETTING, publicUrlOf } from './core/public-url'
import { ensureDemoReseller, openService, type Service } from './core/service'
import { buildServer, listen } from './http/server'
import type { RateLimit } from './http/rate-limit'
import type { SecretSourceSpec } from './core/server-secrets'
import { DEFAULT_PUBLIC_RATE, startPublicListener, type RunningPublicListener } from './public-listener'

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
  /** Where secrets come from: the OS keychain unless a server key source is named (server-secrets/). */
  secretSource?: SecretSourceSpec
  /** The reseller API's interface: 127.0.0.1 by default; another name is also accepted as Host. */
  host?: string
  /** The reseller API's port: DEFAULT_PORT by default, 0 for a free one. */
  port?: number
  /** The ACME server's port (always on 127.0.0.1): a free one when `port` is 0, else 7781. */
  acmePort?: number
  /** How often a scheduler pass runs (hourly unless said); across all nodes of a shared store. */
  schedulerIntervalMs?: number
  /** The listener's request log level (pino's levels); no request log without it. */
  logLevel?: string
  /** On an empty store, create the demo reseller (`ensureDemoReseller`). */
  demo?: boolean
  /**
   * Serve the desktop UI in browser mode on the same listener. `onNewLink` gets each sign-in
   * link made after the first, once a browser session has ended. With `accounts`, admins sign
   * in with their own accounts instead (a team server), and no link is made.
   */
  browserUi?: { onNewLink?: (url: string) => void; accounts?: boolean }
  /** What customers reach over the network (public-listener.ts); docs/team-server.md. */
  public?: PublicOptions
  log: RuntimeLog
}

export interface PublicOptions {
  /**
   * The public base URL, saved as the `public.base_url` setting (so the CLI, the window and every
   * node show it too); the saved one is used when absent.
   */
  url?: string
  /** Where the public listener listens; without it only the shown addresses change. */
  listen?: { host: string; port: number }
  /** The listener's certificate and key as files; the CertDesk CA issues one without them. */
  tlsFiles?: { cert: string; key: string }
  /** Serve the reseller API on the public listener too. */
  resellerApi?: boolean
  /** Serve the desktop UI and RPC on the public listener too (with the browser-mode session). */
  ui?: boolean
  /** Requests per client address on the public listener; null turns the limit off. */
  rateLimit?: RateLimit | null
}

export interface RunningCertDesk {
  service: Service
  /** The demo reseller when this start created it. */
  demoReseller: Reseller | null
  /** True when the store has no reseller at all (a new data dir started without `demo`). */
  noReseller: boolean
  urls: {
    /** The reseller API's base URL. */
    api: string
    /** The ACME directory, null when the ACME server could not start. */
    acmeDirectory: string | null
    /** `address:port` of the delegated-zone DNS responder, null when not configured or not started. */
    dnsResponder: string | null
    /** The one-time sign-in link of browser mode, null without `browserUi` and with accounts. */
    browserLogin: string | null
    /** Where admins sign in with their accounts, null unless `browserUi.accounts`. */
    adminUi: string | null
    /** The public base URL every shown address is built from, null when none is set. */
    publicUrl: string | null
    /** `address:port` the public listener listens on, null when it does not run. */
    publicListener: string | null
    /** The browser-mode sign-in link by the public name, null unless the UI is served there. */
    publicLogin: string | null
    /** Where admins sign in by the public name, null unless the accounts' UI is served there. */
    publicAdminUi: string | null
    /**
     * The SHA-256 of the CertDesk root (its PEM file, as served at /acme/root.pem) when the public
     * listener presents a certificate of the CertDesk CA: what clients pin to trust it. Null otherwise.
     */
    publicRootSha256: string | null
  }
  /**
   * Reads the given certificate files again, or issues the listeners' certificates anew (SIGHUP):
   * new connections get the new certificates, without a restart.
   */
  reloadTls(): Promise<void>
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
    nativeBinding: opts.nativeBinding,
    secretSource: opts.secretSource
  })
  try {
    if (opts.secretSource && opts.secretSource.kind !== 'keychain') {
      // A server's key source is configuration, not a daemon that may come up later: a file
      // refused for its mode or owner stops the start with the reason, before anything listens.
      const refused = service.ctx.secrets.unavailableReason?.()
      if (refused) throw new Error(refused)
    } else {
      const keychain = keychainNotice(service)
      if (keychain) opts.log.error(keychain)
    }
    const demoReseller = opts.demo ? await ensureDemoReseller(service) : null
    const noReseller = demoReseller === null && (await service.resellers.list()).length === 0
    // A refused URL is refused here, with the setting's own message, before anything listens.
    if (opts.public?.url !== undefined) await service.settings.update({ [PUBLIC_URL_SETTING]: opts.public.url })
    const publicUrl = await publicUrlOf(service.settings)
    if (opts.public?.listen && !publicUrl) {
      throw new Error(
        'could not start the public listener: no public base URL; give --public-url https://NAME (or CERTDESK_PUBLIC_URL)'
      )
    }
    let apiUrl = ''
    const wantUi = opts.browserUi ?? (opts.public?.ui ? {} : undefined)
    const accounts = wantUi?.accounts === true
    const told = wantUi?.onNewLink
    // A new sign-in link is told by both names when the UI is served by the public name too.
    const onNewLink = told
      ? (url: string): void => {
          told(url)
          if (opts.public?.ui && publicUrl) told(`${publicUrl.base}${url.slice(apiUrl.length)}`)
        }
      : undefined
    const ui = wantUi
      ? browserUiOptions(service, () => apiUrl, undefined, {
          onNewLink,
          accounts,
          // A team's book goes by the name its admins and customers reach it by.
          bookName: publicUrl ? () => new URL(publicUrl.base).host : undefined
        })
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
    const acme = await startAcmeServer(service, { host: '127.0.0.1', port: acmePort, onError: opts.log.error }).catch(
      (err: unknown) => {
        opts.log.error(`could not start the ACME server on port ${acmePort}: ${(err as Error).message}`)
        return null
      }
    )
    // The public listener is what a team server runs for: when it cannot start, CertDesk does not either.
    let publicListener: RunningPublicListener | null = null
    if (opts.public?.listen && publicUrl) {
      publicListener = await startPublicListener(service, {
        publicUrl,
        host: opts.public.listen.host,
        port: opts.public.listen.port,
        tlsFiles: opts.public.tlsFiles ?? null,
        resellerApi: opts.public.resellerApi ?? false,
        ui: opts.public.ui && ui ? ui.server : null,
        rateLimit: opts.public.rateLimit === undefined ? DEFAULT_PUBLIC_RATE : opts.public.rateLimit,
        logger: opts.logLevel === undefined ? false : { level: opts.logLevel },
        log: opts.log
      }).catch(async (err: unknown) => {
        await acme?.close()
        await listening.close()
        throw new Error(
          `could not start the public listener on ${opts.public?.listen?.host}:${opts.public?.listen?.port}: ${(err as Error).message}`
        )
      })
    }
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
      // The background work first (after the pass in flight), so no pass starts deploys or
      // issues while the listeners close; then what customers reach.
      await background.stop()
      await publicListener?.close()
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
      noReseller,
      urls: {
        api: listening.url,
        acmeDirectory: acme?.directoryUrl ?? null,
        dnsResponder: dnsResponder ? `${dnsResponder.host}:${dnsResponder.port}` : null,
        browserLogin: ui && !accounts ? ui.loginUrl(listening.url) : null,
        adminUi: ui && accounts ? `${listening.url}/ui/` : null,
        publicUrl: publicUrl?.base ?? null,
        publicListener: publicListener?.address ?? null,
        publicLogin: ui && !accounts && publicListener && opts.public?.ui ? ui.loginUrl(publicListener.url) : null,
        publicAdminUi: ui && accounts && publicListener && opts.public?.ui ? `${publicListener.url}/ui/` : null,
        publicRootSha256:
          publicListener && (await service.settings.get(PUBLIC_LISTENER_SETTINGS.clientTrust)) === 'certdesk-root'
            ? await service.settings.get(PUBLIC_LISTENER_SETTINGS.rootSha256)
            : null
      },
      reloadTls: async () => {
        await Promise.all([acme?.reloadTls(), publicListener?.reloadTls()])
      },
      stop: () => (stopping ??= stop())
    }
  } catch (err) {
    await service.close()
    throw err
  }
}
