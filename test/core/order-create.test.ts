/**
 * A placed order is answered from the values its transaction wrote, not read back: what the
 * caller gets must be exactly what the store holds, for every kind of product and payment.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Service } from '../../src-main/core/service'
import { openService } from '../support/engine'

let dataDir: string
let service: Service

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'certdesk-order-create-'))
  service = await openService({ dataDir })
})
afterAll(async () => {
  await service?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('a placed order', () => {
  it('is answered exactly as the store then holds it, for each kind of product and payment', async () => {
    const r = await service.resellers.create({
      name: 'Exact',
      email: 'exact@example.test',
      groupId: 1,
      discountRate: 7.5
    })
    await service.ledger.topUp(r.id, 10_000_00)
    const reseller = await service.resellers.get(r.id)
    const inputs = [
      { productId: 2, domain: 'Shop.Example.COM', period: 12 },
      { productId: 3, domain: '*.example.org', period: 24 },
      { productId: 4, domain: 'xn--bcher-kva.example.net', period: 12, sanCount: 3, sanWildcardCount: 1 },
      { productId: 8, domain: 'ev.example.com', period: 12, contactEmail: 'admin@example.com' },
      { productId: 10, period: 36 }
    ]
    for (const input of inputs) {
      for (const payment of ['credit', 'invoice'] as const) {
        const created = await service.orders.create(reseller, input, payment)
        const stored = await service.orders.get(r.id, created.order.id)
        expect(created.order).toEqual(stored)
        expect(created.newBalance).toBe(await service.ledger.balance(r.id))
        expect(created.creditUsed).toBe(payment === 'credit' ? stored.total : 0)
      }
    }
  })

  it('changes nothing when the balance is short, and its number is then used by the next order', async () => {
    const r = await service.resellers.create({ name: 'Short', email: 'short@example.test', groupId: 1 })
    const before = (await service.ledger.transactions(r.id, { limit: 100, offset: 0 })).total
    await expect(
      service.orders.create(await service.resellers.get(r.id), { productId: 2, domain: 'short.example.com' })
    ).rejects.toThrow(/insufficient credit/)
    expect((await service.orders.list(r.id, {}, { limit: 10, offset: 0 })).total).toBe(0)
    expect((await service.ledger.transactions(r.id, { limit: 100, offset: 0 })).total).toBe(before)
    await service.ledger.topUp(r.id, 1_000_00)
    const placed = await service.orders.create(await service.resellers.get(r.id), {
      productId: 2,
      domain: 'short.example.com'
    })
    expect(placed.order).toEqual(await service.orders.get(r.id, placed.order.id))
  })
})
