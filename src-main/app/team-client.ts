/**
 * The desktop app as a client of a team server: signed in there with an admin account, it sends
 * every bridge call but the table's `local` ones to the team server's RPC (the same contract
 * browser mode uses, `POST /rpc/<method>`) and answers with what the team server answered. The
 * session cookie stays in this process's memory; the page never sees it, and a restart of the
 * app is back on its own book.
 *
 * The team server decides: it checks the admin's role and audits each call in its own gate, so
 * nothing here can widen what the account may do. What this app trusts of the server's TLS
 * certificate (Node's CA list, or the team's CertDesk root pinned by its SHA-256) is
 * team-transport.ts's.
 */
import type { AppMethod } from '../../src-shared/app-api'
import type { SessionView, TeamSignIn } from '../../src-shared/admin-records'
import {
  RPC_PREFIX,
  SIGN_IN_PATH,
  SIGN_OUT_PATH,
  TEAM_SIGN_IN_AGAIN,
  type BridgeResult
} from '../../src-preload/channels'
import { isLoopbackName } from '../common/host-header'
import { forbidden, invalid, ServiceError } from '../core/errors'
import type { BridgeAnswer } from './bridge-answer'
import { pinnedRoot, teamRequest, TeamTransportError, type TeamTrust } from './team-transport'

/** A sign-in waits for the team server's password hash (about a second) and a queue before it. */
const SIGN_IN_TIMEOUT_MS = 30_000
/**
 * A forwarded call may run domain checks, deploys or endpoint scans on the team server, each
 * bounded there by its own deadlines; this bounds the wait for the whole answer.
 */
const CALL_TIMEOUT_MS = 300_000
/** The largest answer taken from a team server (a page of 500 orders is far below). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024
const COOKIE = 'certdesk_session'

interface Link {
  origin: string
  /** What the UI shows: `certs.reseller.example`, with the port when it is not the default. */
  host: string
  cookie: string
  /** What the connection to it trusts, decided at sign-in. */
  trust: TeamTrust
  /** The team server's answer to `session` at sign-in: the account, its role, its methods. */
  session: SessionView
}

/**
 * The team server's origin from what the user typed: https, or http to this machine only (a
 * password must not cross a network in clear), without credentials in the address.
 */
export function teamOrigin(typed: string): URL {
  let url: URL
  try {
    url = new URL(typed.trim())
  } catch {
    throw invalid('could not connect to the team server: the address is not a URL (https://certs.example.com)')
  }
  if (url.username || url.password)
    throw invalid('could not connect to the team server: the address must not carry a name or password')
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (url.protocol === 'http:' && !isLoopbackName(host))
    throw invalid(
      'could not connect to the team server: use https; plain http would send the password in clear (only this machine may be reached over http)'
    )
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw invalid('could not connect to the team server: the address must start with https://')
  return url
}

export class TeamConnection {
  private link: Link | null = null

  /** Whether the UI works on a team server's book now. */
  get active(): boolean {
    return this.link !== null
  }

  /** Signs in on the team server and works on its book from now on. */
  async connect(input: TeamSignIn): Promise<SessionView> {
    const url = teamOrigin(input.url)
    const origin = url.origin
    // The root is checked before the password is sent anywhere.
    const trust: TeamTrust = input.rootSha256
      ? await pinnedRoot(origin, input.rootSha256, SIGN_IN_TIMEOUT_MS)
      : { kind: 'system' }
    const res = await this.post(`${origin}${SIGN_IN_PATH}`, origin, null, trust, SIGN_IN_TIMEOUT_MS, {
      name: input.name,
      password: input.password,
      ...(input.code ? { code: input.code } : {})
    })
    if (res.status !== 200 || !res.body.success) {
      const why = res.body.success ? `HTTP ${res.status}` : res.body.error
      // 401 of this app's own transport means "this tab signed out"; a wrong password there is a 403 here.
      if (res.status === 401 || res.status === 403) throw forbidden(`${host(url)}: ${why}`)
      if (res.status === 429) throw new ServiceError('rate_limited', `${host(url)}: ${why}`)
      throw new ServiceError('unavailable', `could not sign in to ${host(url)}: ${why}`)
    }
    const cookie = res.cookie
    if (!cookie) throw new ServiceError('unavailable', `could not sign in to ${host(url)}: it set no session`)
    const session = await this.remoteSession(origin, cookie, trust, host(url))
    // A session this app held before (another server, or one that ended) is signed out there.
    const before = this.link
    this.link = { origin, host: host(url), cookie, trust, session }
    if (before) void this.signOut(before)
    return session
  }

  /** Signs out on the team server (as far as it answers) and goes back to this machine's book. */
  async disconnect(): Promise<void> {
    const link = this.link
    this.link = null
    if (link) await this.signOut(link)
  }

  /** Ends a session on its team server, as far as that server answers. */
  private async signOut(link: Link): Promise<void> {
    await this.post(
      `${link.origin}${SIGN_OUT_PATH}`,
      link.origin,
      link.cookie,
      link.trust,
      SIGN_IN_TIMEOUT_MS,
      {}
    ).catch(() => undefined)
  }

  /**
   * One bridge call on the team server, answered as it answered; `session` as this app shows it
   * (asked each time, so a role changed there shows at once).
   */
  async forward(method: AppMethod, args: unknown[]): Promise<BridgeAnswer> {
    const link = this.link
    if (!link) return { status: 409, body: { success: false, error: 'not connected to a team server' } }
    let res: Awaited<ReturnType<TeamConnection['post']>>
    try {
      res = await this.post(
        `${link.origin}${RPC_PREFIX}${method}`,
        link.origin,
        link.cookie,
        link.trust,
        CALL_TIMEOUT_MS,
        {
          args
        }
      )
    } catch (err) {
      return { status: 503, body: { success: false, error: (err as Error).message } }
    }
    if (method === 'session' && res.status === 200 && res.body.success) {
      link.session = this.asClient(res.body.result as SessionView, link.host)
      return { status: 200, body: { success: true, result: link.session } }
    }
    if (res.status === 401) {
      // The team server ended the session (idle, signed out, role changed): sign in there again.
      const why = res.body.success ? '' : res.body.error
      return {
        status: 401,
        body: { success: false, error: `${TEAM_SIGN_IN_AGAIN} ${link.host}: ${why}`, signIn: 'team' }
      }
    }
    return { status: res.status, body: res.body }
  }

  private async remoteSession(origin: string, cookie: string, trust: TeamTrust, name: string): Promise<SessionView> {
    const res = await this.post(`${origin}${RPC_PREFIX}session`, origin, cookie, trust, SIGN_IN_TIMEOUT_MS, {
      args: []
    })
    if (res.status !== 200 || !res.body.success)
      throw new ServiceError('unavailable', `could not sign in to ${name}: it did not answer who is signed in`)
    return this.asClient(res.body.result as SessionView, name)
  }

  /**
   * The team server's session as this app shows it: that server's book under the name the user
   * connected to, and the methods this app answers itself (leaving the team's book) added.
   */
  private asClient(s: SessionView, name: string): SessionView {
    const allowed = new Set([...s.allowed.filter((m) => m !== 'connectTeam'), 'session', 'disconnectTeam'])
    return { ...s, book: { kind: 'team', server: name }, teamClient: true, allowed: [...allowed] }
  }

  /**
   * A POST as the team server's own page sends it (its Origin, the session cookie), without
   * following redirects, within a deadline and a byte cap.
   */
  private async post(
    url: string,
    origin: string,
    cookie: string | null,
    trust: TeamTrust,
    timeoutMs: number,
    body: unknown
  ): Promise<{ status: number; body: BridgeResult<unknown>; cookie: string | null }> {
    let res: Awaited<ReturnType<typeof teamRequest>>
    try {
      res = await teamRequest(new URL(url), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          origin,
          ...(cookie ? { cookie: `${COOKIE}=${cookie}` } : {})
        },
        body: JSON.stringify(body),
        timeoutMs,
        maxBytes: MAX_ANSWER_BYTES,
        trust
      })
    } catch (err) {
      const why = (err as Error).message
      if (err instanceof TeamTransportError && err.phase === 'read')
        throw new ServiceError('unavailable', `could not read the answer of the team server at ${origin}: ${why}`)
      throw new ServiceError('unavailable', `could not reach the team server at ${origin}: ${why}`)
    }
    let parsed: BridgeResult<unknown>
    try {
      parsed = JSON.parse(res.text) as BridgeResult<unknown>
      if (typeof parsed !== 'object' || parsed === null || typeof parsed.success !== 'boolean') throw new Error()
    } catch {
      parsed = {
        success: false,
        error: `the team server at ${origin} answered HTTP ${res.status} without a CertDesk answer`
      }
    }
    const set = res.setCookie.find((c) => c.startsWith(`${COOKIE}=`))
    const value = set?.split(';')[0].slice(COOKIE.length + 1) || null
    return { status: res.status, body: parsed, cookie: value }
  }
}

const host = (url: URL): string => url.host
