/**
 * The embedded ACME server (RFC 8555) for ACME subscription products, with External Account
 * Binding required (§7.3.4) and ACME Renewal Information (RFC 9773). It listens on its own
 * HTTPS port on loopback, with a certificate from the CertDesk CA, because ACME clients
 * refuse a plain-HTTP directory. Subscription rules (covered names, lifetimes) come from
 * src-main/core/acme-subscriptions.ts; this file is the protocol.
 */
import { createHash, randomBytes, type JsonWebKey } from 'node:crypto'
import Fastify, { type FastifyRequest } from 'fastify'
import type { JWK } from 'jose'
import { ACME_DIRECTORY_URL_SETTING, DEFAULT_ACME_PORT, type AcmeSubscription } from '../core/acme-subscriptions'
import { assertAcceptableCsr, decodeCsrDer } from '../core/csr'
import { DCV_SETTINGS } from '../core/dcv'
import { ServiceError } from '../core/errors'
import type { Service } from '../core/service'
import { addDays, isoTimestamp } from '../core/time'
import { hostName } from '../http/auth'
import { x509 } from '../core/x509'
import { ariCertId, listenerKeyAndCsr, localCaSigner, type AcmeSigner } from './ca'
import { ChallengeFailure, checkDns01, checkHttp01, type CheckSettings } from '../core/acme-challenges'
import { parseJws, publicJwk, spkiSha256, thumbprint, verifyEab, verifyWith, type ParsedJws } from './jws'
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

/** Orders and authorizations not completed within a week expire (RFC 8555 §7.1.3 leaves it to the server). */
const PENDING_LIFETIME_DAYS = 7
/** RFC 9773 §4.2: how long a client should wait before asking again, in seconds. */
const ARI_RETRY_AFTER = 6 * 3600
const MAX_NONCES = 10_000
/** The listener certificate is made anew at every start; a month outlasts any run. */
const LISTENER_CERT_DAYS = 30

export interface AcmeServerOptions {
  host?: string
  port?: number
  signer?: AcmeSigner
  logger?: boolean
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

interface AccountRow {
  id: number
  subscription_id: number
  thumbprint: string
  jwk: string
  contact: string
  status: 'valid' | 'deactivated' | 'revoked'
  created_at: string
}

interface OrderRow {
  id: number
  public_id: string
  account_id: number
  status: 'pending' | 'ready' | 'processing' | 'valid' | 'invalid'
  identifiers: string
  replaces: string | null
  error: string | null
  expires_at: string
}

interface AuthzRow {
  id: number
  public_id: string
  order_id: number
  identifier: string
  wildcard: number
  status: string
  expires_at: string
}

interface ChallengeRow {
  id: number
  public_id: string
  authz_id: number
  type: 'http-01' | 'dns-01'
  token: string
  status: string
  validated_at: string | null
  error: string | null
}

interface CertRow {
  id: number
  public_id: string
  order_id: number
  account_id: number
  serial_hex: string
  ari_id: string
  spki_sha256: string
  chain_pem: string
  not_before: string
  not_after: string
  replaced_by: number | null
  revoked_at: string | null
}

const pid = (): string => randomBytes(12).toString('base64url')
const rfc3339 = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z')
const tsToDate = (ts: string): Date => new Date(`${ts.replace(' ', 'T')}Z`)

export async function startAcmeServer(service: Service, opts: AcmeServerOptions = {}): Promise<RunningAcmeServer> {
  const db = service.ctx.db
  const clock = service.ctx.clock
  const signer = opts.signer ?? localCaSigner(service.localCa)
  const host = opts.host ?? '127.0.0.1'

  // The listener's own TLS certificate, from the same CA the clients are told to trust. It
  // names `localhost` (the local CA signs DNS names only), and the URLs use that name.
  const tlsKey = await listenerKeyAndCsr(['localhost'])
  const now = clock()
  const tls = await signer.issue(tlsKey.csrDer, ['localhost'], now, addDays(now, LISTENER_CERT_DAYS))
  const rootPem = await signer.rootPem()

  const app = Fastify({
    logger: opts.logger ?? false,
    https: { key: tlsKey.keyPem, cert: tls.chainPem },
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
  const nonces = new Set<string>()
  const inflight = new Set<Promise<void>>()

  const newNonce = (): string => {
    const n = randomBytes(16).toString('base64url')
    nonces.add(n)
    if (nonces.size > MAX_NONCES) nonces.delete(nonces.values().next().value as string)
    return n
  }

  const checkSettings = (): CheckSettings => ({
    resolver: service.settings.get(ACME_SETTINGS.resolver),
    http01Port: Number(service.settings.get(ACME_SETTINGS.http01Port) ?? 80),
    allowPrivateAddresses: service.settings.flag(ACME_SETTINGS.allowPrivateAddresses),
    timeoutMs: 10_000
  })

  app.addHook('onRequest', async (request, reply) => {
    const h = hostName(request.headers.host)
    if (!h || !(h === 'localhost' || h === '[::1]' || /^127(\.\d{1,3}){3}$/.test(h))) {
      throw new AcmeProblem('unauthorized', 'request refused: the Host header is not a loopback name')
    }
    // §6.5: every response carries a fresh nonce; §7.1: and a link to the directory.
    reply.header('replay-nonce', newNonce())
    reply.header('link', `<${url('/directory')}>;rel="index"`)
    reply.header('cache-control', 'no-store')
  })

  app.setErrorHandler((err: Error & { statusCode?: number }, request, reply) => {
    let problem: AcmeProblem
    if (err instanceof AcmeProblem) problem = err
    else if (err instanceof ServiceError) {
      problem = new AcmeProblem(
        err.kind === 'forbidden' ? 'rejectedIdentifier' : err.kind === 'invalid' ? 'malformed' : 'serverInternal',
        err.message
      )
    } else if (err.statusCode && err.statusCode < 500)
      problem = new AcmeProblem('malformed', err.message, {}, err.statusCode)
    else {
      request.log.error({ err: { message: err.message, stack: err.stack } }, 'acme request failed')
      problem = new AcmeProblem('serverInternal', 'internal server error; see the CertDesk log')
    }
    return reply.code(problem.status).type('application/problem+json').send(problem.toJSON())
  })
  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .type('application/problem+json')
      .send(new AcmeProblem('malformed', `no such ACME resource: ${request.method} ${request.url}`, {}, 404).toJSON())
  })

  // ---- requests -------------------------------------------------------------------------

  const account = (id: number): AccountRow | undefined =>
    db.prepare('SELECT * FROM acme_accounts WHERE id = ?').get(id) as AccountRow | undefined
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
  ): Promise<{ parsed: ParsedJws; payload: string; acct: AccountRow | null }> {
    const parsed = parseJws(request.body)
    const { header } = parsed
    if (!header.nonce || !nonces.delete(header.nonce))
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
    const acct = id === null ? undefined : account(id)
    if (!acct) throw new AcmeProblem('accountDoesNotExist', 'no account has this URL')
    const payload = await verifyWith(parsed, JSON.parse(acct.jwk) as JWK)
    if (acct.status !== 'valid') throw new AcmeProblem('unauthorized', `the account is ${acct.status}`)
    return { parsed, payload, acct }
  }

  const json = (payload: string): Record<string, unknown> => {
    if (payload === '') return {}
    try {
      const v = JSON.parse(payload)
      if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>
    } catch {
      // fall through
    }
    throw new AcmeProblem('malformed', 'the JWS payload must be a JSON object')
  }

  const subscriptionOf = (acct: AccountRow): AcmeSubscription => service.acme.byId(acct.subscription_id)

  // ---- presenters -------------------------------------------------------------------------

  const accountJson = (a: AccountRow): Record<string, unknown> => ({
    status: a.status,
    contact: JSON.parse(a.contact),
    orders: url(`/acct/${a.id}/orders`),
    createdAt: rfc3339(tsToDate(a.created_at))
  })

  const authzRows = (orderId: number): AuthzRow[] =>
    db.prepare('SELECT * FROM acme_authorizations WHERE order_id = ? ORDER BY id').all(orderId) as AuthzRow[]

  /** §7.1.6: an order is ready once every authorization is valid, invalid once one is. */
  const refreshOrder = (o: OrderRow): OrderRow => {
    if (o.status !== 'pending') return o
    const statuses = authzRows(o.id).map((a) => a.status)
    let next: OrderRow['status'] = o.status
    if (statuses.some((s) => s !== 'pending' && s !== 'valid')) next = 'invalid'
    else if (statuses.every((s) => s === 'valid')) next = 'ready'
    else if (tsToDate(o.expires_at).getTime() < clock().getTime()) next = 'invalid'
    if (next !== o.status) db.prepare('UPDATE acme_orders SET status = ? WHERE id = ?').run(next, o.id)
    return { ...o, status: next }
  }

  const orderJson = (o: OrderRow): Record<string, unknown> => {
    const cert = db.prepare('SELECT public_id FROM acme_certificates WHERE order_id = ?').get(o.id) as
      { public_id: string } | undefined
    return {
      status: o.status,
      expires: rfc3339(tsToDate(o.expires_at)),
      identifiers: (JSON.parse(o.identifiers) as string[]).map((value) => ({ type: 'dns', value })),
      authorizations: authzRows(o.id).map((a) => url(`/authz/${a.public_id}`)),
      finalize: url(`/order/${o.public_id}/finalize`),
      ...(o.replaces ? { replaces: o.replaces } : {}),
      ...(cert ? { certificate: url(`/cert/${cert.public_id}`) } : {}),
      ...(o.error ? { error: JSON.parse(o.error) } : {})
    }
  }

  const challengeJson = (c: ChallengeRow): Record<string, unknown> => ({
    type: c.type,
    url: url(`/chall/${c.public_id}`),
    token: c.token,
    status: c.status,
    ...(c.validated_at ? { validated: rfc3339(tsToDate(c.validated_at)) } : {}),
    ...(c.error ? { error: JSON.parse(c.error) } : {})
  })

  const authzJson = (a: AuthzRow): Record<string, unknown> => {
    const challenges = db
      .prepare('SELECT * FROM acme_challenges WHERE authz_id = ? ORDER BY id')
      .all(a.id) as ChallengeRow[]
    return {
      identifier: { type: 'dns', value: a.identifier },
      status: a.status,
      expires: rfc3339(tsToDate(a.expires_at)),
      challenges: challenges.map(challengeJson),
      ...(a.wildcard ? { wildcard: true } : {})
    }
  }

  const ownedOrder = (publicId: string, acct: AccountRow): OrderRow => {
    const o = db.prepare('SELECT * FROM acme_orders WHERE public_id = ?').get(publicId) as OrderRow | undefined
    if (!o || o.account_id !== acct.id) throw new AcmeProblem('malformed', 'no such order for this account', {}, 404)
    return refreshOrder(o)
  }

  const ownedAuthz = (publicId: string, acct: AccountRow): AuthzRow => {
    const a = db
      .prepare(
        'SELECT z.* FROM acme_authorizations z JOIN acme_orders o ON o.id = z.order_id WHERE z.public_id = ? AND o.account_id = ?'
      )
      .get(publicId, acct.id) as AuthzRow | undefined
    if (!a) throw new AcmeProblem('malformed', 'no such authorization for this account', {}, 404)
    return a
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
    const existing = db.prepare('SELECT * FROM acme_accounts WHERE thumbprint = ?').get(tp) as AccountRow | undefined
    if (existing) {
      // §7.3.1: an existing key returns its account, whatever else the request says.
      return reply
        .code(200)
        .header('location', url(`/acct/${existing.id}`))
        .send(accountJson(existing))
    }
    if (body.onlyReturnExisting === true) throw new AcmeProblem('accountDoesNotExist', 'no account exists for this key')
    if (!body.externalAccountBinding) {
      throw new AcmeProblem(
        'externalAccountRequired',
        'this server requires External Account Binding: use the eab_kid and eab_hmac_key of your subscription (GET /orders/{id}/acme)'
      )
    }
    const kid = await verifyEab(body.externalAccountBinding, jwk, url('/new-account'), (k) => {
      const sub = service.acme.byKid(k)
      return sub ? service.acme.hmacKey(k) : null
    })
    const sub = service.acme.byKid(kid) as AcmeSubscription
    if (sub.status !== 'active')
      throw new AcmeProblem('unauthorized', `could not bind the account: the subscription is ${sub.status}`)
    const contact = Array.isArray(body.contact) ? body.contact.filter((c): c is string => typeof c === 'string') : []
    const info = db
      .prepare(
        `INSERT INTO acme_accounts (subscription_id, thumbprint, jwk, contact, status, created_at) VALUES (?, ?, ?, ?, 'valid', ?)`
      )
      .run(sub.id, tp, JSON.stringify(jwk), JSON.stringify(contact), isoTimestamp(clock()))
    const created = account(Number(info.lastInsertRowid)) as AccountRow
    return reply
      .code(201)
      .header('location', url(`/acct/${created.id}`))
      .send(accountJson(created))
  })

  app.post<{ Params: { id: string } }>(`${ACME_PREFIX}/acct/:id`, async (request, reply) => {
    const { payload, acct } = await authenticate(request, 'kid')
    const a = acct as AccountRow
    if (String(a.id) !== request.params.id)
      throw new AcmeProblem('unauthorized', 'the account URL does not match the signing key')
    const body = json(payload)
    if (Array.isArray(body.contact)) {
      db.prepare('UPDATE acme_accounts SET contact = ? WHERE id = ?').run(
        JSON.stringify(body.contact.filter((c) => typeof c === 'string')),
        a.id
      )
    }
    // §7.3.6: a client deactivates its own account.
    if (body.status === 'deactivated')
      db.prepare(`UPDATE acme_accounts SET status = 'deactivated' WHERE id = ?`).run(a.id)
    else if (body.status !== undefined)
      throw new AcmeProblem('malformed', 'the only status a client may set is deactivated')
    return reply.header('location', url(`/acct/${a.id}`)).send(accountJson(account(a.id) as AccountRow))
  })

  app.post<{ Params: { id: string } }>(`${ACME_PREFIX}/acct/:id/orders`, async (request) => {
    const { acct } = await authenticate(request, 'kid')
    const a = acct as AccountRow
    if (String(a.id) !== request.params.id)
      throw new AcmeProblem('unauthorized', 'the account URL does not match the signing key')
    const rows = db
      .prepare(
        `SELECT public_id FROM acme_orders WHERE account_id = ? AND status IN ('pending', 'ready', 'processing') ORDER BY id DESC`
      )
      .all(a.id) as { public_id: string }[]
    return { orders: rows.map((r) => url(`/order/${r.public_id}`)) }
  })

  app.post(`${ACME_PREFIX}/new-order`, async (request, reply) => {
    const { payload, acct } = await authenticate(request, 'kid')
    const a = acct as AccountRow
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
    const sub = subscriptionOf(a)
    let names: string[]
    try {
      names = service.acme.checkOrder(sub, values)
    } catch (err) {
      if (err instanceof ServiceError)
        throw new AcmeProblem('rejectedIdentifier', `could not create the order: ${err.message}`)
      throw err
    }
    let replaces: string | null = null
    if (body.replaces !== undefined) {
      // RFC 9773 §5: the certificate being replaced must be this account's.
      const old = db.prepare('SELECT * FROM acme_certificates WHERE ari_id = ?').get(String(body.replaces)) as
        CertRow | undefined
      if (!old || old.account_id !== a.id)
        throw new AcmeProblem('malformed', 'replaces does not name a certificate of this account')
      if (old.replaced_by) throw new AcmeProblem('alreadyReplaced', 'that certificate was already replaced')
      replaces = old.ari_id
    }
    const now = clock()
    const expires = isoTimestamp(addDays(now, PENDING_LIFETIME_DAYS))
    const orderPid = pid()
    db.transaction(() => {
      const info = db
        .prepare(
          `INSERT INTO acme_orders (public_id, account_id, status, identifiers, replaces, expires_at, created_at) VALUES (?, ?, 'pending', ?, ?, ?, ?)`
        )
        .run(orderPid, a.id, JSON.stringify(names), replaces, expires, isoTimestamp(now))
      const orderId = Number(info.lastInsertRowid)
      for (const name of names) {
        const wildcard = name.startsWith('*.')
        const z = db
          .prepare(
            `INSERT INTO acme_authorizations (public_id, order_id, identifier, wildcard, status, expires_at) VALUES (?, ?, ?, ?, 'pending', ?)`
          )
          .run(pid(), orderId, wildcard ? name.slice(2) : name, wildcard ? 1 : 0, expires)
        // §7.1.4 / §8.3: a wildcard can only be proven through DNS.
        const types = wildcard ? ['dns-01'] : ['http-01', 'dns-01']
        for (const type of types) {
          db.prepare(
            `INSERT INTO acme_challenges (public_id, authz_id, type, token, status) VALUES (?, ?, ?, ?, 'pending')`
          ).run(pid(), Number(z.lastInsertRowid), type, randomBytes(32).toString('base64url'))
        }
      }
    })()
    const o = db.prepare('SELECT * FROM acme_orders WHERE public_id = ?').get(orderPid) as OrderRow
    return reply
      .code(201)
      .header('location', url(`/order/${orderPid}`))
      .send(orderJson(o))
  })

  app.post<{ Params: { id: string } }>(`${ACME_PREFIX}/order/:id`, async (request, reply) => {
    const { acct } = await authenticate(request, 'kid')
    const o = ownedOrder(request.params.id, acct as AccountRow)
    return reply.header('location', url(`/order/${o.public_id}`)).send(orderJson(o))
  })

  app.post<{ Params: { id: string } }>(`${ACME_PREFIX}/authz/:id`, async (request) => {
    const { payload, acct } = await authenticate(request, 'kid')
    const z = ownedAuthz(request.params.id, acct as AccountRow)
    const body = json(payload)
    // §7.5.2: a client may deactivate an authorization it holds.
    if (body.status === 'deactivated') {
      if (z.status !== 'pending' && z.status !== 'valid')
        throw new AcmeProblem('malformed', `the authorization is ${z.status}`)
      db.prepare(`UPDATE acme_authorizations SET status = 'deactivated' WHERE id = ?`).run(z.id)
    }
    return authzJson(db.prepare('SELECT * FROM acme_authorizations WHERE id = ?').get(z.id) as AuthzRow)
  })

  app.post<{ Params: { id: string } }>(`${ACME_PREFIX}/chall/:id`, async (request, reply) => {
    const { payload, acct } = await authenticate(request, 'kid')
    const a = acct as AccountRow
    const c = db
      .prepare(
        `SELECT c.* FROM acme_challenges c JOIN acme_authorizations z ON z.id = c.authz_id JOIN acme_orders o ON o.id = z.order_id
                WHERE c.public_id = ? AND o.account_id = ?`
      )
      .get(request.params.id, a.id) as ChallengeRow | undefined
    if (!c) throw new AcmeProblem('malformed', 'no such challenge for this account', {}, 404)
    const z = db.prepare('SELECT * FROM acme_authorizations WHERE id = ?').get(c.authz_id) as AuthzRow
    reply.header('link', `<${url(`/authz/${z.public_id}`)}>;rel="up"`)
    // §7.5.1: an empty object asks the server to check; POST-as-GET only reads.
    if (payload !== '' && c.status === 'pending' && z.status === 'pending') {
      db.prepare(`UPDATE acme_challenges SET status = 'processing' WHERE id = ?`).run(c.id)
      const run = validate(c, z, JSON.parse(a.jwk) as JWK).finally(() => inflight.delete(run))
      inflight.add(run)
    }
    const now = db.prepare('SELECT * FROM acme_challenges WHERE id = ?').get(c.id) as ChallengeRow
    // §8.2: tell the client when to look again; checks here take about a second, and clients
    // that default to 5 s (lego) would otherwise wait for nothing.
    if (now.status === 'processing') reply.header('retry-after', '1')
    return challengeJson(now)
  })

  async function validate(c: ChallengeRow, z: AuthzRow, jwk: JWK): Promise<void> {
    const keyAuthorization = `${c.token}.${await thumbprint(jwk)}`
    let error: AcmeProblem | null = null
    try {
      if (c.type === 'http-01') await checkHttp01(z.identifier, c.token, keyAuthorization, checkSettings())
      else await checkDns01(z.identifier, keyAuthorization, checkSettings())
    } catch (err) {
      error =
        err instanceof ChallengeFailure
          ? new AcmeProblem(err.type, err.message)
          : new AcmeProblem('serverInternal', `could not check the challenge: ${(err as Error).message}`)
    }
    const ts = isoTimestamp(clock())
    db.transaction(() => {
      if (error) {
        db.prepare(`UPDATE acme_challenges SET status = 'invalid', error = ? WHERE id = ?`).run(
          JSON.stringify(error.toJSON()),
          c.id
        )
        db.prepare(`UPDATE acme_authorizations SET status = 'invalid' WHERE id = ?`).run(z.id)
      } else {
        db.prepare(`UPDATE acme_challenges SET status = 'valid', validated_at = ? WHERE id = ?`).run(ts, c.id)
        db.prepare(`UPDATE acme_authorizations SET status = 'valid' WHERE id = ?`).run(z.id)
      }
    })()
  }

  app.post<{ Params: { id: string } }>(`${ACME_PREFIX}/order/:id/finalize`, async (request, reply) => {
    const { payload, acct } = await authenticate(request, 'kid')
    const a = acct as AccountRow
    const o = ownedOrder(request.params.id, a)
    if (o.status !== 'ready') throw new AcmeProblem('orderNotReady', `the order is ${o.status}, not ready`)
    const body = json(payload)
    if (typeof body.csr !== 'string') throw new AcmeProblem('malformed', 'csr is required (base64url DER)')
    let csr: x509.Pkcs10CertificateRequest
    try {
      csr = new x509.Pkcs10CertificateRequest(Buffer.from(body.csr, 'base64url'))
    } catch {
      throw new AcmeProblem('badCSR', 'could not decode the CSR')
    }
    if (!(await csr.verify())) throw new AcmeProblem('badCSR', 'the CSR signature does not verify')
    const sanExt = csr.getExtension('2.5.29.17')
    const san = sanExt ? new x509.SubjectAlternativeNameExtension(sanExt.rawData) : null
    const sans = san ? san.names.items.filter((n) => n.type === 'dns').map((n) => n.value.toLowerCase()) : []
    const cns = csr.subjectName.getField('CN').map((n) => n.toLowerCase())
    const requested = new Set([...sans, ...cns])
    const ordered = new Set(JSON.parse(o.identifiers) as string[])
    // §7.4: the CSR must ask for exactly the names of the order.
    if (requested.size !== ordered.size || [...requested].some((n) => !ordered.has(n))) {
      throw new AcmeProblem(
        'badCSR',
        `the CSR names ${[...requested].join(', ') || 'nothing'} but the order is for ${[...ordered].join(', ')}`
      )
    }
    // The CSR policy of every issuance path (core/csr.ts): key type and size, and not the account key.
    try {
      const decoded = await decodeCsrDer(Buffer.from(body.csr, 'base64url'))
      assertAcceptableCsr(decoded, 'tls', { accountKey: JSON.parse(a.jwk) as JsonWebKey })
    } catch (err) {
      if (err instanceof ServiceError) throw new AcmeProblem('badCSR', err.message)
      throw err
    }
    const spkiHash = createHash('sha256').update(Buffer.from(csr.publicKey.rawData)).digest('hex')
    // Two finalize requests at once: only the one that moves the order out of `ready` signs.
    const claimed = db
      .prepare(`UPDATE acme_orders SET status = 'processing' WHERE id = ? AND status = 'ready'`)
      .run(o.id)
    if (claimed.changes === 0) throw new AcmeProblem('orderNotReady', 'the order is already being finalized')
    const sub = subscriptionOf(a)
    const window = service.acme.certificateWindow(sub, clock())
    const names = [...ordered]
    // The name asked for first goes into the CN, as clients expect.
    names.sort((x, y) => (x === cns[0] ? -1 : y === cns[0] ? 1 : 0))
    let issued
    try {
      issued = await signer.issue(Buffer.from(csr.rawData), names, window.notBefore, window.notAfter)
    } catch (err) {
      const problem = new AcmeProblem('serverInternal', `could not issue the certificate: ${(err as Error).message}`)
      db.prepare(`UPDATE acme_orders SET status = 'invalid', error = ? WHERE id = ?`).run(
        JSON.stringify(problem.toJSON()),
        o.id
      )
      throw problem
    }
    db.transaction(() => {
      const info = db
        .prepare(
          `INSERT INTO acme_certificates (public_id, order_id, account_id, serial_hex, ari_id, spki_sha256, chain_pem, not_before, not_after)
                  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
        )
        .run(
          pid(),
          o.id,
          a.id,
          issued.serialHex,
          issued.ariId,
          spkiHash,
          issued.chainPem,
          isoTimestamp(issued.notBefore),
          isoTimestamp(issued.notAfter)
        )
      if (o.replaces)
        db.prepare('UPDATE acme_certificates SET replaced_by = ? WHERE ari_id = ?').run(
          Number(info.lastInsertRowid),
          o.replaces
        )
      db.prepare(`UPDATE acme_orders SET status = 'valid' WHERE id = ?`).run(o.id)
    })()
    const done = db.prepare('SELECT * FROM acme_orders WHERE id = ?').get(o.id) as OrderRow
    return reply.header('location', url(`/order/${o.public_id}`)).send(orderJson(done))
  })

  app.post<{ Params: { id: string } }>(`${ACME_PREFIX}/cert/:id`, async (request, reply) => {
    const { acct } = await authenticate(request, 'kid')
    const c = db.prepare('SELECT * FROM acme_certificates WHERE public_id = ?').get(request.params.id) as
      CertRow | undefined
    if (!c || c.account_id !== (acct as AccountRow).id)
      throw new AcmeProblem('malformed', 'no such certificate for this account', {}, 404)
    // §7.4.2: the leaf followed by the chain, one PEM file.
    return reply.type('application/pem-certificate-chain').send(c.chain_pem)
  })

  app.post(`${ACME_PREFIX}/revoke-cert`, async (request, reply) => {
    const { parsed, payload, acct } = await authenticate(request, 'either')
    const body = json(payload)
    if (typeof body.certificate !== 'string')
      throw new AcmeProblem('malformed', 'certificate is required (base64url DER)')
    let cert: x509.X509Certificate
    try {
      cert = new x509.X509Certificate(Buffer.from(body.certificate, 'base64url'))
    } catch {
      throw new AcmeProblem('malformed', 'could not decode the certificate')
    }
    const reason = body.reason === undefined ? 0 : body.reason
    // RFC 5280 §5.3.1 reason codes; 7 is unused and §7.6 leaves the rest to policy.
    if (typeof reason !== 'number' || !Number.isInteger(reason) || reason < 0 || reason > 10 || reason === 7) {
      throw new AcmeProblem('badRevocationReason', 'reason must be an RFC 5280 reason code (0-10, not 7)')
    }
    const row = db.prepare('SELECT * FROM acme_certificates WHERE ari_id = ?').get(ariCertId(cert)) as
      CertRow | undefined
    if (!row) throw new AcmeProblem('malformed', 'this server did not issue that certificate', {}, 404)
    // §7.6: either the account that ordered it or the holder of the certificate key may revoke.
    if (acct) {
      if (row.account_id !== acct.id)
        throw new AcmeProblem('unauthorized', 'the account did not order this certificate')
    } else {
      const spki = await spkiSha256(parsed.header.jwk as JWK, parsed.header.alg)
      if (spki !== row.spki_sha256)
        throw new AcmeProblem('unauthorized', 'the JWS key is not the key of this certificate')
    }
    if (row.revoked_at) throw new AcmeProblem('alreadyRevoked', 'the certificate is already revoked')
    db.prepare('UPDATE acme_certificates SET revoked_at = ?, revocation_reason = ? WHERE id = ?').run(
      isoTimestamp(clock()),
      reason,
      row.id
    )
    return reply.code(200).send()
  })

  app.post(`${ACME_PREFIX}/key-change`, async (request, reply) => {
    const { payload, acct } = await authenticate(request, 'kid')
    const a = acct as AccountRow
    // §7.3.5: the payload is a JWS signed by the new key, over { account, oldKey }.
    const inner = parseJws(json(payload))
    if (!inner.header.jwk) throw new AcmeProblem('malformed', 'the inner JWS must carry the new key as jwk')
    if (inner.header.nonce !== undefined) throw new AcmeProblem('malformed', 'the inner JWS must not carry a nonce')
    if (inner.header.url !== `${base}${request.url}`)
      throw new AcmeProblem('malformed', 'the inner JWS url must be the keyChange URL')
    const innerBody = json(await verifyWith(inner, inner.header.jwk))
    if (innerBody.account !== url(`/acct/${a.id}`))
      throw new AcmeProblem('malformed', 'the inner payload names another account')
    if (!innerBody.oldKey || (await thumbprint(innerBody.oldKey as JWK)) !== a.thumbprint) {
      throw new AcmeProblem('malformed', 'oldKey is not the current account key')
    }
    const newJwk = publicJwk(inner.header.jwk)
    const tp = await thumbprint(newJwk)
    const taken = db.prepare('SELECT id FROM acme_accounts WHERE thumbprint = ?').get(tp) as { id: number } | undefined
    if (taken) {
      return reply
        .code(409)
        .header('location', url(`/acct/${taken.id}`))
        .type('application/problem+json')
        .send(new AcmeProblem('malformed', 'the new key already belongs to an account', {}, 409).toJSON())
    }
    db.prepare('UPDATE acme_accounts SET jwk = ?, thumbprint = ? WHERE id = ?').run(JSON.stringify(newJwk), tp, a.id)
    return reply.header('location', url(`/acct/${a.id}`)).send(accountJson(account(a.id) as AccountRow))
  })

  // RFC 9773 §4: unauthenticated GET, so any client (and monitoring) can ask.
  app.get<{ Params: { id: string } }>(`${ACME_PREFIX}/renewal-info/:id`, async (request, reply) => {
    const row = db.prepare('SELECT * FROM acme_certificates WHERE ari_id = ?').get(request.params.id) as
      CertRow | undefined
    if (!row) throw new AcmeProblem('malformed', 'no certificate with this CertID (RFC 9773 §4.1)', {}, 404)
    reply.header('retry-after', String(ARI_RETRY_AFTER))
    return { suggestedWindow: renewalWindow(row, clock()), explanationURL: url('/directory') }
  })

  await app.listen({ host, port: opts.port ?? DEFAULT_ACME_PORT })
  const addr = app.server.address()
  const port = typeof addr === 'object' && addr ? addr.port : (opts.port ?? DEFAULT_ACME_PORT)
  base = `https://localhost:${port}`
  service.settings.set(ACME_SETTINGS.directoryUrl, url('/directory'))
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

/**
 * RFC 9773 §4.2 suggested window. Renew in the last third of the lifetime (so a 200-day
 * certificate is renewed about 66 days before it ends, and a 47-day one about 16 days before,
 * never later than the spec's 14-day reissue lead); a revoked certificate at once.
 */
export function renewalWindow(
  c: Pick<CertRow, 'not_before' | 'not_after' | 'revoked_at'>,
  now: Date
): { start: string; end: string } {
  if (c.revoked_at) return { start: rfc3339(addDays(now, -1)), end: rfc3339(now) }
  const from = tsToDate(c.not_before).getTime()
  const to = tsToDate(c.not_after).getTime()
  const life = to - from
  const latest = Math.min(to - life / 6, to - 14 * 86_400_000)
  return {
    start: rfc3339(new Date(to - life / 3)),
    end: rfc3339(new Date(Math.max(latest, to - life / 3 + 3_600_000)))
  }
}
