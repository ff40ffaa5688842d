/**
 * The embedded ACME server on its own HTTPS port on loopback (7781), for ACME clients on this
 * machine. It presents a certificate from the CertDesk CA for `localhost`, because ACME clients
 * refuse a plain-HTTP directory (RFC 8555 §6.1), renewed at two thirds of its life while it
 * runs. The protocol itself is protocol.ts, which the public listener serves as well.
 */
import Fastify from 'fastify'
import { ACME_DIRECTORY_URL_SETTING, DEFAULT_ACME_PORT } from '../core/acme-server/acme-subscriptions'
import { DCV_SETTINGS } from '../core/dcv/dcv'
import type { Service } from '../core/service'
import { hostName, isLoopbackName } from '../common/host-header'
import { TlsIdentity, type TlsPairInfo } from '../common/tls-identity'
import { issuedPair } from './listener-key'
import { AcmeProblem } from './problem'
import { ACME_PREFIX, acmeProtocol, notFound } from './protocol'

/**
 * Settings keys (SQLite `settings`) the ACME server reads; none is a secret. Challenges are
 * checked through the same resolver and HTTP port as the order DCV checks (`dcv.dns_resolver`,
 * `dcv.http_port`): both are "how this machine reaches a domain".
 */
export const ACME_SETTINGS = {
  /** The directory URL of the running server, written at start for GET /orders/{id}/acme. */
  directoryUrl: ACME_DIRECTORY_URL_SETTING,
  /** `host:port` of the DNS server challenges are checked against (default: the system resolver). */
  resolver: DCV_SETTINGS.resolver,
  /** Port http-01 connects to (default 80, RFC 8555 §8.3). */
  http01Port: DCV_SETTINGS.httpPort,
  /** `true` lets http-01 reach loopback and private addresses (a lab); refused otherwise. */
  allowPrivateAddresses: DCV_SETTINGS.allowPrivateAddresses
} as const

export { DEFAULT_ACME_PORT, ACME_PREFIX }

const LOOPBACK_REFUSAL = 'request refused: the Host header is not a loopback name'

export interface AcmeServerOptions {
  host?: string
  port?: number
  logger?: boolean
  /** Told why a renewal of the listener certificate failed (the one in force stays). */
  onError?: (message: string) => void
}

export interface RunningAcmeServer {
  directoryUrl: string
  baseUrl: string
  port: number
  rootPem: string
  /** The listener certificate in force. */
  tls(): TlsPairInfo | null
  /** Issues the listener certificate again now (SIGHUP); true when a new one is in force. */
  reloadTls(): Promise<boolean>
  /** Waits for challenge checks in flight (tests read the outcome right after). */
  idle(): Promise<void>
  close(): Promise<void>
}

export async function startAcmeServer(service: Service, opts: AcmeServerOptions = {}): Promise<RunningAcmeServer> {
  const host = opts.host ?? '127.0.0.1'
  // The listener's own certificate, from the same CA the clients are told to trust. It names
  // `localhost` (the local CA signs DNS names only), and the URLs use that name.
  const identity = new TlsIdentity({
    kind: 'issued',
    host: 'localhost',
    source: 'the loopback ACME server (issued by the CertDesk CA)',
    load: issuedPair(service, ['localhost']),
    // Connections from now on get the new pair; open ones keep theirs.
    onChange: (pair) => app.server.setSecureContext(pair),
    onError: opts.onError
  })
  const first = await identity.start()
  const rootPem = await service.acmeServer.rootPem()

  let base = ''
  const protocol = acmeProtocol(service, {
    base: () => base,
    acceptsHost: isLoopbackName,
    hostRefusal: LOOPBACK_REFUSAL
  })
  const app = Fastify({
    logger: opts.logger ?? false,
    https: first,
    forceCloseConnections: true
  })
  // Outside /acme nothing is served; the answer is a problem document like every other here.
  app.addHook('onRequest', async (request) => {
    const h = hostName(request.headers.host)
    if (!h || !isLoopbackName(h)) throw new AcmeProblem('unauthorized', LOOPBACK_REFUSAL)
  })
  app.setErrorHandler((err: Error, _request, reply) => {
    const problem = err instanceof AcmeProblem ? err : new AcmeProblem('malformed', err.message, {}, 400)
    return reply.code(problem.status).type('application/problem+json').send(problem.toJSON())
  })
  app.setNotFoundHandler(notFound)
  await protocol.register(app)

  await app.listen({ host, port: opts.port ?? DEFAULT_ACME_PORT }).catch((err: unknown) => {
    identity.close()
    throw err
  })
  const addr = app.server.address()
  const port = typeof addr === 'object' && addr ? addr.port : (opts.port ?? DEFAULT_ACME_PORT)
  base = `https://localhost:${port}`
  const directoryUrl = `${base}${ACME_PREFIX}/directory`
  await service.settings.set(ACME_SETTINGS.directoryUrl, directoryUrl)
  return {
    directoryUrl,
    baseUrl: base,
    port,
    rootPem,
    tls: () => identity.currentInfo,
    reloadTls: () => identity.reload(),
    idle: () => protocol.idle(),
    close: async () => {
      identity.close()
      await protocol.idle()
      await app.close()
    }
  }
}
