/**
 * Order finalization (RFC 8555 §7.4): the CSR of a ready order is checked against the order
 * and the account, the certificate is signed for the subscription's validity window, and the
 * order becomes valid with its certificate, marking the certificate it replaces (RFC 9773 §5).
 */
import { createHash } from 'node:crypto'
import type { AcmeSubscriptions } from './acme-subscriptions'
import type { CoreContext } from '../context'
import { assertAcceptableCsr, readCsr, type ReadCsr } from '../certificates/csr'
import { ServiceError } from '../errors'
import { isoTimestamp } from '../time'
import { AcmeError, acmeErrorDocument } from './errors'
import type { AcmeOrders } from './orders'
import { publicId, type AcmeAccount, type AcmeOrder } from './records'
import type { AcmeSigner } from './signer'

export interface FinalizeRequest {
  /** The request's `csr` member: base64url DER (§7.4); anything else is refused. */
  csr: unknown
}

export class AcmeFinalizer {
  constructor(
    private readonly ctx: CoreContext,
    private readonly subscriptions: AcmeSubscriptions,
    private readonly orders: AcmeOrders,
    private readonly signer: AcmeSigner
  ) {}

  async finalize(account: AcmeAccount, orderPublicId: string, req: FinalizeRequest): Promise<AcmeOrder> {
    const o = await this.orders.owned(account, orderPublicId)
    if (o.status !== 'ready') throw new AcmeError('orderNotReady', `the order is ${o.status}, not ready`)
    if (typeof req.csr !== 'string') throw new AcmeError('malformed', 'csr is required (base64url DER)')
    // Decoded and its signature checked once (../csr.ts); everything below reads this one result.
    const der = Buffer.from(req.csr, 'base64url')
    let read: ReadCsr
    try {
      read = await readCsr(der)
    } catch (err) {
      if (err instanceof ServiceError) throw new AcmeError('badCSR', 'could not decode the CSR')
      throw err
    }
    if (!read.csr.signatureValid) throw new AcmeError('badCSR', 'the CSR signature does not verify')
    const cns = read.commonNames
    const requested = new Set([...read.sanDnsNames, ...cns])
    const ordered = new Set(JSON.parse(o.identifiers) as string[])
    // §7.4: the CSR must ask for exactly the names of the order.
    if (requested.size !== ordered.size || [...requested].some((n) => !ordered.has(n))) {
      throw new AcmeError(
        'badCSR',
        `the CSR names ${[...requested].join(', ') || 'nothing'} but the order is for ${[...ordered].join(', ')}`
      )
    }
    // The CSR policy of every issuance path (../csr.ts): key type and size, and not the account key.
    try {
      assertAcceptableCsr(read.csr, 'tls', { accountKey: account.jwk })
    } catch (err) {
      if (err instanceof ServiceError) throw new AcmeError('badCSR', err.message)
      throw err
    }
    const spkiHash = createHash('sha256').update(read.csr.spki).digest('hex')
    const db = this.ctx.store
    // Two finalize requests at once: only the one that moves the order out of `ready` signs.
    const claimed = await db.run(`UPDATE acme_orders SET status = 'processing' WHERE id = ? AND status = 'ready'`, o.id)
    if (claimed.changes === 0) throw new AcmeError('orderNotReady', 'the order is already being finalized')
    const sub = await this.subscriptions.byId(account.subscriptionId)
    const window = this.subscriptions.certificateWindow(sub, this.ctx.clock())
    const names = [...ordered]
    // The name asked for first goes into the CN, as clients expect.
    names.sort((x, y) => (x === cns[0] ? -1 : y === cns[0] ? 1 : 0))
    let issued
    try {
      issued = await this.signer.issue(der, names, window.notBefore, window.notAfter)
    } catch (err) {
      const message = `could not issue the certificate: ${(err as Error).message}`
      await db.run(
        `UPDATE acme_orders SET status = 'invalid', error = ? WHERE id = ?`,
        JSON.stringify(acmeErrorDocument('serverInternal', message)),
        o.id
      )
      throw new AcmeError('serverInternal', message)
    }
    await db.tx(async () => {
      const info = await db.insert(
        `INSERT INTO acme_certificates (public_id, order_id, account_id, serial_hex, ari_id, spki_sha256, chain_pem, not_before, not_after)
                  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        publicId(),
        o.id,
        account.id,
        issued.serialHex,
        issued.ariId,
        spkiHash,
        issued.chainPem,
        isoTimestamp(issued.notBefore),
        isoTimestamp(issued.notAfter)
      )
      if (o.replaces) await db.run('UPDATE acme_certificates SET replaced_by = ? WHERE ari_id = ?', info, o.replaces)
      await db.run(`UPDATE acme_orders SET status = 'valid' WHERE id = ?`, o.id)
    })
    return await this.orders.view(await this.orders.rowById(o.id))
  }
}
