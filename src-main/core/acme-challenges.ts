/**
 * Real challenge checks (RFC 8555 §8.3 http-01, §8.4 dns-01), used by the embedded ACME server
 * and, before it asks an external CA to validate, by the ACME issuer. The DNS resolver and the
 * port http-01 connects to are settings, so tests point them at loopback servers
 * (pebble-challtestsrv as DNS, certbot/lego's own HTTP responder on a high port).
 */
import { createHash } from 'node:crypto'
import { request } from 'node:http'
import { isIP } from 'node:net'
import { dnsResolver } from './dns-resolver'
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
  /** How long the http-01 request waits for an answer (DNS queries: dns-resolver.ts). */
  timeoutMs: number
}

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
  const body = await new Promise<string>((resolve, reject) => {
    const req = request(
      {
        host: address,
        family: isIP(address),
        // A fresh connection to the checked address: no pooled socket from another check.
        agent: false,
        port: s.http01Port,
        path,
        method: 'GET',
        headers: { host: name, 'user-agent': 'CertDesk ACME validator' },
        timeout: s.timeoutMs
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => {
          text += d
          if (text.length > 8192) req.destroy(new Error('response too long'))
        })
        res.on('end', () => {
          // A redirect is an answer other than 200, not followed: it could lead the check to an
          // address resolveTarget did not check.
          if (res.statusCode !== 200)
            reject(
              new ChallengeFailure(
                'incorrectResponse',
                `could not validate ${name}: http://${name}${path} answered ${res.statusCode}`
              )
            )
          else resolve(text)
        })
      }
    )
    req.on('timeout', () => req.destroy(new Error(`no answer within ${s.timeoutMs} ms`)))
    req.on('error', (err) =>
      reject(
        err instanceof ChallengeFailure
          ? err
          : new ChallengeFailure(
              'connection',
              `could not connect to ${name} (${address}:${s.http01Port}): ${(err as NodeJS.ErrnoException).code ?? err.message}`
            )
      )
    )
    req.end()
  })
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
