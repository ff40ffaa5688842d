/**
 * The certificates ACME clients obtained through one subscription (RFC 8555 §7.4.2), for the
 * subscription's page: serial, names, validity and the chain the client downloaded.
 */
import type { CoreContext } from '../context'

export interface AcmeIssuedCertificate {
  serial: string
  names: string[]
  notBefore: string
  notAfter: string
  revoked: boolean
  chainPem: string
}

/** Newest first; every account bound to the subscription counts. */
export async function subscriptionCertificates(
  ctx: CoreContext,
  subscriptionId: number
): Promise<AcmeIssuedCertificate[]> {
  const rows = (await ctx.store.all(
    `SELECT c.serial_hex, c.chain_pem, c.not_before, c.not_after, c.revoked_at, o.identifiers
         FROM acme_certificates c
         JOIN acme_orders o ON o.id = c.order_id
         JOIN acme_accounts a ON a.id = c.account_id
        WHERE a.subscription_id = ?
        ORDER BY c.id DESC`,
    subscriptionId
  )) as {
    serial_hex: string
    chain_pem: string
    not_before: string
    not_after: string
    revoked_at: string | null
    identifiers: string
  }[]
  return rows.map((r) => ({
    serial: r.serial_hex,
    names: JSON.parse(r.identifiers) as string[],
    notBefore: r.not_before,
    notAfter: r.not_after,
    revoked: r.revoked_at !== null,
    chainPem: r.chain_pem
  }))
}
