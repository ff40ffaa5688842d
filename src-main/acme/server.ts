/**
 * The embedded ACME server (RFC 8555) for ACME subscription products, with External Account
 * Binding required (§7.3.4) and ACME Renewal Information (RFC 9773). It listens on its own
 * HTTPS port on loopback, with a certificate from the CertDesk CA, because ACME clients
 * refuse a plain-HTTP directory. This file is the protocol: it checks nonces and signatures,
 * routes, calls the core (src-main/core/acme-server) for every account, order, authorization,
 * challenge and certificate, and presents the answer.
 */
import Fastify, { type FastifyRequest } from 'fastify'
import type { JWK } from 'jose'
import { AcmeError, type AcmeAccount } from '../core/acme-server'
import { ACME_DIRECTORY_URL_SETTING, DEFAULT_ACME_PORT } from '../core/acme-subscriptions'
import { DCV_SETTINGS } from '../core/dcv'
import { ServiceError } from '../core/errors'
import { storageFault } from '../core/store-faults'
import type { Service } from '../core/service'
import { hostName, isLoopbackName } from '../common/host-header'
import { parseJws, publicJwk, spkiSha256, thumbprint, verifyEab, verifyWith, type ParsedJws } from './jws'
import { AccountKeys } from './account-keys'
import { listenerKeyAndCsr } from './listener-key'
import { presenters, rfc3339 } from './present'
import { AcmeProblem } from './problem'

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

export { DEFAULT_ACME_PORT }
export const ACME_PREFIX = '/acme'

/** RFC 9773 §4.2: how long a client should wait before asking again, in seconds. */
const ARI_RETRY_AFTER = 6 * 3600

export interface AcmeServerOptions {
  host?: string
  port?: number
  logger?: boolean
  /**
   * The base URL clients reach the server by when that is not this listener itself: a balancer
   * in front of several nodes (docs/team-server.md). Every URL the server hands out, and the
   * JWS `url` each request must sign (§6.4), is built on it, so all nodes behind one balancer
   * answer alike. `https://localhost:<port>` of this listener otherwise.
   */
  baseUrl?: string
}

/**
 * A balancer's base URL as the ACME server takes it: https (§6.1) by `localhost`, the one name
 * the listener's certificate has and a loopback name the Host check accepts, a port, and no
 * path, query or credentials.
 */
export function balancerBase(raw: string): string {
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    throw new Error(`could not use ${JSON.stringify(raw)} as the ACME base URL: it is not a URL`)
  }
  if (u.protocol !== 'https:' || u.hostname !== 'localhost' || u.username || u.password || u.search || u.hash) {
    throw new Error(
      `could not use ${JSON.stringify(raw)} as the ACME base URL: it must be https://localhost:<port>, with nothing after the port`
    )
  }
  if (u.pathname !== '/' && u.pathname !== '')
    throw new Error(`could not use ${JSON.stringify(raw)} as the ACME base URL: it must not have a path`)
  return `https://${u.host}`
}

export interface RunningAcmeServer {
  directoryUrl: string
  baseUrl: string
  port: number
  rootPem: string
  /** Waits for challenge checks in flight (tests read the outcome right after). */
  idle(): Promise<void>
  close(): Promise<void>
}

/** The RFC 8555 §6.7 problem a failed request is answered with. */
function problemOf(err: Error & { statusCode?: number }): AcmeProblem | null {
  if (err instanceof AcmeProblem) return err
  if (err instanceof AcmeError) return AcmeProblem.of(err)
  // A locked store or a full disk passes: 503, and the handler adds when to come back
  // (RFC 8555 §6.7 lets a server answer any HTTP error; RFC 9110 §15.6.4, Retry-After).
  const fault = storageFault(err)
  if (fault) return new AcmeProblem('serverInternal', fault.message, {}, 503)
  if (err instanceof ServiceError) {
    return new AcmeProblem(
      err.kind === 'forbidden' ? 'rejectedIdentifier' : err.kind === 'invalid' ? 'malformed' : 'serverInternal',
      err.message
    )
  }
  if (err.statusCode && err.statusCode < 500) return new AcmeProblem('malformed', err.message, {}, err.statusCode)
  return null
}

/** A JWS payload as the JSON object every non-empty ACME request carries (§7); {} for POST-as-GET. */
function json(payload: string): Record<string, unknown> {
  if (payload === '') return {}
  try {
    const v = JSON.parse(payload)
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>
  } catch {
    // fall through
  }
  throw new AcmeProblem('malformed', 'the JWS payload must be a JSON object')
}

export async function startAcmeServer(service: Service, opts: AcmeServerOptions = {}): Promise<RunningAcmeServer> {
  const core = service.acmeServer
  const host = opts.host ?? '127.0.0.1'

  // The listener's own TLS certificate, from the same CA the clients are told to trust. It
  // names `localhost` (the local CA signs DNS names only), and the URLs use that name.
  const tlsKey = await listenerKeyAndCsr(['localhost'])
  const tlsChain = await core.listenerCertificate(tlsKey.csrDer, ['localhost'])
  const rootPem = await core.rootPem()
  const nonces = await core.openNonces()
  const givenBase = opts.baseUrl === undefined ? null : balancerBase(opts.baseUrl)

  const app = Fastify({
    logger: opts.logger ?? false,
    https: { key: tlsKey.keyPem, cert: tlsChain },
    bodyLimit: 64 * 1024,
    forceCloseConnections: true
  })
  app.addContentTypeParser('application/jose+json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, JSON.parse(body as string))
    } catch {
      done(new AcmeProblem('malformed', 'the request body is not valid JSON'), undefined)
    }
  })

  let base = ''
  const url = (path: string): string => `${base}${ACME_PREFIX}${path}`
  const present = presenters(url)
  const inflight = new Set<Promise<void>>()
  const accountKeys = new AccountKeys()

  app.addHook('onRequest', async (request, reply) => {
    const h = hostName(request.headers.host)
    if (!h || !isLoopbackName(h)) {
      throw new AcmeProblem('unauthorized', 'request refused: the Host header is not a loopback name')
    }
    // §6.5: every response carries a fresh nonce; §7.1: and a link to the directory.
    reply.header('replay-nonce', nonces.issue())
    reply.header('link', `<${url('/directory')}>;rel="index"`)
    reply.header('cache-control', 'no-store')
  })

  app.setErrorHandler((err: Error & { statusCode?: number }, request, reply) => {
    let problem = problemOf(err)
    if (!problem) {
      request.log.error({ err: { message: err.message, stack: err.stack } }, 'acme request failed')
      problem = new AcmeProblem('serverInternal', 'internal server error; see the CertDesk log')
    }
    if (problem.status === 503) reply.header('retry-after', String(storageFault(err)?.retryAfterSeconds ?? 5))
    return reply.code(problem.status).type('application/problem+json').send(problem.toJSON())
  })
  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .type('application/problem+json')
      .send(new AcmeProblem('malformed', `no such ACME resource: ${request.method} ${request.url}`, {}, 404).toJSON())
  })

  // ---- requests -------------------------------------------------------------------------

  const accountIdOf = (kid: string): number | null => {
    const prefix = url('/acct/')
    if (!kid.startsWith(prefix)) return null
    const id = Number(kid.slice(prefix.length))
    return Number.isInteger(id) ? id : null
  }

  /** §6.2-6.4: checks the nonce and the URL, finds the key, verifies the signature. */
  async function authenticate(
    request: FastifyRequest,
    mode: 'kid' | 'jwk' | 'either'
  ): Promise<{ parsed: ParsedJws; payload: string; acct: AcmeAccount | null }> {
    const parsed = parseJws(request.body)
    const { header } = parsed
    if (!header.nonce || !(await nonces.consume(header.nonce)))
      throw new AcmeProblem('badNonce', 'the nonce is unknown or was already used')
    const expectedUrl = `${base}${request.url}`
    if (header.url !== expectedUrl)
      throw new AcmeProblem('unauthorized', `the JWS url ${String(header.url)} is not the request URL ${expectedUrl}`)
    if (header.jwk) {
      if (mode === 'kid') throw new AcmeProblem('malformed', 'this request must be signed with the account key (kid)')
      const payload = await verifyWith(parsed, header.jwk)
      return { parsed, payload, acct: null }
    }
    if (mode === 'jwk') throw new AcmeProblem('malformed', 'this request must carry the public key (jwk)')
    const id = accountIdOf(header.kid as string)
    const acct = id === null ? null : await core.accounts.get(id)
    if (!acct) throw new AcmeProblem('accountDoesNotExist', 'no account has this URL')
    const payload = await verifyWith(parsed, acct.jwk as JWK, accountKeys.keyOf(acct))
    if (acct.status !== 'valid') throw new AcmeProblem('unauthorized', `the account is ${acct.status}`)
    return { parsed, payload, acct }
  }

  /** A request signed with an account key (`kid`): the account and the verified payload. */
  async function byAccount(request: FastifyRequest): Promise<{ acct: AcmeAccount; payload: string }> {
    const { acct, payload } = await authenticate(request, 'kid')
    return { acct: acct as AcmeAccount, payload }
  }

  // ---- routes -----------------------------------------------------------------------------

  app.get(`${ACME_PREFIX}/directory`, async () => ({
    newNonce: url('/new-nonce'),
    newAccount: url('/new-account'),
    newOrder: url('/new-order'),
    revokeCert: url('/revoke-cert'),
    keyChange: url('/key-change'),
    renewalInfo: url('/renewal-info'),
    meta: {
      externalAccountRequired: true,
      website: 'https://certdesk.local/acme'
    }
  }))

  // §7.2: HEAD answers 200, GET 204; both carry the nonce set by the hook.
  app.route({
    method: ['GET', 'HEAD'],
    url: `${ACME_PREFIX}/new-nonce`,
    exposeHeadRoute: false,
    handler: async (request, reply) => reply.code(request.method === 'HEAD' ? 200 : 204).send()
  })

  app.post(`${ACME_PREFIX}/new-account`, async (request, reply) => {
    const { parsed, payload } = await authenticate(request, 'jwk')
    const body = json(payload)
    const jwk = publicJwk(parsed.header.jwk as JWK)
    const tp = await thumbprint(jwk)
    const existing = await core.accounts.byThumbprint(tp)
    if (existing) {
      // §7.3.1: an existing key returns its account, whatever else the request says.
      return reply.code(200).header('location', present.accountUrl(existing)).send(present.accountJson(existing))
    }
    if (body.onlyReturnExisting === true) throw new AcmeProblem('accountDoesNotExist', 'no account exists for this key')
    if (!body.externalAccountBinding) {
      throw new AcmeProblem(
        'externalAccountRequired',
        'this server requires External Account Binding: use the eab_kid and eab_hmac_key of your subscription (GET /orders/{id}/acme)'
      )
    }
    const kid = await verifyEab(body.externalAccountBinding, jwk, url('/new-account'), (k) =>
      core.accounts.eabHmacKey(k)
    )
    const created = await core.accounts.create({ eabKid: kid, jwk, thumbprint: tp, contact: body.contact })
    return reply.code(201).header('location', present.accountUrl(created)).send(present.accountJson(created))
  })

  app.post<{ Params: { id: string } }>(`${ACME_PREFIX}/acct/:id`, async (request, reply) => {
    const { acct, payload } = await byAccount(request)
    if (String(acct.id) !== request.params.id)
      throw new AcmeProblem('unauthorized', 'the account URL does not match the signing key')
    const body = json(payload)
    const updated = await core.accounts.update(acct, { contact: body.contact, status: body.status })
    return reply.header('location', present.accountUrl(updated)).send(present.accountJson(updated))
  })

  app.post<{ Params: { id: string } }>(`${ACME_PREFIX}/acct/:id/orders`, async (request) => {
    const { acct } = await byAccount(request)
    if (String(acct.id) !== request.params.id)
      throw new AcmeProblem('unauthorized', 'the account URL does not match the signing key')
    return { orders: (await core.orders.listOpen(acct)).map((id) => url(`/order/${id}`)) }
  })

  app.post(`${ACME_PREFIX}/new-order`, async (request, reply) => {
    const { acct, payload } = await byAccount(request)
    const body = json(payload)
    if (!Array.isArray(body.identifiers) || body.identifiers.length === 0)
      throw new AcmeProblem('malformed', 'identifiers must be a non-empty array')
    if (body.notBefore !== undefined || body.notAfter !== undefined) {
      throw new AcmeProblem(
        'malformed',
        'notBefore and notAfter are not supported: the lifetime follows the CA/Browser Forum maximum and the subscription'
      )
    }
    const values: string[] = []
    for (const id of body.identifiers as { type?: unknown; value?: unknown }[]) {
      if (id?.type !== 'dns' || typeof id.value !== 'string') {
        throw new AcmeProblem('unsupportedIdentifier', 'only dns identifiers are supported')
      }
      values.push(id.value)
    }
    const o = await core.orders.create(acct, values, body.replaces === undefined ? undefined : String(body.replaces))
    return reply.code(201).header('location', present.orderUrl(o)).send(present.orderJson(o))
  })

  app.post<{ Params: { id: string } }>(`${ACME_PREFIX}/order/:id`, async (request, reply) => {
    const { acct } = await byAccount(request)
    const o = await core.orders.get(acct, request.params.id)
    return reply.header('location', present.orderUrl(o)).send(present.orderJson(o))
  })

  app.post<{ Params: { id: string } }>(`${ACME_PREFIX}/authz/:id`, async (request) => {
    const { acct, payload } = await byAccount(request)
    const body = json(payload)
    // §7.5.2: a client may deactivate an authorization it holds.
    const z =
      body.status === 'deactivated'
        ? await core.authorizations.deactivate(acct, request.params.id)
        : await core.authorizations.get(acct, request.params.id)
    return present.authzJson(z)
  })

  app.post<{ Params: { id: string } }>(`${ACME_PREFIX}/chall/:id`, async (request, reply) => {
    const { acct, payload } = await byAccount(request)
    // §7.5.1: an empty object asks the server to check; POST-as-GET only reads.
    const r = await core.challenges.respond(acct, request.params.id, payload !== '')
    reply.header('link', `<${present.authorizationUrl(r.authorizationId)}>;rel="up"`)
    if (r.validation) {
      const run = r.validation.finally(() => inflight.delete(run))
      inflight.add(run)
    }
    // §8.2: tell the client when to look again; checks here take about a second, and clients
    // that default to 5 s (lego) would otherwise wait for nothing.
    if (r.challenge.status === 'processing') reply.header('retry-after', '1')
    return present.challengeJson(r.challenge)
  })

  app.post<{ Params: { id: string } }>(`${ACME_PREFIX}/order/:id/finalize`, async (request, reply) => {
    const { acct, payload } = await byAccount(request)
    const body = json(payload)
    const done = await core.finalizer.finalize(acct, request.params.id, { csr: body.csr })
    return reply.header('location', present.orderUrl(done)).send(present.orderJson(done))
  })

  app.post<{ Params: { id: string } }>(`${ACME_PREFIX}/cert/:id`, async (request, reply) => {
    const { acct } = await byAccount(request)
    const chain = await core.certificates.chain(acct, request.params.id)
    // §7.4.2: the leaf followed by the chain, one PEM file.
    return reply.type('application/pem-certificate-chain').send(chain)
  })

  app.post(`${ACME_PREFIX}/revoke-cert`, async (request, reply) => {
    const { parsed, payload, acct } = await authenticate(request, 'either')
    const body = json(payload)
    // §7.6: signed by the account that ordered it, or by the certificate key itself.
    await core.certificates.revoke({
      certificate: body.certificate,
      reason: body.reason,
      by: acct ? { account: acct } : { keySpkiSha256: () => spkiSha256(parsed.header.jwk as JWK, parsed.header.alg) }
    })
    return reply.code(200).send()
  })

  app.post(`${ACME_PREFIX}/key-change`, async (request, reply) => {
    const { acct: a, payload } = await byAccount(request)
    // §7.3.5: the payload is a JWS signed by the new key, over { account, oldKey }.
    const inner = parseJws(json(payload))
    if (!inner.header.jwk) throw new AcmeProblem('malformed', 'the inner JWS must carry the new key as jwk')
    if (inner.header.nonce !== undefined) throw new AcmeProblem('malformed', 'the inner JWS must not carry a nonce')
    if (inner.header.url !== `${base}${request.url}`)
      throw new AcmeProblem('malformed', 'the inner JWS url must be the keyChange URL')
    const innerBody = json(await verifyWith(inner, inner.header.jwk))
    if (innerBody.account !== present.accountUrl(a))
      throw new AcmeProblem('malformed', 'the inner payload names another account')
    if (!innerBody.oldKey || (await thumbprint(innerBody.oldKey as JWK)) !== a.thumbprint) {
      throw new AcmeProblem('malformed', 'oldKey is not the current account key')
    }
    const newJwk = publicJwk(inner.header.jwk)
    const change = await core.accounts.changeKey(a, newJwk, await thumbprint(newJwk))
    // §7.3.5: from now on only the new key signs for this account.
    accountKeys.drop(a.id)
    if ('takenBy' in change) {
      return reply
        .code(409)
        .header('location', present.accountUrl({ id: change.takenBy }))
        .type('application/problem+json')
        .send(new AcmeProblem('malformed', 'the new key already belongs to an account', {}, 409).toJSON())
    }
    return reply.header('location', present.accountUrl(a)).send(present.accountJson(change.changed))
  })

  // RFC 9773 §4: unauthenticated GET, so any client (and monitoring) can ask.
  app.get<{ Params: { id: string } }>(`${ACME_PREFIX}/renewal-info/:id`, async (request, reply) => {
    const window = await core.certificates.renewalInfo(request.params.id)
    reply.header('retry-after', String(ARI_RETRY_AFTER))
    return {
      suggestedWindow: { start: rfc3339(window.start), end: rfc3339(window.end) },
      explanationURL: url('/directory')
    }
  })

  await app.listen({ host, port: opts.port ?? DEFAULT_ACME_PORT })
  const addr = app.server.address()
  const port = typeof addr === 'object' && addr ? addr.port : (opts.port ?? DEFAULT_ACME_PORT)
  base = givenBase ?? `https://localhost:${port}`
  await service.settings.set(ACME_SETTINGS.directoryUrl, url('/directory'))
  return {
    directoryUrl: url('/directory'),
    baseUrl: base,
    port,
    rootPem,
    idle: async () => {
      await Promise.all([...inflight])
    },
    close: async () => {
      await Promise.allSettled([...inflight])
      await app.close()
    }
  }
}
