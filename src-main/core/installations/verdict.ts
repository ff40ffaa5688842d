/**
 * What a served certificate means for the order it should belong to: the one issued last,
 * an older one of the same order still installed, or something else entirely; and, for the
 * right one, whether the server sends the intermediates a client needs (RFC 8446 §4.4.2: the
 * server sends its chain, only the root may be left out) and whether it is valid for the name.
 */
import type { X509Certificate } from 'node:crypto'
import type { ProbeResult } from './probe'

import { INSTALLATION_VERDICTS, type Verdict } from '../../../src-shared/records'

/** From worst to best: an order's badge is the worst verdict of its endpoints. */
export const VERDICTS = INSTALLATION_VERDICTS
export type { Verdict }

/** What the badge says, as a person reads it. */
export const VERDICT_LABELS: Record<Verdict, string> = {
  unreachable: 'unreachable',
  revoked: 'serving a revoked certificate',
  other_certificate: 'serving another certificate',
  old_certificate: 'serving the old certificate',
  expired: 'serving an expired certificate',
  hostname_mismatch: 'certificate not valid for this name',
  chain_incomplete: 'chain incomplete',
  ok: 'serving the current certificate'
}

export interface IssuedForComparison {
  /** The certificate issued last, PEM. */
  current: X509Certificate
  /** Its intermediates as issued (the chain a client needs), leaf excluded. */
  chain: X509Certificate[]
  /** Earlier certificates of the same order, newest first. */
  earlier: X509Certificate[]
  /** The order's revoked certificates by SHA-256 fingerprint: when and why (RFC 5280 §5.3.1). */
  revoked?: Map<string, { at: string; reason: string }>
}

export interface Finding {
  verdict: Verdict
  detail: string
  servedSerial: string | null
  servedFingerprint: string | null
  servedValidTill: Date | null
}

export function worst(verdicts: Verdict[]): Verdict {
  let i = VERDICTS.length - 1
  for (const v of verdicts) i = Math.min(i, VERDICTS.indexOf(v))
  return VERDICTS[i]
}

const selfSigned = (c: X509Certificate): boolean => c.subject === c.issuer && c.verify(c.publicKey)

export function judge(host: string, served: ProbeResult, issued: IssuedForComparison, now: Date): Finding {
  if (!served.reachable) {
    return {
      verdict: 'unreachable',
      detail: served.reason,
      servedSerial: null,
      servedFingerprint: null,
      servedValidTill: null
    }
  }
  const leaf = served.leaf
  const base = {
    servedSerial: leaf.serialNumber.toUpperCase(),
    servedFingerprint: leaf.fingerprint256,
    servedValidTill: new Date(leaf.validTo)
  }
  const days = Math.floor((base.servedValidTill.getTime() - now.getTime()) / 86_400_000)
  // A revoked certificate fails at every client that checks revocation, whichever of the
  // order's certificates it is.
  const revoked = issued.revoked?.get(leaf.fingerprint256)
  if (revoked) {
    return {
      verdict: 'revoked',
      detail: `serves serial ${base.servedSerial}, revoked on ${revoked.at} (${revoked.reason}); install the certificate that replaced it`,
      ...base
    }
  }
  if (leaf.fingerprint256 !== issued.current.fingerprint256) {
    const older = issued.earlier.find((c) => c.fingerprint256 === leaf.fingerprint256)
    if (older) {
      return {
        verdict: 'old_certificate',
        detail: `serves serial ${base.servedSerial}, an earlier certificate of this order (valid till ${older.validTo}); the current one is serial ${issued.current.serialNumber.toUpperCase()}`,
        ...base
      }
    }
    return {
      verdict: 'other_certificate',
      detail: `serves a certificate this order did not issue: ${oneLine(leaf.subject)}, issued by ${oneLine(leaf.issuer)}, serial ${base.servedSerial}`,
      ...base
    }
  }
  if (days < 0) return { verdict: 'expired', detail: `the current certificate expired on ${leaf.validTo}`, ...base }
  if (!leaf.checkHost(host, { subject: 'default' })) {
    return { verdict: 'hostname_mismatch', detail: `the certificate does not name ${host}`, ...base }
  }
  const sent = new Set(served.sent.slice(1).map((c) => c.fingerprint256))
  const missing = issued.chain.filter((c) => !selfSigned(c) && !sent.has(c.fingerprint256))
  if (missing.length > 0) {
    return {
      verdict: 'chain_incomplete',
      detail: `the server does not send ${missing.map((c) => oneLine(c.subject)).join(', ')}; clients without it cannot build a path to the root (send fullchain.pem, not cert.pem)`,
      ...base
    }
  }
  return { verdict: 'ok', detail: `serves the current certificate with its chain; ${days} days left`, ...base }
}

/** A distinguished name on one line (Node prints one attribute per line). */
function oneLine(dn: string): string {
  return dn.split('\n').join(', ')
}
