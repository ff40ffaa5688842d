/**
 * Private keys generated in the desktop UI, kept per order on this machine: they stay on the
 * machine, encrypted, and only the desktop user exports them. AES-256-GCM under a random
 * wrapping key that lives only in the OS keychain; the order id is bound in as additional data,
 * so a row copied to another order fails to open. Beside a key: the CSR generated with it, until
 * the order takes a CSR. Nothing here is reachable from the reseller HTTP API.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createPrivateKey,
  createPublicKey,
  randomBytes,
  X509Certificate,
  type KeyObject
} from 'node:crypto'
import type { KeyKeeper } from './'
import type { CoreContext } from '../context'
import { decodeCsr } from './csr'
import { csrFromKey } from './csr-from-key'
import { assertCsrNames } from './csr-names'
import { conflict, invalid, notFound, ServiceError } from '../errors'
import type { Order, Orders } from '../orders/orders'
import { isoTimestamp } from '../time'
import { x509 } from './x509'

const WRAPPING_KEY_NAME = 'key-vault:wrapping-key'
const PKCS8_RE = /^-----BEGIN PRIVATE KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PRIVATE KEY-----\s*$/
/** A PKCS#8 RSA 4096 key is about 3.3 kB in PEM; anything far larger is not a key. */
const MAX_PEM_LENGTH = 16_384
/** A CSR with a 4096-bit key and a few hundred names stays well inside this. */
const MAX_CSR_LENGTH = 65_536

/** A CSR generated in the app with the order's kept key, not submitted yet. */
export type { CsrDraft } from '../../../src-shared/records'
import type { CsrDraft } from '../../../src-shared/records'

const spkiDer = (k: KeyObject): Buffer => k.export({ type: 'spki', format: 'der' })
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex')

export class KeyVault implements KeyKeeper {
  constructor(
    private readonly ctx: CoreContext,
    private readonly orders: Orders
  ) {}

  /** Keeps a key (replacing the order's earlier one, and the CSR kept with that). */
  async store(resellerId: number, orderId: number, pkcs8Pem: string): Promise<void> {
    await this.write(await this.orders.get(resellerId, orderId), pkcs8Pem, null)
  }

  /**
   * Keeps a key and the CSR generated with it for an order that has not taken a CSR yet, until
   * it is submitted or discarded. The CSR must be signed by that very key (RFC 2986 §3), so a
   * draft can never pair a kept key with somebody else's request.
   */
  async keepDraft(resellerId: number, orderId: number, pkcs8Pem: string, csrPem: string): Promise<CsrDraft> {
    const order = await this.orders.get(resellerId, orderId)
    if (order.status !== 'pending') {
      throw conflict(
        `could not keep the CSR of order ${order.orderNumber}: it is ${order.status}; only an order waiting for its CSR keeps one`
      )
    }
    if (typeof csrPem !== 'string' || csrPem.length > MAX_CSR_LENGTH) {
      throw invalid('could not keep the CSR: it is not a PEM certificate signing request of at most 64 KiB')
    }
    const csr = await decodeCsr(csrPem)
    assertCsrNames(csr, 'could not keep the CSR')
    if (!csr.signatureValid) throw invalid('could not keep the CSR: its signature does not verify')
    const key = this.publicKeyOf(pkcs8Pem)
    if (!key || !Buffer.from(new x509.Pkcs10CertificateRequest(csr.der).publicKey.rawData).equals(spkiDer(key))) {
      throw invalid('could not keep the CSR: it was not made with this private key')
    }
    await this.write(order, pkcs8Pem, csr.pem)
    return (await this.draft(resellerId, orderId)) as CsrDraft
  }

  /**
   * The kept CSR of an order still waiting for one, or null. Checked against the kept key on
   * every read: a CSR changed in the database behind the app's back is refused, not offered
   * for submission.
   */
  async draft(resellerId: number, orderId: number): Promise<CsrDraft | null> {
    const order = await this.orders.get(resellerId, orderId)
    if (order.status !== 'pending') return null
    const row = (await this.ctx.store.get(
      'SELECT csr_pem, created_at FROM order_private_keys WHERE order_id = ? AND csr_pem IS NOT NULL',
      order.id
    )) as { csr_pem: string; created_at: string } | undefined
    if (!row) return null
    const key = this.publicKeyOf((await this.decrypt(order.id)) ?? '')
    let csrKey: Buffer | null = null
    try {
      csrKey = Buffer.from(new x509.Pkcs10CertificateRequest(row.csr_pem).publicKey.rawData)
    } catch {
      // not a CSR any more: refused below
    }
    if (!key || !csrKey || !csrKey.equals(spkiDer(key))) {
      throw conflict(
        `could not read the kept CSR of order ${order.orderNumber}: it no longer belongs to the kept private key; discard it and generate a new one`
      )
    }
    return { csrPem: row.csr_pem, createdAt: row.created_at }
  }

  /**
   * Forgets an order's kept key and its CSR, while the order has not taken a CSR: once one is
   * submitted the key belongs to the certificate the order gets, and stays.
   */
  async discardDraft(resellerId: number, orderId: number): Promise<void> {
    const order = await this.orders.get(resellerId, orderId)
    const submitted = await this.ctx.store.get('SELECT 1 FROM certificate_requests WHERE order_id = ?', order.id)
    if (submitted) {
      throw conflict(
        `could not discard the private key of order ${order.orderNumber}: the order has taken a CSR, and the key belongs to its certificate`
      )
    }
    await this.ctx.store.run('DELETE FROM order_private_keys WHERE order_id = ?', order.id)
  }

  private async write(order: Order, pkcs8Pem: string, csrPem: string | null): Promise<void> {
    checkPem(pkcs8Pem, 'store')
    if (order.status === 'cancelled' || order.status === 'expired') {
      throw invalid(`could not store the private key: order ${order.orderNumber} is ${order.status}`)
    }
    const sealed = await this.seal(order.id, pkcs8Pem)
    await this.ctx.store.run(
      `INSERT INTO order_private_keys (order_id, reseller_id, iv, ciphertext, tag, created_at, csr_pem) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(order_id) DO UPDATE SET iv = excluded.iv, ciphertext = excluded.ciphertext, tag = excluded.tag,
           created_at = excluded.created_at, csr_pem = excluded.csr_pem`,
      order.id,
      order.resellerId,
      sealed.iv,
      sealed.ciphertext,
      sealed.tag,
      isoTimestamp(this.ctx.clock()),
      csrPem
    )
  }

  /** The public half of a PKCS#8 PEM, or null when it is not a key Node can read. */
  private publicKeyOf(pkcs8Pem: string): KeyObject | null {
    try {
      return createPublicKey(pkcs8Pem)
    } catch {
      return null
    }
  }

  /**
   * Holds the key generated for a reissue CSR until its certificate is stored (`promote`); the
   * kept key of the current certificate stays as it is meanwhile, and stays for good if the
   * reissue never completes. The key must be the one the CSR was made from.
   */
  async stage(resellerId: number, orderId: number, pkcs8Pem: string, csrDer: Buffer): Promise<void> {
    await this.orders.get(resellerId, orderId)
    checkPem(pkcs8Pem, 'keep')
    let publicKey: Buffer
    try {
      publicKey = spkiDer(createPublicKey(createPrivateKey(pkcs8Pem)))
    } catch {
      throw invalid('could not keep the new private key: it is not a readable PKCS#8 key')
    }
    const csrKey = Buffer.from(new x509.Pkcs10CertificateRequest(csrDer).publicKey.rawData)
    if (!publicKey.equals(csrKey)) {
      throw invalid('could not keep the new private key: it is not the key the CSR was made from')
    }
    const sealed = await this.seal(orderId, pkcs8Pem)
    await this.ctx.store.run(
      `INSERT INTO order_staged_keys (order_id, reseller_id, spki_sha256, iv, ciphertext, tag, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(order_id) DO UPDATE SET spki_sha256 = excluded.spki_sha256, iv = excluded.iv,
           ciphertext = excluded.ciphertext, tag = excluded.tag, created_at = excluded.created_at`,
      orderId,
      resellerId,
      sha256(publicKey),
      sealed.iv,
      sealed.ciphertext,
      sealed.tag,
      isoTimestamp(this.ctx.clock())
    )
  }

  /**
   * Called inside the transaction that stores a certificate: the held key becomes the order's
   * kept key when it is the certificate's key; a held key for another key pair is dropped (its
   * CSR was replaced). Only moves ciphertext, so it never needs the keychain.
   */
  async promote(orderId: number, certificatePem: string): Promise<void> {
    const staged = (await this.ctx.store.get(
      'SELECT reseller_id, spki_sha256, iv, ciphertext, tag, created_at FROM order_staged_keys WHERE order_id = ?',
      orderId
    )) as
      | { reseller_id: number; spki_sha256: string; iv: Buffer; ciphertext: Buffer; tag: Buffer; created_at: string }
      | undefined
    if (!staged) return
    let certKey: string | null
    try {
      certKey = sha256(spkiDer(new X509Certificate(certificatePem).publicKey))
    } catch {
      certKey = null
    }
    if (certKey === staged.spki_sha256) {
      // The same order id is the associated data of both tables, so the ciphertext moves as is.
      await this.ctx.store.run(
        `INSERT INTO order_private_keys (order_id, reseller_id, iv, ciphertext, tag, created_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT(order_id) DO UPDATE SET iv = excluded.iv, ciphertext = excluded.ciphertext, tag = excluded.tag,
             created_at = excluded.created_at, csr_pem = NULL`,
        orderId,
        staged.reseller_id,
        staged.iv,
        staged.ciphertext,
        staged.tag,
        isoTimestamp(this.ctx.clock())
      )
    }
    await this.discard(orderId)
  }

  async discard(orderId: number): Promise<void> {
    await this.ctx.store.run('DELETE FROM order_staged_keys WHERE order_id = ?', orderId)
  }

  async has(orderId: number): Promise<boolean> {
    return (await this.ctx.store.get('SELECT 1 FROM order_private_keys WHERE order_id = ?', orderId)) !== undefined
  }

  /** Order ids among `ids` that have a stored key, for list views. */
  async withKeys(ids: number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set()
    const rows = (await this.ctx.store.all(
      `SELECT order_id AS id FROM order_private_keys WHERE order_id IN (${ids.map(() => '?').join(',')})`,
      ...ids
    )) as { id: number }[]
    return new Set(rows.map((r) => r.id))
  }

  async read(resellerId: number, orderId: number): Promise<string> {
    await this.orders.get(resellerId, orderId)
    const key = await this.decrypt(orderId)
    if (key === null) throw notFound(`no private key is kept for order ${orderId}; it was not generated in CertDesk`)
    return key
  }

  /**
   * The kept key of an order, but only when it belongs to `certificatePem` (a key generated for
   * a later reissue must never be deployed next to an older certificate); null otherwise.
   */
  async keyMatching(orderId: number, certificatePem: string): Promise<string | null> {
    const key = await this.decrypt(orderId)
    if (key === null) return null
    const certKey = new X509Certificate(certificatePem).publicKey
    return spkiDer(createPublicKey(key)).equals(spkiDer(certKey)) ? key : null
  }

  /** A CSR for `names` signed by the kept key of `certificatePem`; null when that key is not kept. */
  async csrFor(orderId: number, certificatePem: string, names: string[]): Promise<string | null> {
    const key = await this.keyMatching(orderId, certificatePem)
    return key === null ? null : csrFromKey(key, names)
  }

  /**
   * Wraps the key of a certificate imported from elsewhere (imports/), under the same keychain
   * key; the imported certificate's id is bound in as additional data. Layout: iv, tag, ciphertext.
   */
  async wrapImported(certificateId: number, pkcs8Pem: string): Promise<Buffer> {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', await this.wrappingKey(true), iv)
    cipher.setAAD(Buffer.from(`imported:${certificateId}`))
    const ciphertext = Buffer.concat([cipher.update(pkcs8Pem.trim() + '\n', 'utf8'), cipher.final()])
    return Buffer.concat([iv, cipher.getAuthTag(), ciphertext])
  }

  async unwrapImported(certificateId: number, sealed: Buffer): Promise<string> {
    const decipher = createDecipheriv('aes-256-gcm', await this.wrappingKey(false), sealed.subarray(0, 12))
    decipher.setAAD(Buffer.from(`imported:${certificateId}`))
    decipher.setAuthTag(sealed.subarray(12, 28))
    return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8')
  }

  private async seal(orderId: number, pkcs8Pem: string): Promise<{ iv: Buffer; ciphertext: Buffer; tag: Buffer }> {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', await this.wrappingKey(true), iv)
    cipher.setAAD(Buffer.from(`order:${orderId}`))
    const ciphertext = Buffer.concat([cipher.update(pkcs8Pem.trim() + '\n', 'utf8'), cipher.final()])
    return { iv, ciphertext, tag: cipher.getAuthTag() }
  }

  private async decrypt(orderId: number): Promise<string | null> {
    const row = (await this.ctx.store.get(
      'SELECT iv, ciphertext, tag FROM order_private_keys WHERE order_id = ?',
      orderId
    )) as { iv: Buffer; ciphertext: Buffer; tag: Buffer } | undefined
    if (!row) return null
    try {
      const decipher = createDecipheriv('aes-256-gcm', await this.wrappingKey(false), row.iv)
      decipher.setAAD(Buffer.from(`order:${orderId}`))
      decipher.setAuthTag(row.tag)
      return Buffer.concat([decipher.update(row.ciphertext), decipher.final()]).toString('utf8')
    } catch (err) {
      if (err instanceof ServiceError) throw err
      throw new ServiceError(
        'unavailable',
        `could not decrypt the private key of order ${orderId}: the keychain holds another wrapping key`
      )
    }
  }

  private async wrappingKey(create: boolean): Promise<Buffer> {
    const existing = await this.ctx.secrets.get(WRAPPING_KEY_NAME)
    if (existing) return Buffer.from(existing, 'base64')
    if (!create) throw new ServiceError('unavailable', 'could not read the key-vault wrapping key from the OS keychain')
    const key = randomBytes(32)
    await this.ctx.secrets.set(WRAPPING_KEY_NAME, key.toString('base64'))
    return key
  }
}

function checkPem(pkcs8Pem: unknown, verb: 'store' | 'keep'): asserts pkcs8Pem is string {
  if (typeof pkcs8Pem !== 'string' || pkcs8Pem.length > MAX_PEM_LENGTH || !PKCS8_RE.test(pkcs8Pem.trim() + '\n')) {
    throw invalid(`could not ${verb} the private key: it is not an unencrypted PKCS#8 PEM ("BEGIN PRIVATE KEY")`)
  }
}
