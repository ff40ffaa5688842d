/**
 * Domain control validation that really checks, in the shape resellers know from the large CAs:
 *  - http/https (BR §3.2.2.4.18): a file `/.well-known/pki-validation/<MD5>.txt` on the
 *    domain holding the CSR's SHA-256, the CA marker and a unique value, one per line;
 *  - dns (BR §3.2.2.4.7): a CNAME (or TXT) at `_<md5>.<domain>` whose value carries the SHA-256;
 *  - email (BR §3.2.2.4.4, constructed addresses): an approval code mailed to the approver.
 * Where to look is configurable (settings), so tests point the checks at loopback servers.
 */
import { dnsResolver } from './dns-resolver'
import { exchange, sendThroughRelay } from '../outbound'
import { DCV_SETTINGS } from '../settings/setting-keys'
import type { Settings } from '../settings/settings'
import { resolveTarget, TargetRefused } from './validation-target'

export const DCV_METHODS = ['email', 'http', 'https', 'dns'] as const
export type DcvMethod = (typeof DCV_METHODS)[number]

/**
 * The CA marker in DCV files and records. `.invalid` (RFC 2606 §2) is never a real zone, so a
 * record naming it can only have been put there for this CA.
 */
export const CA_MARKER = 'certdesk.invalid'

export { DCV_SETTINGS }

/**
 * One validation fetch, from connecting to the last byte of the file, may take this long
 * (DNS: dns-resolver.ts). The file is three short lines: a working server sends it in well under
 * a second, even across the world over TLS; 10 s leaves room for a slow handshake on a loaded
 * server, and a peer that trickles or never answers costs one order this much, never more.
 */
export const CHECK_DEADLINE_MS = 10_000
/** How long connecting to the SMTP relay, or its greeting, may take alone (outbound.ts bounds the whole send). */
const SMTP_STEP_MS = 5000
/** The validation file is three short lines; anything much larger is not ours. */
const MAX_FILE_BYTES = 64 * 1024

export interface DcvToken {
  /** Upper-case hex MD5 of the DER CSR. */
  md5: string
  /** Upper-case hex SHA-256 of the DER CSR. */
  sha256: string
  unique: string
}

export const dcvFileName = (t: DcvToken): string => `${t.md5}.txt`
export const dcvFilePath = (t: DcvToken): string => `/.well-known/pki-validation/${dcvFileName(t)}`
export const dcvFileContent = (t: DcvToken): string => `${t.sha256}\n${CA_MARKER}\n${t.unique}`
/** The record lives at `_<md5>.<domain>`; DNS is case-insensitive, so shown lower-case. */
export const dnsRecordName = (t: DcvToken, domain: string): string => `_${t.md5.toLowerCase()}.${domain}`
/** A label holds at most 63 octets (RFC 1035 §2.3.4), so the 64-hex SHA-256 is split in two. */
export const dnsRecordValue = (t: DcvToken): string =>
  `${t.sha256.slice(0, 32)}.${t.sha256.slice(32)}.${t.unique}.${CA_MARKER}`.toLowerCase()

/**
 * What one look at a name found. `ok: false` alone leaves the name waiting: nothing found yet,
 * or something else at the proof's place (a catch-all page, a wildcard DNS record), is what a
 * name looks like before its owner published the proof, or while DNS still propagates.
 * `final` means the name cannot pass any more with these instructions (an ACME CA declared the
 * challenge invalid, RFC 8555 §7.1.6): only new instructions (/ssl/change-dcv) can help.
 */
export interface CheckResult {
  ok: boolean
  detail: string
  final?: boolean
}

/** A name's validation state: `pending` until its proof is found, then `valid`. */
export type CheckStatus = 'pending' | 'valid' | 'failed'

/**
 * A name's status after one look. Not finding the proof does not fail a name: it stays
 * `pending` (the UI says "waiting") with the time of the look and what was found, because its
 * owner may not have published the proof yet. `failed` is kept for a name that cannot pass any
 * more with its current instructions.
 */
export const checkStatus = (r: CheckResult): CheckStatus => (r.ok ? 'valid' : r.final ? 'failed' : 'pending')

export interface DcvNetwork {
  resolver: string | null
  httpPort: number
  httpsPort: number
  allowPrivateAddresses: boolean
}

export async function dcvNetwork(settings: Settings): Promise<DcvNetwork> {
  const port = async (key: string, fallback: number): Promise<number> => {
    const v = await settings.get(key)
    const n = v === null ? fallback : Number(v)
    return Number.isInteger(n) && n > 0 && n < 65536 ? n : fallback
  }
  return {
    resolver: await settings.get(DCV_SETTINGS.resolver),
    httpPort: await port(DCV_SETTINGS.httpPort, 80),
    httpsPort: await port(DCV_SETTINGS.httpsPort, 443),
    allowPrivateAddresses: await settings.flag(DCV_SETTINGS.allowPrivateAddresses)
  }
}

/**
 * GETs `path` from the checked address. The whole exchange (connect, TLS, headers, body) ends
 * within CHECK_DEADLINE_MS, and at most MAX_FILE_BYTES of the body are read.
 */
async function fetchText(
  scheme: 'http' | 'https',
  host: string,
  address: string,
  port: number,
  path: string
): Promise<{ status: number; body: string }> {
  const defaultPort = scheme === 'http' ? 80 : 443
  const answer = await exchange({
    url: null,
    secure: scheme === 'https',
    options: {
      // The checked address itself, so no second lookup happens (validation-target.ts).
      host: address,
      port,
      path,
      method: 'GET',
      headers: { Host: port === defaultPort ? host : `${host}:${port}`, 'User-Agent': 'CertDesk-DCV/1.0' },
      // BR §3.2.2.4.18 checks control of the content, not the server's certificate.
      ...(scheme === 'https' ? { servername: host, rejectUnauthorized: false } : {})
    },
    deadlineMs: CHECK_DEADLINE_MS,
    maxBytes: MAX_FILE_BYTES,
    overLimit: 'the file is larger than 64 KiB'
  })
  return { status: answer.status, body: answer.body.toString('utf8') }
}

const reason = (err: unknown): string => {
  const e = err as NodeJS.ErrnoException
  if (e?.code === 'ENOTFOUND' || e?.code === 'ENODATA') return 'the name does not resolve'
  if (e?.code === 'ECONNREFUSED') return 'connection refused'
  return e?.message ? e.message.split('\n')[0] : String(err)
}

/** http/https: the file must hold exactly the three lines (surrounding whitespace ignored). */
export async function checkHttp(
  scheme: 'http' | 'https',
  domain: string,
  t: DcvToken,
  net: DcvNetwork
): Promise<CheckResult> {
  const port = scheme === 'http' ? net.httpPort : net.httpsPort
  const url = `${scheme}://${domain}${dcvFilePath(t)}`
  let addresses: string[]
  try {
    addresses = await resolveTarget(domain, {
      resolver: net.resolver,
      allowPrivateAddresses: net.allowPrivateAddresses
    })
  } catch (err) {
    if (err instanceof TargetRefused) return { ok: false, detail: `could not fetch ${url}: ${err.message}` }
    return { ok: false, detail: `could not resolve ${domain}: ${reason(err)}` }
  }
  try {
    const res = await fetchText(scheme, domain, addresses[0], port, dcvFilePath(t))
    // Redirects are not followed: the file must be served at the exact URL, and no redirect
    // can lead the check to an address resolveTarget did not check.
    if (res.status !== 200) return { ok: false, detail: `could not fetch ${url}: HTTP ${res.status}` }
    const lines = res.body
      .trim()
      .split(/\r?\n/)
      .map((l) => l.trim())
    const want = dcvFileContent(t).split('\n')
    if (lines.length === want.length && lines.every((l, i) => l.toUpperCase() === want[i].toUpperCase())) {
      return { ok: true, detail: `found the validation file at ${url}` }
    }
    return { ok: false, detail: `the file at ${url} does not hold the expected content` }
  } catch (err) {
    return { ok: false, detail: `could not fetch ${url}: ${reason(err)}` }
  }
}

/** dns: a CNAME to `dnsRecordValue`, or a TXT record with that value. */
export async function checkDns(domain: string, t: DcvToken, net: DcvNetwork): Promise<CheckResult> {
  const name = dnsRecordName(t, domain)
  const want = dnsRecordValue(t)
  const r = dnsResolver(net.resolver)
  // Both record types at once: a server that does not answer costs one time-out, not two.
  const [cname, txt] = await Promise.allSettled([r.resolveCname(name), r.resolveTxt(name)])
  const found: string[] = []
  if (cname.status === 'fulfilled') for (const c of cname.value) found.push(c.toLowerCase().replace(/\.$/, ''))
  if (txt.status === 'fulfilled') for (const chunks of txt.value) found.push(chunks.join('').trim().toLowerCase())
  if (found.includes(want)) return { ok: true, detail: `found ${name} pointing to the expected value` }
  if (found.length === 0) return { ok: false, detail: `no CNAME or TXT record at ${name}` }
  return { ok: false, detail: `the record at ${name} holds ${found[0]}, not the expected value` }
}

export interface Mail {
  to: string
  subject: string
  text: string
}

/**
 * Sends through SMTP when `smtp.url` is set (nodemailer); returns 'outbox' when it is not, and
 * the caller keeps the message for the app to show.
 */
export async function deliverMail(settings: Settings, mail: Mail): Promise<'smtp' | 'outbox'> {
  const url = await settings.get(DCV_SETTINGS.smtpUrl)
  if (!url) return 'outbox'
  const u = new URL(url)
  await sendThroughRelay(
    {
      host: u.hostname,
      port: Number(u.port || (u.protocol === 'smtps:' ? 465 : 25)),
      secure: u.protocol === 'smtps:',
      connectionTimeout: SMTP_STEP_MS,
      greetingTimeout: SMTP_STEP_MS,
      socketTimeout: SMTP_STEP_MS
    },
    {
      // Empty means the default, as for every setting.
      from: (await settings.get(DCV_SETTINGS.smtpFrom)) || 'CertDesk validation <dcv@certdesk.invalid>',
      to: mail.to,
      subject: mail.subject,
      text: mail.text
    }
  )
  return 'smtp'
}
