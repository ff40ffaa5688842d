/**
 * Certificates the embedded ACME server issued: download by the ordering account (RFC 8555
 * §7.4.2), revocation by that account or the holder of the certificate key (§7.6), and the
 * ACME Renewal Information window (RFC 9773 §4).
 */
import type { CoreContext } from '../context'
import { addDays, isoTimestamp } from '../time'
import { x509 } from '../certificates/x509'
import { AcmeError, noSuch } from './errors'
import { storedTime, type AcmeAccount, type CertRow } from './records'
import { ariCertId } from './signer'

export interface RenewalWindow {
  start: Date
  end: Date
}

export interface RevokeRequest {
  /** The request's `certificate` member: base64url DER (§7.6). */
  certificate: unknown
  /** The request's `reason` member: an RFC 5280 §5.3.1 reason code, 0 when absent. */
  reason: unknown
  /** The signer: the account (a `kid` request) or the certificate key (a `jwk` request). */
  by: { account: AcmeAccount } | { keySpkiSha256: () => Promise<string> }
}

/** RFC 9773 §4.2 leaves the renewal policy to the server; the spec reissues 14 days before the end. */
const REISSUE_LEAD_DAYS = 14

/**
 * RFC 9773 §4.2 suggested window. Renew in the last third of the lifetime (so a 200-day
 * certificate is renewed about 66 days before it ends, and a 47-day one about 16 days before,
 * never later than the spec's 14-day reissue lead); a revoked certificate at once.
 */
export function renewalWindow(c: { notBefore: Date; notAfter: Date; revoked: boolean }, now: Date): RenewalWindow {
  if (c.revoked) return { start: addDays(now, -1), end: now }
  const from = c.notBefore.getTime()
  const to = c.notAfter.getTime()
  const life = to - from
  const latest = Math.min(to - life / 6, to - REISSUE_LEAD_DAYS * 86_400_000)
  return {
    start: new Date(to - life / 3),
    end: new Date(Math.max(latest, to - life / 3 + 3_600_000))
  }
}

export class AcmeCertificates {
  constructor(private readonly ctx: CoreContext) {}

  /** §7.4.2: the leaf followed by the chain, one PEM file, for the account that ordered it. */
  async chain(account: AcmeAccount, certPublicId: string): Promise<string> {
    const c = (await this.ctx.store.get('SELECT * FROM acme_certificates WHERE public_id = ?', certPublicId)) as
      CertRow | undefined
    if (!c || c.account_id !== account.id) throw noSuch('certificate')
    return c.chain_pem
  }

  /** §7.6: either the account that ordered it or the holder of the certificate key may revoke. */
  async revoke(req: RevokeRequest): Promise<void> {
    if (typeof req.certificate !== 'string') throw new AcmeError('malformed', 'certificate is required (base64url DER)')
    let cert: x509.X509Certificate
    try {
      cert = new x509.X509Certificate(Buffer.from(req.certificate, 'base64url'))
    } catch {
      throw new AcmeError('malformed', 'could not decode the certificate')
    }
    const reason = req.reason === undefined ? 0 : req.reason
    // RFC 5280 §5.3.1 reason codes; 7 is unused and §7.6 leaves the rest to policy.
    if (typeof reason !== 'number' || !Number.isInteger(reason) || reason < 0 || reason > 10 || reason === 7) {
      throw new AcmeError('badRevocationReason', 'reason must be an RFC 5280 reason code (0-10, not 7)')
    }
    const row = await this.byCertId(ariCertId(cert))
    if (!row) throw new AcmeError('malformed', 'this server did not issue that certificate', 404)
    if ('account' in req.by) {
      if (row.account_id !== req.by.account.id)
        throw new AcmeError('unauthorized', 'the account did not order this certificate')
    } else if ((await req.by.keySpkiSha256()) !== row.spki_sha256) {
      throw new AcmeError('unauthorized', 'the JWS key is not the key of this certificate')
    }
    const revoked = await this.ctx.store.run(
      'UPDATE acme_certificates SET revoked_at = ?, revocation_reason = ? WHERE id = ? AND revoked_at IS NULL',
      isoTimestamp(this.ctx.clock()),
      reason,
      row.id
    )
    if (revoked.changes === 0) throw new AcmeError('alreadyRevoked', 'the certificate is already revoked')
  }

  /** RFC 9773 §4: the suggested renewal window of a certificate named by its CertID. */
  async renewalInfo(certId: string): Promise<RenewalWindow> {
    const row = await this.byCertId(certId)
    if (!row) throw new AcmeError('malformed', 'no certificate with this CertID (RFC 9773 §4.1)', 404)
    if (row.renewal_start && row.renewal_end && row.revoked_at === null)
      return { start: storedTime(row.renewal_start), end: storedTime(row.renewal_end) }
    return renewalWindow(
      { notBefore: storedTime(row.not_before), notAfter: storedTime(row.not_after), revoked: row.revoked_at !== null },
      this.ctx.clock()
    )
  }

  /**
   * An admin moves one certificate's window into the past, as a CA does before revoking many
   * certificates at once (RFC 9773 §4.2): clients that follow ARI renew at their next look.
   * The certificate is named by its CertID or its serial number (hex).
   */
  async moveWindowToPast(certIdOrSerial: string): Promise<{ certId: string; start: Date; end: Date }> {
    const key = certIdOrSerial.trim()
    const row = ((await this.byCertId(key)) ??
      (await this.ctx.store.get(
        `SELECT * FROM acme_certificates WHERE ltrim(serial_hex, '0') = ?`,
        key.toLowerCase().replace(/^0+/, '').replace(/:/g, '')
      ))) as CertRow | undefined
    if (!row) throw new AcmeError('malformed', `could not move the renewal window: no certificate ${key}`, 404)
    const now = this.ctx.clock()
    const start = addDays(now, -2)
    const end = addDays(now, -1)
    await this.ctx.store.run(
      'UPDATE acme_certificates SET renewal_start = ?, renewal_end = ? WHERE id = ?',
      isoTimestamp(start),
      isoTimestamp(end),
      row.id
    )
    return { certId: row.ari_id, start, end }
  }

  private async byCertId(certId: string): Promise<CertRow | undefined> {
    return (await this.ctx.store.get('SELECT * FROM acme_certificates WHERE ari_id = ?', certId)) as CertRow | undefined
  }
}
