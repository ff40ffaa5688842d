/**
 * The public listener: what customers and their tools reach over the network, by the public
 * base URL's name, over TLS. It serves the ACME server (acme/protocol.ts, under `/acme`), the
 * pages a customer opens without a key (the root certificate, the auto-install set-up page),
 * the reseller API when asked (`--public-api`), and the desktop UI with its RPC only when asked
 * (`--public-ui`), behind the same browser session as on loopback. Everything else the loopback
 * listeners serve stays there.
 *
 * Compared with the loopback listeners it answers only to the public name (the Host check has no
 * loopback names), limits requests and connections per client address, and gives up on a client
 * that is slow to finish its TLS handshake or its request headers, because anyone can connect.
 */
import { createHash, X509Certificate } from 'node:crypto'
import type { Server as HttpServer } from 'node:http'
import type { Socket } from 'node:net'
import type { Server as TlsServer } from 'node:tls'
import { ACME_PREFIX, acmeProtocol } from './acme/protocol'
import { AcmeProblem } from './acme/problem'
import { issuedPair } from './acme/listener-key'
import { isBrowserUiRequest } from './app/browser-ui'
import { filePair, TlsIdentity, type TlsPair, type TlsPairInfo } from './common/tls-identity'
import { PUBLIC_LISTENER_SETTINGS, type PublicUrl } from './core/public-url'
import type { Service } from './core/service'
import { envelopeRefusal, type Refusal } from './http/auth'
import type { RateLimit } from './http/rate-limit'
import { ROOT_CA_PATH, SETUP_PREFIX } from './http/routes/acme'
import { buildServer, type ServerOptions } from './http/server'

/**
 * Requests per second and burst per client address. certbot's whole issuance is about fifteen
 * requests and a reseller script's poll a few a second; an address sending more than this for
 * long is a flood. Behind a TCP balancer every client has the balancer's address: raise it there.
 */
export const DEFAULT_PUBLIC_RATE: RateLimit = { perSecond: 50, burst: 200 }

/**
 * Connection limits. A TLS handshake not finished in 10 s and request headers not complete in
 * 20 s are a client holding a socket open on purpose (slowloris), not a slow network; 64 open
 * connections from one address are far more than a browser (6 per host) or an ACME client uses.
 */
export const PUBLIC_LIMITS = {
  handshakeMs: 10_000,
  headersMs: 20_000,
  requestMs: 60_000,
  keepAliveMs: 30_000,
  perAddress: 64,
  total: 4096
} as const

export interface PublicListenerOptions {
  publicUrl: PublicUrl
  /** The interface and port to listen on (`0.0.0.0:443`, an address, port 0 for a free one in tests). */
  host: string
  port: number
  /** Given files (hot-reloaded when they change); the CertDesk CA issues the certificate without them. */
  tlsFiles: { cert: string; key: string } | null
  /** Serve the reseller API here too. */
  resellerApi: boolean
  /** The desktop UI and RPC, when they are to be served here too (`--public-ui`). */
  ui: Pick<ServerOptions, 'extend' | 'ownAuth'> | null
  /** Per-address request limit; null turns it off. */
  rateLimit: RateLimit | null
  logger?: ServerOptions['logger']
  log: { info(line: string): void; error(line: string): void }
}

export interface RunningPublicListener {
  /** The public base URL (what clients use). */
  url: string
  /** `address:port` actually listened on. */
  address: string
  port: number
  tls(): TlsPairInfo | null
  /** Reads the files again or issues anew now; true when a new certificate is in force. */
  reloadTls(): Promise<boolean>
  idle(): Promise<void>
  close(): Promise<void>
}

/**
 * What clients must trust for `pair`: the CertDesk root when the chain ends in it (a certificate
 * of the CertDesk CA; its intermediate is signed by the root), else their system's trust store.
 */
export function clientTrustOf(pair: TlsPair, rootPem: string): 'certdesk-root' | 'system' {
  const root = new X509Certificate(rootPem)
  const chain = pair.cert.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
  const ours = chain.some((pem) => {
    const c = new X509Certificate(pem)
    return c.fingerprint256 === root.fingerprint256 || c.verify(root.publicKey)
  })
  return ours ? 'certdesk-root' : 'system'
}

/** A request of the ACME protocol (not one of the public pages under /acme). */
const isAcmeProtocolPath = (url: string): boolean => {
  const path = url.split('?')[0]
  return path.startsWith(`${ACME_PREFIX}/`) && path !== ROOT_CA_PATH && !path.startsWith(SETUP_PREFIX)
}

/** Refusals before routing: RFC 8555 §6.7 problem documents to ACME clients, the envelope to the rest. */
const refuse: Refusal = (request, reply, status, message) => {
  if (!isAcmeProtocolPath(request.url)) return envelopeRefusal(request, reply, status, message)
  const problem = new AcmeProblem(status === 429 ? 'rateLimited' : 'unauthorized', message, {}, status)
  return reply.code(status).type('application/problem+json').send(problem.toJSON())
}

export async function startPublicListener(
  service: Service,
  opts: PublicListenerOptions
): Promise<RunningPublicListener> {
  const { publicUrl } = opts
  const tlsContext = (pair: TlsPair) => ({ key: pair.key, cert: pair.cert })
  const rootPem = await service.localCa.rootPem()
  // Read by every process that shows the set-up commands (core/acme-server/acme-subscriptions.ts, shownAcmeUrls).
  const recordTrust = async (pair: TlsPair): Promise<void> => {
    await service.settings.set(PUBLIC_LISTENER_SETTINGS.clientTrust, clientTrustOf(pair, rootPem))
    await service.settings.set(PUBLIC_LISTENER_SETTINGS.rootSha256, createHash('sha256').update(rootPem).digest('hex'))
  }
  let put: (pair: TlsPair) => void = () => undefined
  // New connections get the pair at once; what the set-up commands tell clients to trust follows
  // it into the store (a write that fails is said, and the next change writes it again).
  const setContext = (pair: TlsPair): void => {
    put(pair)
    void recordTrust(pair).catch((err: unknown) =>
      opts.log.error(`could not record what clients must trust for the public listener: ${(err as Error).message}`)
    )
  }
  const identity = new TlsIdentity(
    opts.tlsFiles
      ? {
          kind: 'files',
          host: publicUrl.host,
          files: [opts.tlsFiles.cert, opts.tlsFiles.key],
          source: opts.tlsFiles.cert,
          load: filePair(opts.tlsFiles.cert, opts.tlsFiles.key),
          onChange: (pair, info) => {
            setContext(pair)
            opts.log.info(`public listener: now presenting certificate ${info.serial} from ${info.source}`)
          },
          onError: opts.log.error
        }
      : {
          kind: 'issued',
          host: publicUrl.host,
          source: `the CertDesk CA for ${publicUrl.host}`,
          load: issuedPair(service, [publicUrl.host]),
          onChange: (pair, info) => {
            setContext(pair)
            opts.log.info(`public listener: now presenting certificate ${info.serial} issued by the CertDesk CA`)
          },
          onError: opts.log.error
        }
  )
  const first = await identity.start()
  await recordTrust(first)

  const acme = acmeProtocol(service, {
    base: () => publicUrl.base,
    acceptsHost: (name) => name === publicUrl.host,
    hostRefusal: `request refused: the Host header is not ${publicUrl.host}`
  })
  const ui = opts.ui
  let app
  try {
    app = await buildServer(service, {
      logger: opts.logger,
      https: {
        ...tlsContext(first),
        handshakeTimeout: PUBLIC_LIMITS.handshakeMs,
        // Node checks the header and request deadlines on this interval (30 s unless told):
        // once a second, so a slow client is cut close to the deadline, not up to 30 s after it.
        connectionsCheckingInterval: 1000
      },
      loopbackHosts: false,
      allowedHosts: [publicUrl.host],
      refuse,
      rateLimit: opts.rateLimit ?? undefined,
      resellerApi: opts.resellerApi,
      // The ACME protocol authenticates by JWS, the UI (when served) by its session. Without the
      // UI, its paths skip the key check too, so they are a plain 404 here, never a 401 that would
      // say something exists; without the reseller API, no path needs a key at all.
      ownAuth: (request) =>
        !opts.resellerApi ||
        isAcmeProtocolPath(request.url) ||
        (ui ? (ui.ownAuth?.(request) ?? false) : isBrowserUiRequest(request)),
      extend: async (server, router) => {
        await acme.register(server)
        if (ui?.extend) await ui.extend(server, router)
      }
    })
  } catch (err) {
    identity.close()
    throw err
  }
  const server = app.server as unknown as TlsServer & HttpServer
  put = (pair) => server.setSecureContext(tlsContext(pair))
  server.headersTimeout = PUBLIC_LIMITS.headersMs
  server.requestTimeout = PUBLIC_LIMITS.requestMs
  server.keepAliveTimeout = PUBLIC_LIMITS.keepAliveMs
  server.maxConnections = PUBLIC_LIMITS.total
  const perAddress = new Map<string, number>()
  // 'connection' comes with the TCP socket, before the TLS handshake: a flood is cut before it costs one.
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? ''
    const open = (perAddress.get(address) ?? 0) + 1
    if (open > PUBLIC_LIMITS.perAddress) {
      socket.destroy()
      return
    }
    perAddress.set(address, open)
    socket.once('close', () => {
      const left = (perAddress.get(address) ?? 1) - 1
      if (left <= 0) perAddress.delete(address)
      else perAddress.set(address, left)
    })
  })

  try {
    await app.listen({ host: opts.host, port: opts.port })
  } catch (err) {
    identity.close()
    await app.close()
    throw err
  }
  const addr = app.server.address()
  const port = typeof addr === 'object' && addr ? addr.port : opts.port
  return {
    url: publicUrl.base,
    address: `${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`,
    port,
    tls: () => identity.currentInfo,
    reloadTls: () => identity.reload(),
    idle: () => acme.idle(),
    close: async () => {
      identity.close()
      await acme.idle()
      await app.close()
    }
  }
}
