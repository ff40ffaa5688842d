/**
 * What a PostgreSQL failure means for the caller. Opening the store: one line that says what
 * is wrong (a URL that is not one, a refused password, a server that does not answer) and an
 * exit code for the CLI, never a stack. Running: a serialization failure or deadlock is
 * retried by the engine; a lost connection or a statement over its time is passing, so the
 * caller hears 503 with Retry-After (RFC 9110 §15.6.4) and nothing was changed.
 */
import { DEFAULT_RETRY_AFTER_SECONDS, RetryLaterError } from './store-faults'

/** sysexits(3): how the CLI ends when the store cannot be opened. */
export const EXIT_USAGE = 64
export const EXIT_UNAVAILABLE = 69
export const EXIT_NOPERM = 77
export const EXIT_CONFIG = 78

export class StoreOpenError extends Error {
  constructor(
    message: string,
    readonly exitCode: number
  ) {
    super(message)
    this.name = 'StoreOpenError'
  }
}

interface PgLikeError {
  code?: unknown
  message?: unknown
  cause?: unknown
}

/** SQLSTATEs (PostgreSQL manual, Appendix A) after which the whole transaction may run again. */
const RETRYABLE = new Set(['40001', '40P01'])

/** The SQLSTATE or Node error code of `err` or of an error in its cause chain that is retryable. */
export function isRetryable(err: unknown): boolean {
  let e: unknown = err
  for (let depth = 0; depth < 5 && e && typeof e === 'object'; depth++) {
    const code = (e as PgLikeError).code
    if (typeof code === 'string' && RETRYABLE.has(code)) return true
    e = (e as PgLikeError).cause
  }
  return false
}

const CONNECTION_LOST = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN'])

/**
 * `err` as a RetryLaterError when it is a passing condition of the server (connection lost,
 * server shutting down or starting, out of connections, statement timeout), else null.
 */
export function passingFault(err: unknown, verb: string): RetryLaterError | null {
  const e = err as PgLikeError
  const code = typeof e?.code === 'string' ? e.code : ''
  const message = typeof e?.message === 'string' ? e.message : ''
  let why: string | null = null
  if (code === '57014') why = 'the store took too long to answer'
  else if (code === '57P01' || code === '57P02' || code === '57P03') why = 'the database server is restarting'
  else if (code === '53300') why = 'the database server has no free connection'
  else if (code === '25006' && /read-only/i.test(message)) why = 'the database server is a read-only replica'
  else if (code.startsWith('08') || CONNECTION_LOST.has(code) || /Connection terminated/i.test(message))
    why = 'the connection to the database server was lost'
  if (!why) return null
  return new RetryLaterError(
    `could not ${verb}: ${why}; try again in ${DEFAULT_RETRY_AFTER_SECONDS} s`,
    DEFAULT_RETRY_AFTER_SECONDS
  )
}

/** The URL as it may be shown: no password, ever. */
export function redactUrl(raw: string): string {
  try {
    const u = new URL(raw)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return raw.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@')
  }
}

export interface ParsedUrl {
  url: URL
  shown: string
}

/** Checks that `raw` is a PostgreSQL URL before anything connects (refused with EX_USAGE). */
export function parsePostgresUrl(raw: string): ParsedUrl {
  const shown = redactUrl(raw)
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new StoreOpenError(
      `could not open the store at ${shown}: it is not a URL (write postgres://user@host:5432/database)`,
      EXIT_USAGE
    )
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new StoreOpenError(
      `could not open the store at ${shown}: ${url.protocol.replace(/:$/, '')} is not a PostgreSQL URL (write postgres://user@host:5432/database)`,
      EXIT_USAGE
    )
  }
  if (!url.pathname || url.pathname === '/') {
    throw new StoreOpenError(
      `could not open the store at ${shown}: the URL names no database (write postgres://user@host:5432/database)`,
      EXIT_USAGE
    )
  }
  return { url, shown }
}

/** Why connecting failed, as one line for the person who typed the URL. */
export function openFailure(err: unknown, shown: string, user: string, where: string): StoreOpenError {
  const e = err as PgLikeError
  const code = typeof e?.code === 'string' ? e.code : ''
  const message = typeof e?.message === 'string' ? e.message : String(err)
  const fail = (why: string, exit: number) => new StoreOpenError(`could not open the store at ${shown}: ${why}`, exit)
  if (code === '28P01') return fail(`the server refused the password of user "${user}"`, EXIT_NOPERM)
  if (code === '28000') return fail(`the server does not let user "${user}" in (pg_hba.conf)`, EXIT_NOPERM)
  if (code === '3D000') return fail(`the database does not exist on ${where}`, EXIT_CONFIG)
  if (code === '42501') return fail(`user "${user}" lacks a privilege the store needs: ${message}`, EXIT_NOPERM)
  if (/password must be a string|SASL/i.test(message))
    return fail(`the server asks for a password and the URL gives none`, EXIT_NOPERM)
  if (code === 'ECONNREFUSED') return fail(`nothing answers on ${where} (connection refused)`, EXIT_UNAVAILABLE)
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return fail(`the host of ${where} cannot be resolved`, EXIT_UNAVAILABLE)
  if (code === 'ETIMEDOUT' || /timeout/i.test(message))
    return fail(`${where} did not answer in time (unreachable, or a firewall drops the packets)`, EXIT_UNAVAILABLE)
  if (code === 'ENOENT') return fail(`no server socket at ${where}`, EXIT_UNAVAILABLE)
  if (code === '57P03') return fail(`the server on ${where} is starting up or shutting down`, EXIT_UNAVAILABLE)
  if (code === '53300') return fail(`the server on ${where} has no free connection`, EXIT_UNAVAILABLE)
  return fail(message.split('\n')[0], EXIT_UNAVAILABLE)
}
