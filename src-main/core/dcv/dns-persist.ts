/**
 * dns-persist-01 (draft-ietf-acme-dns-persist; CA/B Baseline Requirements §3.2.2.4.22): a
 * persistent TXT record at `_validation-persist.<domain>` names the CA (its issuer domain name)
 * and the ACME account allowed to get certificates for the domain:
 *
 *   _validation-persist.example.com. TXT "ca.example; accounturi=https://ca.example/acct/1; policy=wildcard; persistUntil=1767225600"
 *
 * `policy=wildcard` also allows wildcard names (and, per the draft, subdomains); `persistUntil`
 * (seconds since the epoch) ends the record's authority. One module builds the record, parses
 * it and checks it, for the embedded ACME server (which validates it), the ACME issuer (which
 * looks before asking an external CA) and the UI (which shows it and warns before it ends).
 */
import { dnsResolver } from './dns-resolver'

/** `_validation-persist.<domain>`: the record's owner name (draft §3). */
export const persistOwner = (domain: string): string => `_validation-persist.${domain.replace(/^\*\./, '')}`

export interface PersistRecord {
  issuerDomain: string
  accountUri: string | null
  wildcard: boolean
  /** `persistUntil`, null when the record lasts until it is removed. */
  persistUntil: Date | null
  /** A parameter the draft does not define, or one given twice: the record is ignored. */
  malformed: string | null
}

/** The record to publish, as the UI and `GET /orders/{id}/acme` show it. */
export function persistRecordValue(p: {
  issuerDomain: string
  accountUri: string
  wildcard?: boolean
  persistUntil?: Date | null
}): string {
  const parts = [p.issuerDomain.toLowerCase(), `accounturi=${p.accountUri}`]
  if (p.wildcard) parts.push('policy=wildcard')
  if (p.persistUntil) parts.push(`persistUntil=${Math.floor(p.persistUntil.getTime() / 1000)}`)
  return parts.join('; ')
}

/** Parses one TXT value (its strings already joined, RFC 7208 §3.3 style). */
export function parsePersistRecord(txt: string): PersistRecord {
  const [issuer = '', ...params] = txt.split(';').map((s) => s.trim())
  const r: PersistRecord = {
    issuerDomain: issuer.toLowerCase().replace(/\.$/, ''),
    accountUri: null,
    wildcard: false,
    persistUntil: null,
    malformed: null
  }
  const seen = new Set<string>()
  for (const p of params) {
    if (p === '') continue
    const eq = p.indexOf('=')
    const key = (eq < 0 ? p : p.slice(0, eq)).trim().toLowerCase()
    const value = eq < 0 ? '' : p.slice(eq + 1).trim()
    if (seen.has(key)) {
      r.malformed = `${key} is given twice`
      continue
    }
    seen.add(key)
    if (key === 'accounturi') r.accountUri = value
    else if (key === 'policy') r.wildcard = value.toLowerCase() === 'wildcard'
    else if (key === 'persistuntil') {
      if (!/^\d{1,12}$/.test(value)) r.malformed = `persistUntil must be seconds since the epoch, not ${value}`
      else r.persistUntil = new Date(Number(value) * 1000)
    }
    // The draft lets later versions add parameters: unknown ones are ignored, not refused.
  }
  if (!/^[a-z0-9.-]+$/.test(r.issuerDomain)) r.malformed = 'the record does not start with an issuer domain name'
  return r
}

export interface PersistExpectation {
  /** Issuer domain names the CA accepts (the challenge's `issuer-domain-names`). */
  issuerDomains: string[]
  accountUri: string
  /** The authorization is for a wildcard name (draft §4: needs policy=wildcard). */
  wildcard: boolean
  now: Date
}

export type PersistVerdict =
  | { ok: true; record: PersistRecord; value: string }
  | { ok: false; type: 'dns' | 'unauthorized'; reason: string; records: PersistRecord[] }

/**
 * Which of the TXT values authorizes this account at this CA; otherwise why none does, naming
 * the closest record's fault (wrong account, ended, wildcard not allowed) so the admin can fix it.
 */
export function judgePersistRecords(values: string[], want: PersistExpectation): PersistVerdict {
  const issuers = new Set(want.issuerDomains.map((d) => d.toLowerCase()))
  const records = values.map(parsePersistRecord)
  const ours = records.filter((r) => issuers.has(r.issuerDomain))
  if (ours.length === 0)
    return {
      ok: false,
      type: 'unauthorized',
      reason: `no record names the issuer ${[...issuers].join(' or ')}`,
      records
    }
  const faults: string[] = []
  for (const [i, r] of ours.entries()) {
    if (r.malformed) faults.push(r.malformed)
    else if (r.accountUri !== want.accountUri)
      faults.push(`accounturi is ${r.accountUri ?? 'missing'}, not this account (${want.accountUri})`)
    else if (r.persistUntil && r.persistUntil.getTime() < want.now.getTime())
      faults.push(`persistUntil passed on ${r.persistUntil.toISOString()}`)
    else if (want.wildcard && !r.wildcard) faults.push('a wildcard name needs policy=wildcard')
    else return { ok: true, record: r, value: values[records.indexOf(ours[i])] }
  }
  return { ok: false, type: 'unauthorized', reason: faults.join('; '), records }
}

/** Looks the record up through `resolver` (`host:port`, or the system's servers) and judges it. */
export async function checkPersistRecord(
  domain: string,
  resolver: string | null,
  want: PersistExpectation
): Promise<PersistVerdict> {
  const owner = persistOwner(domain)
  let values: string[]
  try {
    values = (await dnsResolver(resolver).resolveTxt(owner)).map((chunks) => chunks.join(''))
  } catch (err) {
    return {
      ok: false,
      type: 'dns',
      reason: `no TXT record at ${owner} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      records: []
    }
  }
  return judgePersistRecords(values, want)
}

/** Days before `persistUntil` when the UI starts warning: a renewal every 47 days must still find it. */
export const PERSIST_WARNING_DAYS = 30
