/**
 * A CSR generated in the desktop app is kept with its key (core/certificates/key-vault.ts) until the order
 * takes a CSR or the user discards both: across a restart, never as plain key material on disk,
 * never paired with a CSR of another key.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import type { Service } from '../../src-main/core/service'
import { openService, storedBytes } from '../support/engine'
import { startWeb, type WebServer } from '../support/dcv-servers'

const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-draft-csr-'))
const work = mkdtempSync(join(tmpdir(), 'certdesk-draft-keys-'))
let service: Service
let web: WebServer
let resellerId: number
let otherReseller: number

beforeAll(async () => {
  web = await startWeb()
  service = await openService({ dataDir })
  await service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  resellerId = (await service.resellers.create({ name: 'Drafts', email: 'ops@drafts.test', groupId: 1 })).id
  otherReseller = (await service.resellers.create({ name: 'Other', email: 'ops@other.test', groupId: 1 })).id
  await service.ledger.topUp(resellerId, 100_000)
})
afterAll(async () => {
  await service?.close()
  await web?.close()
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(work, { recursive: true, force: true })
})

let n = 0
/** A P-256 key (PKCS#8 PEM, as the app's WebCrypto exports it) and a CSR signed by it. */
function pair(domain: string): { key: string; csr: string } {
  const keyout = join(work, `k${++n}.pem`)
  const csr = execFileSync(
    'openssl',
    [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      keyout,
      '-subj',
      `/CN=${domain}`
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }
  )
  return { key: readFileSync(keyout, 'utf8'), csr }
}
const order = async (domain: string): Promise<number> =>
  (await service.orders.create(await service.resellers.get(resellerId), { productId: 2, domain, period: 12 })).order.id
const vault = () => service.keyVault
const fail = async (p: Promise<unknown> | (() => unknown)): Promise<{ kind: string; message: string }> => {
  try {
    await (typeof p === 'function' ? p() : p)
  } catch (err) {
    return { kind: (err as { kind: string }).kind, message: (err as Error).message }
  }
  throw new Error('expected a refusal')
}

describe('a CSR generated in the app', () => {
  it('is kept with its key until it is submitted, across a restart, and the key never lies plain on disk', async () => {
    const id = await order('keep.example.com')
    const { key, csr } = pair('keep.example.com')
    expect(await vault().draft(resellerId, id)).toBeNull()
    const kept = await vault().keepDraft(resellerId, id, key, csr)
    expect(kept).toEqual({ csrPem: csr, createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/) })
    expect(await vault().has(id)).toBe(true)

    // Another process (the app after a restart) finds both again.
    await service.close()
    service = await openService({ dataDir })
    expect(await vault().draft(resellerId, id)).toEqual(kept)
    expect(await vault().read(resellerId, id)).toBe(key.trim() + '\n')
    for (const { where, bytes } of storedBytes(service))
      expect(bytes.includes(Buffer.from(key.split('\n')[1])), where).toBe(false)

    // Submitted: no longer a draft, and the key now belongs to the order's certificate.
    await service.certificates.configure(resellerId, { orderId: id, csr: kept.csrPem, dcvMethod: 'http' })
    expect(await vault().draft(resellerId, id)).toBeNull()
    expect(await fail(async () => await vault().discardDraft(resellerId, id))).toEqual({
      kind: 'conflict',
      message: expect.stringMatching(
        /could not discard the private key of order ORD-\d{4}-\d{6}: the order has taken a CSR/
      )
    })
    expect(await vault().read(resellerId, id)).toBe(key.trim() + '\n')
  })

  it('is forgotten with its key when discarded, and generating again replaces both', async () => {
    const id = await order('discard.example.com')
    const first = pair('discard.example.com')
    await vault().keepDraft(resellerId, id, first.key, first.csr)
    const second = pair('discard.example.com')
    await vault().keepDraft(resellerId, id, second.key, second.csr)
    expect((await vault().draft(resellerId, id))?.csrPem).toBe(second.csr)
    expect(await vault().read(resellerId, id)).toBe(second.key.trim() + '\n')
    // Another reseller cannot discard it (404, as for anything of another account).
    expect((await fail(async () => await vault().discardDraft(otherReseller, id))).kind).toBe('not_found')
    await vault().discardDraft(resellerId, id)
    expect(await vault().draft(resellerId, id)).toBeNull()
    expect(await vault().has(id)).toBe(false)
    expect((await fail(async () => await vault().read(resellerId, id))).kind).toBe('not_found')
  })

  it('is refused unless the CSR was signed by the key kept with it, and for an order past its CSR step', async () => {
    const id = await order('pair.example.com')
    const mine = pair('pair.example.com')
    const theirs = pair('pair.example.com')
    expect(await fail(vault().keepDraft(resellerId, id, mine.key, theirs.csr))).toEqual({
      kind: 'invalid',
      message: 'could not keep the CSR: it was not made with this private key'
    })
    for (const [key, csr, message] of [
      [mine.key, 'not a csr', /could not decode CSR/],
      [mine.key, mine.csr.replace(/\n-----END/, 'A'.repeat(70_000) + '\n-----END'), /at most 64 KiB/],
      ['-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n', mine.csr, /not made with this private key/],
      [mine.csr, mine.csr, /not made with this private key/]
    ] as const) {
      const r = await fail(vault().keepDraft(resellerId, id, key, csr))
      expect(r.kind).toBe('invalid')
      expect(r.message).toMatch(message)
      // A refused key never comes back in the message.
      expect(r.message).not.toContain('PRIVATE KEY')
    }
    expect(await vault().has(id)).toBe(false)

    const cancelled = await order('gone.example.com')
    await service.orders.cancel(resellerId, cancelled)
    const gone = pair('gone.example.com')
    expect((await fail(vault().keepDraft(resellerId, cancelled, gone.key, gone.csr))).kind).toBe('conflict')
  })

  it('is not offered once the CSR in the database no longer belongs to the kept key', async () => {
    const id = await order('swap.example.com')
    const mine = pair('swap.example.com')
    await vault().keepDraft(resellerId, id, mine.key, mine.csr)
    // Someone with write access to the data dir swaps in a CSR of their own key.
    const theirs = pair('swap.example.com')
    await service.ctx.store.run('UPDATE order_private_keys SET csr_pem = ? WHERE order_id = ?', theirs.csr, id)
    expect(await fail(async () => await vault().draft(resellerId, id))).toEqual({
      kind: 'conflict',
      message: expect.stringMatching(/it no longer belongs to the kept private key; discard it/)
    })
    await vault().discardDraft(resellerId, id)
    expect(await vault().draft(resellerId, id)).toBeNull()
  })
})
