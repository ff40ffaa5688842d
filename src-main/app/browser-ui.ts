/**
 * Browser mode: the built UI and the bridge's RPC on the same listener as the reseller API
 * (the README's quick start). A one-time token in the printed URL is exchanged for a
 * session cookie (HttpOnly, SameSite=Strict, Path=/): the page never holds a token or an API
 * key, and the Host check of the listener still applies. A page on another port of the same
 * host is the same site and does get the cookie sent, so every change must also come from the
 * UI's own origin (browser-origin.ts) and every RPC call be a JSON body `{ "args": [...] }`.
 * These routes authenticate by session through buildServer's `ownAuth`, never by API key.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { extname, join, normalize, sep } from 'node:path'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { appMethodNames, isAppMethod, RPC_PREFIX, SIGN_OUT_PATH, type SignInNeed } from '../../src-preload/contract'
import { failure } from '../http/errors'
import type { ApiRouter } from '../http/router'
import type { BridgeGate } from './bridge-gate'
import { crossOriginRefusal } from './browser-origin'
import { desktopCaller, type Caller } from './caller'

export const UI_PREFIX = '/ui/'
export const LOGIN_PATH = '/ui/login'
export const SESSION_COOKIE = 'certdesk_session'

/**
 * The page may load only its own scripts and styles and talk only to its own origin: no
 * inline script, no eval, no framing (the Electron window sets the same policy).
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; font-src 'self'; connect-src 'self'; worker-src 'self' blob:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json'
}

/**
 * How long a browser session lasts without a request: 30 minutes, the idle limit OWASP's
 * Session Management Cheat Sheet gives for low-risk applications at most ("Idle Timeout"),
 * because a forgotten tab on a shared desk must not stay signed in to the reseller book.
 */
export const SESSION_IDLE_MINUTES = 30

export interface BrowserSessionOptions {
  /** The clock sessions age by; the service's clock in CertDesk, a hand-moved one in tests. */
  clock?: () => Date
  idleMinutes?: number
  /**
   * Told the new one-time token whenever one is made after the first: once a session has ended
   * (signed out or idle) or a browser without a session asks, so there is always a way back in
   * without restarting CertDesk. `serve` prints the link on its standard output.
   */
  onNewToken?: (token: string) => void
}

export type SessionState = 'valid' | 'expired' | 'none'

/** Sessions of this process; a restart signs everyone out and prints a new link. */
export class BrowserSessions {
  private loginToken: string | null = newToken()
  /** Session id -> when it was last used (ms). */
  private readonly sessions = new Map<string, number>()
  private readonly clock: () => Date
  readonly idleMinutes: number
  private readonly idleMs: number

  constructor(private readonly opts: BrowserSessionOptions = {}) {
    this.clock = opts.clock ?? (() => new Date())
    this.idleMinutes = opts.idleMinutes ?? SESSION_IDLE_MINUTES
    this.idleMs = this.idleMinutes * 60_000
  }

  /** The RPC's 401 message, which the UI shows on its sign-in-needed screen. */
  signInNeeded(state: 'expired' | 'none'): string {
    return state === 'expired'
      ? `sign in again: this browser session ended after ${this.idleMinutes} minutes without use; open the newest sign-in link CertDesk printed`
      : 'sign in first: open the newest sign-in link CertDesk printed'
  }

  /** The token for the printed URL; null once it has been used. */
  get token(): string | null {
    return this.loginToken
  }

  /** Exchanges the one-time token for a session id; null for a wrong or used token. */
  exchange(token: string): string | null {
    const want = this.loginToken
    if (!want || token.length !== want.length) return null
    if (!timingSafeEqual(Buffer.from(token), Buffer.from(want))) return null
    this.loginToken = null
    const session = newToken()
    this.sessions.set(session, this.clock().getTime())
    this.sweep()
    return session
  }

  /** Whether the request carries a live session; a live one counts as used now, an idle one ends here. */
  check(request: FastifyRequest): SessionState {
    const id = readCookie(request.headers.cookie, SESSION_COOKIE)
    const seen = id === null ? undefined : this.sessions.get(id)
    if (id === null || seen === undefined) {
      this.offerSignIn()
      return 'none'
    }
    const now = this.clock().getTime()
    if (now - seen > this.idleMs) {
      this.sessions.delete(id)
      this.offerSignIn()
      return 'expired'
    }
    this.sessions.set(id, now)
    return 'valid'
  }

  valid(request: FastifyRequest): boolean {
    return this.check(request) === 'valid'
  }

  /** Signs the request's session out; its cookie opens nothing afterwards. */
  end(request: FastifyRequest): void {
    const id = readCookie(request.headers.cookie, SESSION_COOKIE)
    if (id !== null) this.sessions.delete(id)
    this.offerSignIn()
  }

  /** A new one-time token, announced, when none is waiting to be used. */
  private offerSignIn(): void {
    if (this.loginToken !== null) return
    this.loginToken = newToken()
    this.opts.onNewToken?.(this.loginToken)
  }

  /** Forgets sessions idle past the limit, so a long-running process keeps no dead ids. */
  private sweep(): void {
    const now = this.clock().getTime()
    for (const [id, seen] of this.sessions) if (now - seen > this.idleMs) this.sessions.delete(id)
  }
}

const newToken = (): string => randomBytes(32).toString('base64url')

function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null
  for (const part of header.split(';')) {
    const [k, ...v] = part.trim().split('=')
    if (k === name) return v.join('=')
  }
  return null
}

/** For buildServer's `ownAuth`: the UI and RPC routes authenticate by session, not API key. */
export const isBrowserUiRequest = (request: FastifyRequest): boolean => {
  const path = request.url.split('?')[0]
  return path === '/ui' || path.startsWith(UI_PREFIX) || path.startsWith(RPC_PREFIX)
}

/**
 * How browsers sign in to this listener: the desktop's one-time link (`linkAuth`) or, on a team
 * server, an admin's name and password (browser-accounts.ts). The RPC and the UI's files ask it
 * who a request comes from.
 */
export interface BrowserAuth {
  /** What a 401 asks the UI for. */
  readonly signIn: Exclude<SignInNeed, 'team'>
  /** The UI's files need a session (the link), or hold the sign-in form and need none (accounts). */
  readonly filesNeedSession: boolean
  /**
   * Who the request comes from, or the 401 message saying how to sign in. A promise: a team
   * server's sessions are in its store, which may answer across the network.
   */
  caller(request: FastifyRequest): Promise<Caller | { refused: string }>
  /** The routes of signing in and out. */
  install(router: ApiRouter): void
}

export const isRefusal = (c: Caller | { refused: string }): c is { refused: string } => 'refused' in c

export const signOutReply = (reply: FastifyReply, request: FastifyRequest): FastifyReply =>
  reply
    .code(200)
    .header('set-cookie', sessionCookie(request, '', 0))
    .header('cache-control', 'no-store')
    .send({ success: true, message: 'signed out' })

/** The session cookie: HttpOnly, SameSite=Strict, whole site; Secure when served over TLS. */
export function sessionCookie(request: FastifyRequest, value: string, maxAge?: number): string {
  const secure = request.protocol === 'https' ? '; Secure' : ''
  const age = maxAge === undefined ? '' : `; Max-Age=${maxAge}`
  return `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=/${secure}${age}`
}

export const sessionToken = (request: FastifyRequest): string | null =>
  readCookie(request.headers.cookie, SESSION_COOKIE)

/** The desktop's browser mode: the one-time link, and the desktop user (the owner) once signed in. */
export function linkAuth(sessions: BrowserSessions): BrowserAuth {
  return {
    signIn: 'link',
    filesNeedSession: true,
    async caller(request) {
      const state = sessions.check(request)
      return state === 'valid' ? desktopCaller(request.ip) : { refused: sessions.signInNeeded(state) }
    },
    install(router) {
      router.get(LOGIN_PATH, { hide: true }, async (request, reply) => {
        const token = (request.query as Record<string, unknown>).token
        const session = typeof token === 'string' ? sessions.exchange(token) : null
        if (!session) {
          if (sessions.valid(request)) return reply.code(303).header('location', UI_PREFIX).send()
          return page(
            reply,
            401,
            'This sign-in link is not valid any more',
            'Each link printed by CertDesk works once. Open the newest sign-in link CertDesk printed in its terminal.'
          )
        }
        return reply
          .code(303)
          .header('set-cookie', sessionCookie(request, session))
          .header('cache-control', 'no-store')
          .header('location', UI_PREFIX)
          .send()
      })
      // Sign-out ends the session on the server (the cookie then opens nothing) and clears the cookie.
      router.post(SIGN_OUT_PATH, { hide: true }, async (request, reply) => {
        sessions.end(request)
        return signOutReply(reply, request)
      })
    }
  }
}

export interface BrowserUiOptions {
  /** The bridge's one door: the role check and the audit log before each handler. */
  gate: BridgeGate
  auth: BrowserAuth
  /** The built renderer (out/renderer). */
  uiDir: string
}

export const page = (reply: FastifyReply, status: number, title: string, text: string): FastifyReply =>
  reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>CertDesk</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`
    )

export function installBrowserUi(router: ApiRouter, opts: BrowserUiOptions): void {
  const { gate, auth, uiDir } = opts
  const root = normalize(uiDir + sep)

  // Before the session is looked at: a refused request neither counts as use of the session nor
  // makes a new sign-in link, and its body is never read.
  router.app.addHook('onRequest', async (request, reply) => {
    if (!isBrowserUiRequest(request)) return
    const why = crossOriginRefusal(request.method, request.headers, request.protocol)
    if (why) return reply.code(403).header('cache-control', 'no-store').send(failure(why))
  })

  auth.install(router)

  const serveFile = async (request: FastifyRequest, reply: FastifyReply, rel: string): Promise<FastifyReply> => {
    const who = auth.filesNeedSession ? await auth.caller(request) : null
    if (who && isRefusal(who)) {
      const why = who.refused.charAt(0).toUpperCase() + who.refused.slice(1)
      return page(reply, 401, 'Sign in first', `${why} (npm start prints it in its terminal).`)
    }
    const file = normalize(join(root, rel || 'index.html'))
    // A path that climbs out of the UI folder is not a file of the UI.
    if (!file.startsWith(root)) return reply.code(404).send(failure('no such file'))
    let body: Buffer
    try {
      body = await readFile(file)
    } catch {
      return reply.code(404).send(failure(`no such file: ${rel}`))
    }
    return reply
      .header('content-type', TYPES[extname(file)] ?? 'application/octet-stream')
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-cache')
      .send(body)
  }
  router.get('/ui', { hide: true }, async (_request, reply) => reply.code(301).header('location', UI_PREFIX).send())
  router.get('/ui/', { hide: true }, async (request, reply) => serveFile(request, reply, ''))
  router.get('/ui/*', { hide: true }, async (request, reply) =>
    serveFile(request, reply, (request.params as Record<string, string>)['*'] ?? '')
  )

  router.post('/rpc/:method', { hide: true }, async (request, reply) => {
    const caller = await auth.caller(request)
    if (isRefusal(caller))
      return reply
        .code(401)
        .header('cache-control', 'no-store')
        .send({ success: false, error: caller.refused, signIn: auth.signIn })
    const method = (request.params as Record<string, string>).method
    if (!isAppMethod(method)) {
      return reply.code(404).send(failure(`no such bridge method: ${method}; known: ${appMethodNames.join(', ')}`))
    }
    const args = rpcArgs(request)
    if (typeof args === 'string') {
      return reply.code(request.body === undefined ? 415 : 400).send(failure(args))
    }
    const answer = await gate.call(caller, method, args)
    if (answer.fault) request.log.error({ err: answer.fault }, `bridge method ${method} failed`)
    return reply.code(answer.status).header('cache-control', 'no-store').send(answer.body)
  })
}

/**
 * The arguments of an RPC call, or why the body is refused. Only `{ "args": [...] }` sent as
 * `application/json` is a call: no HTML form (urlencoded, multipart, text/plain) and no no-cors
 * request can send that type, so a call without it, even an empty one, is never taken as a call
 * with no arguments.
 */
function rpcArgs(request: FastifyRequest): unknown[] | string {
  const type = String(request.headers['content-type'] ?? '')
  const body = request.body as Record<string, unknown> | undefined
  if (body === undefined || !/^application\/json\s*(;|$)/i.test(type)) {
    return 'request body must be JSON (Content-Type: application/json): {"args": [...]}'
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return 'invalid request: the body must be a JSON object {"args": [...]}'
  }
  const extra = Object.keys(body).find((k) => k !== 'args')
  if (extra !== undefined)
    return `invalid request: the body has an unknown field ${JSON.stringify(extra.slice(0, 100))}`
  if (!Array.isArray(body.args)) return 'invalid request: args must be an array'
  return body.args
}
