/**
 * Real challenge checks (RFC 8555 §8.3 http-01, §8.4 dns-01), used by the embedded ACME server
 * and, before it asks an external CA to validate, by the ACME issuer. The DNS resolver and the
 * port http-01 connects to are settings, so tests point them at loopback servers
 * (pebble-challtestsrv as DNS, certbot/lego's own HTTP responder on a high port).
 */
import { createHash } from 'node:crypto'
import { isIP } from 'node:net'
import { dnsResolver } from './dns-resolver'
import { exchange, OutboundError, type Answer } from '../outbound'
import { resolveTarget, TargetRefused } from './validation-target'

/** A failed check, typed as RFC 8555 §6.7 names it, so the ACME server can answer with it. */
export class ChallengeFailure extends Error {
  constructor(
    readonly type: 'dns' | 'connection' | 'incorrectResponse' | 'unauthorized',
    message: string
  ) {
    super(message)
    this.name = 'ChallengeFailure'
  }
}

export interface CheckSettings {
  /** `host:port` of the DNS server to ask; null for the system resolver. */
  resolver: string | null
  /** Port http-01 connects to; RFC 8555 §8.3 says 80. */
  http01Port: number
  /** The lab setting `dcv.allow_private_addresses`: http-01 may reach loopback and private addresses. */
  allowPrivateAddresses: boolean
  /**
   * The total deadline of the http-01 request, from connecting to the last byte of the answer,
   * so a server that trickles its answer cannot hold the check (DNS queries: dns-resolver.ts).
   */
  timeoutMs: number
}

/** A key authorization is a token and a thumbprint, under 200 bytes; a longer answer is not one. */
const MAX_ANSWER_BYTES = 8192

/** The checked address http-01 connects to (validation-target.ts); never the name itself. */
async function addressOf(name: string, s: CheckSettings): Promise<string> {
  try {
    const [address] = await resolveTarget(name, {
      resolver: s.resolver,
      allowPrivateAddresses: s.allowPrivateAddresses
    })
    return address
  } catch (err) {
    if (err instanceof TargetRefused)
      throw new ChallengeFailure('connection', `could not validate ${name}: ${err.message}`)
    throw new ChallengeFailure(
      'dns',
      `could not resolve ${name}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`
    )
  }
}

/** http-01: GET http://<name>/.well-known/acme-challenge/<token> must answer the key authorization. */
export async function checkHttp01(
  name: string,
  token: string,
  keyAuthorization: string,
  s: CheckSettings
): Promise<void> {
  const address = await addressOf(name, s)
  const path = `/.well-known/acme-challenge/${token}`
  let answer: Answer
  try {
    answer = await exchange({
      url: null,
      secure: false,
      options: {
        host: address,
        family: isIP(address),
        port: s.http01Port,
        path,
        method: 'GET',
        headers: { host: name, 'user-agent': 'CertDesk ACME validator' }
      },
      deadlineMs: s.timeoutMs,
      maxBytes: MAX_ANSWER_BYTES,
      overLimit: `the answer is longer than ${MAX_ANSWER_BYTES} bytes`
    })
  } catch (err) {
    if (err instanceof OutboundError && err.code === 'ETOOLARGE')
      throw new ChallengeFailure('incorrectResponse', `could not validate ${name}: ${err.message}`)
    throw new ChallengeFailure(
      'connection',
      `could not connect to ${name} (${address}:${s.http01Port}): ${err instanceof OutboundError ? err.message : ((err as NodeJS.ErrnoException).code ?? (err as Error).message)}`
    )
  }
  // A redirect is an answer other than 200, not followed: it could lead the check to an
  // address resolveTarget did not check.
  if (answer.status !== 200)
    throw new ChallengeFailure(
      'incorrectResponse',
      `could not validate ${name}: http://${name}${path} answered ${answer.status}`
    )
  const body = answer.body.toString('utf8')
  // §8.3: the body is the key authorization; surrounding whitespace is tolerated.
  if (body.trim() !== keyAuthorization) {
    throw new ChallengeFailure(
      'incorrectResponse',
      `could not validate ${name}: the file at ${path} does not hold the expected key authorization`
    )
  }
}

/** dns-01: a TXT record at _acme-challenge.<name> holding base64url(SHA-256(key authorization)). */
export async function checkDns01(
  name: string,
  keyAuthorization: string | { digest: string },
  s: CheckSettings
): Promise<void> {
  const want =
    typeof keyAuthorization === 'string'
      ? createHash('sha256').update(keyAuthorization).digest('base64url')
      : keyAuthorization.digest
  const owner = `_acme-challenge.${name}`
  const r = dnsResolver(s.resolver)
  let records: string[][]
  try {
    records = await r.resolveTxt(owner)
  } catch (err) {
    throw new ChallengeFailure(
      'dns',
      `could not validate ${name}: no TXT record at ${owner} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`
    )
  }
  if (!records.some((chunks) => chunks.join('') === want)) {
    throw new ChallengeFailure(
      'incorrectResponse',
      `could not validate ${name}: the TXT records at ${owner} do not hold the expected digest`
    )
  }
}
