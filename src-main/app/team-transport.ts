/**
 * How the desktop app reaches a team server, and what it trusts there.
 *
 * A team server's public listener presents either a certificate of its own CertDesk CA (the
 * default) or files from a CA the world trusts (`--tls-cert`). The second needs nothing: Node's
 * CA list (Mozilla's, plus NODE_EXTRA_CA_CERTS) trusts it. The first is trusted by pinning the
 * team server's CertDesk root by its SHA-256, as the customers' set-up commands do: the root is
 * fetched from the server's own `/acme/root-ca.pem` without trust (nothing can be checked yet),
 * kept only when its SHA-256 is the one given, and from then on it is the ONE anchor of every
 * connection to that server, with the usual chain and name checks (RFC 6125). A server in the
 * middle can hand over the real root, but no certificate for the name that chains to it.
 */
import { createHash, X509Certificate } from 'node:crypto'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { ACME_ROOT_CA_PATH } from '../core/acme-server/acme-subscriptions'
import { invalid, ServiceError } from '../core/errors'

/** What a connection to the team server trusts. */
export type TeamTrust = { kind: 'system' } | { kind: 'pinned'; rootPem: string; sha256: string }

/** A root certificate is a few KiB; anything larger is not one. */
const MAX_ROOT_BYTES = 64 * 1024

/** Errors of Node's TLS whose cause is a certificate this machine does not trust. */
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID'
])

/**
 * The SHA-256 as people copy it: 64 hex digits, the way the set-up commands and `serve` print it
 * (of the root's PEM file), or with colons the way `openssl x509 -fingerprint -sha256` prints
 * it (of the certificate's DER). Lower-case hex without colons; null when it is neither.
 */
export function normalizePin(typed: string): string | null {
  const hex = typed.trim().replace(/:/g, '').toLowerCase()
  return /^[0-9a-f]{64}$/.test(hex) ? hex : null
}

export interface TeamAnswer {
  status: number
  text: string
  setCookie: string[]
}

/** Where a request failed: before an answer came (`reach`) or while reading it (`read`). */
export class TeamTransportError extends Error {
  constructor(
    readonly phase: 'reach' | 'read',
    message: string
  ) {
    super(message)
  }
}

/**
 * One request to the team server, never following a redirect, within `timeoutMs` for the whole
 * answer and at most `maxBytes` of it.
 */
export function teamRequest(
  url: URL,
  opts: {
    method: 'GET' | 'POST'
    headers: Record<string, string>
    body?: string
    timeoutMs: number
    maxBytes: number
    trust: TeamTrust
    /** Only for fetching the root that is then checked by its SHA-256. */
    unverified?: boolean
  }
): Promise<TeamAnswer> {
  const signal = AbortSignal.timeout(opts.timeoutMs)
  const tls =
    url.protocol === 'https:'
      ? {
          // Pinned: that root alone, not Node's list beside it.
          ...(opts.trust.kind === 'pinned' ? { ca: opts.trust.rootPem } : {}),
          rejectUnauthorized: !opts.unverified
        }
      : {}
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    let answered = false
    const fail = (phase: 'reach' | 'read', err: unknown): void => {
      req.destroy()
      reject(new TeamTransportError(phase, reasonOf(err, signal, opts.trust)))
    }
    const req = send(url, { method: opts.method, headers: opts.headers, signal, ...tls }, (res: IncomingMessage) => {
      answered = true
      const parts: Buffer[] = []
      let size = 0
      res.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > opts.maxBytes) {
          res.destroy()
          fail('read', new Error(`it is larger than ${opts.maxBytes} bytes`))
          return
        }
        parts.push(chunk)
      })
      res.on('error', (err) => fail('read', err))
      res.on('end', () => {
        if (size > opts.maxBytes) return
        const cookies = res.headers['set-cookie'] ?? []
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8'), setCookie: cookies })
      })
    })
    req.on('error', (err) => fail(answered ? 'read' : 'reach', err))
    req.end(opts.body)
  })
}

/**
 * The team server's CertDesk root, fetched from it and kept only when its SHA-256 (of the PEM
 * file as served, or of the certificate's DER) is `pin`.
 */
export async function pinnedRoot(origin: string, typedPin: string, timeoutMs: number): Promise<TeamTrust> {
  const pin = normalizePin(typedPin)
  if (!pin)
    throw invalid(
      "could not connect to the team server: the root's SHA-256 must be 64 hex digits (as `certdesk serve` prints it)"
    )
  const url = new URL(ACME_ROOT_CA_PATH, origin)
  if (url.protocol !== 'https:')
    throw invalid("could not connect to the team server: a root's SHA-256 is for an https:// address")
  let answer: TeamAnswer
  try {
    answer = await teamRequest(url, {
      method: 'GET',
      headers: { accept: 'application/x-pem-file' },
      timeoutMs,
      maxBytes: MAX_ROOT_BYTES,
      trust: { kind: 'system' },
      unverified: true
    })
  } catch (err) {
    throw new ServiceError('unavailable', `could not fetch the root of the team server at ${origin}: ${message(err)}`)
  }
  const mismatch = (why: string): ServiceError =>
    new ServiceError(
      'unavailable',
      `could not trust the team server at ${origin}: ${why}; check the address and the SHA-256 its \`certdesk serve\` printed`
    )
  if (answer.status !== 200) throw mismatch(`it answered HTTP ${answer.status} for its root certificate`)
  const pem = answer.text
  let root: X509Certificate
  try {
    root = new X509Certificate(pem)
  } catch {
    throw mismatch('it serves no certificate as its root')
  }
  const fileHash = createHash('sha256').update(pem).digest('hex')
  const derHash = root.fingerprint256.replace(/:/g, '').toLowerCase()
  if (fileHash !== pin && derHash !== pin) throw mismatch('its root certificate has another SHA-256')
  if (!root.ca) throw mismatch('the certificate it serves as its root is no CA certificate')
  return { kind: 'pinned', rootPem: pem, sha256: pin }
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err))

/** A short reason: a timeout, an untrusted certificate with what to do, else Node's code. */
function reasonOf(err: unknown, signal: AbortSignal, trust: TeamTrust): string {
  const e = err as Error & { code?: string }
  if (signal.aborted || e.name === 'TimeoutError' || e.name === 'AbortError') return 'it did not answer in time'
  if (e.code && UNTRUSTED.has(e.code))
    return trust.kind === 'pinned'
      ? `its certificate is not one the pinned CertDesk root issued for this name (${e.code})`
      : `its certificate is not trusted here (${e.code}); for a certificate of the team server's own CertDesk CA, give the root's SHA-256 that its \`certdesk serve\` printed`
  return e.code ?? e.message
}
