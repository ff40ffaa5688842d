/**
 * The local CA's certificate revocation list (RFC 5280 §5): every unexpired certificate its
 * intermediate signed and CertDesk revoked (orders' certificates and those of the embedded ACME
 * server), signed by that intermediate, served by CertDesk over HTTP at the address every leaf
 * names in its CRL Distribution Points (local-ca.ts).
 *
 * Baseline Requirements §4.9.7: a CA reissues its CRL at least every seven days, and nextUpdate
 * is at most ten days after thisUpdate. CertDesk signs a new one at once after a revocation, on
 * every scheduler pass once the newest is a day old, and on a request that finds it stale, so
 * the list a client fetches is never past its nextUpdate while CertDesk runs.
 */
import { publicUrlOf } from '../public-url'
import type { CoreContext } from '../context'
import { bitString, seq, tlv, time, TAG, unsignedInteger } from './der'
import { ECDSA_SHA256, extension, type LocalCa } from './local-ca'
import { LOCAL_CA_SETTINGS } from '../settings/setting-keys'
import type { Settings } from '../settings/settings'
import { isoTimestamp, parseDate } from '../time'

/** The path of the CRL on CertDesk's listener (served without an API key: it is public). */
export const CRL_PATH = '/ca/local-ca.crl'
/** The address leaves carry instead of the listener's own: where the admin publishes the CRL. */
export const CRL_URL_SETTING = LOCAL_CA_SETTINGS.crlUrl

/** nextUpdate − thisUpdate: seven days, inside the BR §4.9.7 limit of ten. */
export const CRL_VALIDITY_DAYS = 7
/** A CRL this old is signed again: daily, far ahead of its nextUpdate (machines sleep). */
export const CRL_REFRESH_HOURS = 24

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS

const hexBytes = (hex: string): Buffer => Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex')

/** One revoked certificate as the CRL lists it (RFC 5280 §5.1.2.6). */
export interface CrlEntry {
  serialHex: string
  revokedAt: Date
  /** RFC 5280 §5.3.1 CRLReason; 0 (unspecified) is left out of the entry, as BR §7.2.2 requires. */
  reason: number
}

export interface SignedCrl {
  number: number
  thisUpdate: Date
  nextUpdate: Date
  der: Buffer
}

interface CrlRow {
  number: number
  this_update: string
  next_update: string
  source: string
  der: Buffer
}

/** The revocations of certificates this intermediate signed that have not expired at `now`. */
async function revokedEntries(ctx: CoreContext, now: Date): Promise<CrlEntry[]> {
  const ts = isoTimestamp(now)
  const rows = (await ctx.store.all(
    `SELECT serial AS serial, revoked_at, revocation_reason FROM certificates
        WHERE issuer = 'local-ca' AND revoked_at IS NOT NULL AND valid_till >= ?
       UNION ALL
       SELECT serial_hex, revoked_at, revocation_reason FROM acme_certificates
        WHERE revoked_at IS NOT NULL AND not_after >= ?
       ORDER BY 2, 1`,
    ts,
    ts
  )) as { serial: string; revoked_at: string; revocation_reason: number | null }[]
  return rows.map((r) => ({
    serialHex: r.serial,
    revokedAt: parseDate(r.revoked_at),
    reason: r.revocation_reason ?? 0
  }))
}

/** What the CRL is made from, to tell a stale one without parsing it: count and newest revocation. */
async function sourceOf(ctx: CoreContext): Promise<string> {
  const r = (await ctx.store
    .get(`SELECT (SELECT COUNT(*) FROM certificates WHERE issuer = 'local-ca' AND revoked_at IS NOT NULL)
            + (SELECT COUNT(*) FROM acme_certificates WHERE revoked_at IS NOT NULL) AS n,
              COALESCE((SELECT MAX(t) FROM (SELECT MAX(revoked_at) AS t FROM certificates WHERE issuer = 'local-ca'
                  UNION ALL SELECT MAX(revoked_at) FROM acme_certificates) newest), '') AS newest`)) as {
    n: number
    newest: string
  }
  return `${r.n}:${r.newest}`
}

/**
 * The DER CertificateList (RFC 5280 §5.1): v2, ecdsa-with-SHA256, the intermediate's subject,
 * thisUpdate and nextUpdate, the entries (each with its reasonCode, §5.3.1, unless
 * unspecified), and the authorityKeyIdentifier (§5.2.1) and cRLNumber (§5.2.3) extensions.
 */
export function buildCrl(
  issuer: { subjectDer: Buffer; aki: Buffer; sign(tbs: Buffer): Buffer },
  number: number,
  thisUpdate: Date,
  nextUpdate: Date,
  entries: CrlEntry[]
): Buffer {
  const revoked = entries.map((e) =>
    seq(
      unsignedInteger(hexBytes(e.serialHex)),
      time(e.revokedAt),
      ...(e.reason > 0 ? [seq(extension('2.5.29.21', false, tlv(0x0a, Buffer.from([e.reason]))))] : [])
    )
  )
  const crlNumber = extension('2.5.29.20', false, unsignedInteger(hexBytes(number.toString(16))))
  const tbs = seq(
    tlv(TAG.integer, Buffer.from([1])),
    ECDSA_SHA256,
    issuer.subjectDer,
    time(thisUpdate),
    time(nextUpdate),
    // An empty revokedCertificates is left out, never sent as an empty SEQUENCE (§5.1.2.6).
    // One buffer, not a spread: a list of a hundred thousand entries must not overflow the stack.
    ...(revoked.length > 0 ? [tlv(TAG.sequence, Buffer.concat(revoked))] : []),
    tlv(0xa0, seq(issuer.aki, crlNumber))
  )
  return seq(tbs, ECDSA_SHA256, bitString(issuer.sign(tbs)))
}

export class LocalCaCrl {
  /** The listener's own address, when this process serves one (http/server.ts `listen`). */
  listenerUrl: string | null = null

  constructor(
    private readonly ctx: CoreContext,
    private readonly settings: Settings,
    private readonly ca: LocalCa
  ) {}

  /**
   * The address leaves name as their CRL Distribution Point: the setting when the admin set one
   * (a public web server the CRL is copied to), else the public base URL when one is set (the
   * public listener serves the CRL, so relying parties off this machine can fetch it), else this
   * process's listener, else the default listener address of `certdesk serve` on this machine.
   */
  async url(): Promise<string> {
    const set = await this.settings.get(CRL_URL_SETTING)
    if (set) return set
    const base = (await publicUrlOf(this.settings))?.base ?? this.listenerUrl ?? 'http://127.0.0.1:7780'
    return `${base}${CRL_PATH}`
  }

  /**
   * The newest CRL, signed again first when a revocation is newer or it is a day old; null
   * while the local CA does not exist (it has signed nothing to list).
   */
  async current(): Promise<SignedCrl | null> {
    if (!(await this.caExists())) return null
    const now = this.ctx.clock()
    const newest = await this.newest()
    if (newest && !(await this.due(newest, now))) return signedOf(newest)
    // Requests that find the list stale at the same moment share one signing (a revocation
    // signs on its own, after its commit, so it never shares one that started before it).
    this.refreshing ??= this.publish().finally(() => {
      this.refreshing = null
    })
    return this.refreshing
  }

  private refreshing: Promise<SignedCrl> | null = null

  /** The scheduler's part: a new CRL when one is due (or none exists yet). */
  async refreshIfDue(): Promise<SignedCrl | null> {
    if (!(await this.caExists())) return null
    const newest = await this.newest()
    return newest && !(await this.due(newest, this.ctx.clock())) ? null : this.publish()
  }

  /** Signs a new CRL now, with the next cRLNumber; one writer at a time through SQLite's lock. */
  async publish(): Promise<SignedCrl> {
    const issuer = await this.ca.crlIssuer()
    const db = this.ctx.store
    const row = await db.tx(async (): Promise<CrlRow> => {
      const now = this.ctx.clock()
      const last = (await db.get('SELECT MAX(number) AS n FROM local_ca_crls')) as { n: number | null }
      const number = (last.n ?? 0) + 1
      const thisUpdate = new Date(Math.floor(now.getTime() / 1000) * 1000)
      const nextUpdate = new Date(thisUpdate.getTime() + CRL_VALIDITY_DAYS * DAY_MS)
      const der = buildCrl(issuer, number, thisUpdate, nextUpdate, await revokedEntries(this.ctx, now))
      const made = {
        number,
        this_update: isoTimestamp(thisUpdate),
        next_update: isoTimestamp(nextUpdate),
        source: await sourceOf(this.ctx),
        der
      }
      await db.run(
        'INSERT INTO local_ca_crls (number, this_update, next_update, source, der) VALUES (?, ?, ?, ?, ?)',
        made.number,
        made.this_update,
        made.next_update,
        made.source,
        made.der
      )
      // Older lists are never served again; a few are kept to read back what was published.
      await db.run('DELETE FROM local_ca_crls WHERE number <= ?', number - 10)
      return made
    })
    return signedOf(row)
  }

  /** Made on first use (local-ca.ts); a store that never issued has no CA and no CRL to sign. */
  private async caExists(): Promise<boolean> {
    return (await this.ctx.store.get(`SELECT 1 FROM ca_keys WHERE role = 'intermediate'`)) !== undefined
  }

  private async newest(): Promise<CrlRow | undefined> {
    return (await this.ctx.store.get('SELECT * FROM local_ca_crls ORDER BY number DESC LIMIT 1')) as CrlRow | undefined
  }

  private async due(row: CrlRow, now: Date): Promise<boolean> {
    const age = now.getTime() - parseDate(row.this_update).getTime()
    // A clock set back behind thisUpdate gets a list that is valid at its own time.
    return age < 0 || age >= CRL_REFRESH_HOURS * HOUR_MS || row.source !== (await sourceOf(this.ctx))
  }
}

const signedOf = (r: CrlRow): SignedCrl => ({
  number: r.number,
  thisUpdate: parseDate(r.this_update),
  nextUpdate: parseDate(r.next_update),
  der: Buffer.from(r.der)
})
