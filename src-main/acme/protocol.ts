/**
 * The embedded ACME server's protocol for ACME subscription products (RFC 8555, with External
 * Account Binding required, §7.3.4, and ACME Renewal Information, RFC 9773) as one fastify
 * plugin under `/acme`, so the same routes serve on the loopback HTTPS listener (server.ts) and
 * on the public listener (../public-listener.ts). Each listener says which base URL clients name
 * it by and which Host names it answers to. This file checks nonces and signatures, routes,
 * calls the core (src-main/core/acme-server) for every account, order, authorization, challenge
 * and certificate, and presents the answer.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { JWK } from 'jose'
import { AcmeError, type AcmeAccount } from '../core/acme-server'
import { ServiceError } from '../core/errors'
import { storageFault } from '../core/store/store-faults'
import type { Service } from '../core/service'
import { hostName } from '../common/host-header'
import { parseJws, publicJwk, spkiSha256, thumbprint, verifyEab, verifyWith, type ParsedJws } from './jws'
import { AccountKeys } from './account-keys'
import { presenters, rfc3339 } from './present'
import { AcmeProblem } from './problem'

export const ACME_PREFIX = '/acme'

/**
 * The largest ACME request body: a JWS around a CSR (§7.4 finalize) or a certificate to revoke
 * (§7.6) is a few kilobytes; 64 KiB leaves room for any key size without letting a client make
 * the server parse and verify megabytes.
 */
export const ACME_BODY_LIMIT = 64 * 1024

/** RFC 9773 §4.2: how long a client should wait before asking again, in seconds. */
const ARI_RETRY_AFTER = 6 * 3600

export interface AcmeProtocolOptions {
  /**
   * The base URL clients reach this listener by (`https://localhost:7781`, or the public base
   * URL): every URL the server hands out, and the JWS `url` every request must sign (§6.4), is
   * built on it. Read per request: a loopback listener on port 0 learns its port once listening.
   */
  base: () => string
  /** Whether a Host header's name is one this listener answers to (DNS rebinding, a wrong name). */
  acceptsHost: (name: string) => boolean
  /** The problem's detail for a refused Host header. */
  hostRefusal: string
}

export interface AcmeProtocol {
  /** Adds the routes under ACME_PREFIX to `app`, in a context of their own (hooks, errors, 404s). */
  register(app: FastifyInstance): Promise<void>
  /** Waits for challenge checks in flight (tests read the outcome right after). */
  idle(): Promise<void>
}

/** The RFC 8555 §6.7 problem a failed request is answered with. */
function problemOf(err: Error & { statusCode?: number; code?: string }): AcmeProblem | null {
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

/** A path no ACME resource has: 404 as an RFC 8555 §6.7 problem, like every other answer of the server. */
export function notFound(request: FastifyRequest, reply: FastifyReply): void {
  reply
    .code(404)
    .type('application/problem+json')
    .send(new AcmeProblem('malformed', `no such ACME resource: ${request.method} ${request.url}`, {}, 404).toJSON())
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

export function acmeProtocol(service: Service, opts: AcmeProtocolOptions): AcmeProtocol {
  const core = service.acmeServer
  const inflight = new Set<Promise<void>>()

  const plugin = async (app: FastifyInstance): Promise<void> => {
    app.addHook('onRoute', (route) => {
      route.bodyLimit ??= ACME_BODY_LIMIT
    })
    app.addContentTypeParser('application/jose+json', { parseAs: 'string' }, (_req, body, done) => {
      try {
        done(null, JSON.parse(body as string))
      } catch {
        done(new AcmeProblem('malformed', 'the request body is not valid JSON'), undefined)
      }
    })

    const url = (path: string): string => `${opts.base()}${ACME_PREFIX}${path}`
    const present = presenters(url)
    // One book for every listener of this node, shared with the other nodes of a shared store
    // (core/acme-server/nonces.ts): a nonce from any answer is good once, wherever it is used.
    const nonces = await core.nonces()
    const accountKeys = new AccountKeys()

    app.addHook('onRequest', async (request, reply) => {
      const h = hostName(request.headers.host)
      if (!h || !opts.acceptsHost(h)) throw new AcmeProblem('unauthorized', opts.hostRefusal)
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
    app.setNotFoundHandler(notFound)

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
      const expectedUrl = `${opts.base()}${request.url}`
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

    app.get(`/directory`, async () => ({
      newNonce: url('/new-nonce'),
      newAccount: url('/new-account'),
      newOrder: url('/new-order'),
      revokeCert: url('/revoke-cert'),
      keyChange: url('/key-change'),
      renewalInfo: url('/renewal-info'),
      meta: { externalAccountRequired: true }
    }))

    // §7.2: HEAD answers 200, GET 204; both carry the nonce set by the hook.
    app.route({
      method: ['GET', 'HEAD'],
      url: `/new-nonce`,
      exposeHeadRoute: false,
      handler: async (request, reply) => reply.code(request.method === 'HEAD' ? 200 : 204).send()
    })

    app.post(`/new-account`, async (request, reply) => {
      const { parsed, payload } = await authenticate(request, 'jwk')
      const body = json(payload)
      const jwk = publicJwk(parsed.header.jwk as JWK)
      const tp = await thumbprint(jwk)
      const existing = await core.accounts.byThumbprint(tp)
      if (existing) {
        // §7.3.1: an existing key returns its account, whatever else the request says.
        return reply.code(200).header('location', present.accountUrl(existing)).send(present.accountJson(existing))
      }
      if (body.onlyReturnExisting === true)
        throw new AcmeProblem('accountDoesNotExist', 'no account exists for this key')
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

    app.post<{ Params: { id: string } }>(`/acct/:id`, async (request, reply) => {
      const { acct, payload } = await byAccount(request)
      if (String(acct.id) !== request.params.id)
        throw new AcmeProblem('unauthorized', 'the account URL does not match the signing key')
      const body = json(payload)
      const updated = await core.accounts.update(acct, { contact: body.contact, status: body.status })
      return reply.header('location', present.accountUrl(updated)).send(present.accountJson(updated))
    })

    app.post<{ Params: { id: string } }>(`/acct/:id/orders`, async (request) => {
      const { acct } = await byAccount(request)
      if (String(acct.id) !== request.params.id)
        throw new AcmeProblem('unauthorized', 'the account URL does not match the signing key')
      return { orders: (await core.orders.listOpen(acct)).map((id) => url(`/order/${id}`)) }
    })

    app.post(`/new-order`, async (request, reply) => {
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

    app.post<{ Params: { id: string } }>(`/order/:id`, async (request, reply) => {
      const { acct } = await byAccount(request)
      const o = await core.orders.get(acct, request.params.id)
      return reply.header('location', present.orderUrl(o)).send(present.orderJson(o))
    })

    app.post<{ Params: { id: string } }>(`/authz/:id`, async (request) => {
      const { acct, payload } = await byAccount(request)
      const body = json(payload)
      // §7.5.2: a client may deactivate an authorization it holds.
      const z =
        body.status === 'deactivated'
          ? await core.authorizations.deactivate(acct, request.params.id)
          : await core.authorizations.get(acct, request.params.id)
      return present.authzJson(z)
    })

    app.post<{ Params: { id: string } }>(`/chall/:id`, async (request, reply) => {
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

    app.post<{ Params: { id: string } }>(`/order/:id/finalize`, async (request, reply) => {
      const { acct, payload } = await byAccount(request)
      const body = json(payload)
      const done = await core.finalizer.finalize(acct, request.params.id, { csr: body.csr })
      return reply.header('location', present.orderUrl(done)).send(present.orderJson(done))
    })

    app.post<{ Params: { id: string } }>(`/cert/:id`, async (request, reply) => {
      const { acct } = await byAccount(request)
      const chain = await core.certificates.chain(acct, request.params.id)
      // §7.4.2: the leaf followed by the chain, one PEM file.
      return reply.type('application/pem-certificate-chain').send(chain)
    })

    app.post(`/revoke-cert`, async (request, reply) => {
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

    app.post(`/key-change`, async (request, reply) => {
      const { acct: a, payload } = await byAccount(request)
      // §7.3.5: the payload is a JWS signed by the new key, over { account, oldKey }.
      const inner = parseJws(json(payload))
      if (!inner.header.jwk) throw new AcmeProblem('malformed', 'the inner JWS must carry the new key as jwk')
      if (inner.header.nonce !== undefined) throw new AcmeProblem('malformed', 'the inner JWS must not carry a nonce')
      if (inner.header.url !== `${opts.base()}${request.url}`)
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
    app.get<{ Params: { id: string } }>(`/renewal-info/:id`, async (request, reply) => {
      const window = await core.certificates.renewalInfo(request.params.id)
      reply.header('retry-after', String(ARI_RETRY_AFTER))
      return {
        suggestedWindow: { start: rfc3339(window.start), end: rfc3339(window.end) },
        explanationURL: url('/directory')
      }
    })
  }

  return {
    register: async (app) => {
      await app.register(plugin, { prefix: ACME_PREFIX })
    },
    idle: async () => {
      await Promise.allSettled([...inflight])
    }
  }
}
