import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/server'
import { createTestCa, type TestCa } from '../support/test-ca'

let s: TestServer
let ca: TestCa
const work = mkdtempSync(join(tmpdir(), 'certdesk-kept-keys-'))

beforeAll(async () => {
  s = await startServer()
  ca = await createTestCa()
})
afterAll(async () => {
  await s.service.deploys.idle()
  await s.close()
  rmSync(work, { recursive: true, force: true })
})

describe('keys generated in the app reach folder targets', () => {
  it('writes privkey.pem next to the certificate it belongs to, and refuses to write a certificate it does not belong to', async () => {
    const r = await s.reseller({ credit: 100 })
    const res = await s.request<{ order_id: number }>('POST', '/orders', {
      key: r.key,
      body: { product_id: 2, domain: 'kept.example.test' }
    })
    const orderId = res.body.order_id
    const first = await ca.issue('kept.example.test', new Date(), 200)
    // The desktop app keeps the key it generated for this order, encrypted under the keychain.
    await s.service.keyVault.store(r.id, orderId, first.privateKeyPem)
    const dir = join(work, 'nginx')
    await s.service.deploys.addTarget(orderId, { kind: 'folder', path: dir, layout: 'nginx' })

    await s.service.deploys.certificateStored({
      orderId,
      trigger: 'issued',
      certificatePem: first.certificatePem,
      chainPem: first.chainPem
    })
    await s.service.deploys.idle()
    expect(readFileSync(join(dir, 'cert.pem'), 'utf8')).toBe(first.certificatePem)
    expect(readFileSync(join(dir, 'privkey.pem'), 'utf8')).toBe(first.privateKeyPem)

    // A certificate for another key (say, the customer's own CSR at reissue) never gets the kept
    // key beside it: the folder is not written at all and keeps the previous, matching pair.
    const other = await ca.issue('kept.example.test', new Date(), 200)
    await s.service.deploys.certificateStored({
      orderId,
      trigger: 'reissued',
      certificatePem: other.certificatePem,
      chainPem: other.chainPem
    })
    await s.service.deploys.idle()
    expect(readFileSync(join(dir, 'cert.pem'), 'utf8')).toBe(first.certificatePem)
    expect(readFileSync(join(dir, 'privkey.pem'), 'utf8')).toBe(first.privateKeyPem)
    const run = (await s.service.deploys.runs(orderId, { limit: 1, offset: 0 })).items[0]
    expect(run).toMatchObject({ serial: other.serial, status: 'pending' })
    expect(run.lastError).toContain('CertDesk does not hold the private key of this certificate')
    expect(await s.service.keyVault.keyMatching(orderId, other.certificatePem)).toBeNull()
    expect(await s.service.keyVault.keyMatching(orderId, first.certificatePem)).toBe(first.privateKeyPem)
  })
})
