/**
 * "Affordable" in the order form is the ledger's own rule: paying from credit goes through
 * exactly when the balance covers the total, and the quote says so before the order is placed.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { coversDebit } from '../../src-main/core/billing/ledger'
import { type Service } from '../../src-main/core/service'
import { openService } from '../support/engine'

let dataDir: string
let service: Service

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'certdesk-afford-'))
  service = await openService({ dataDir })
})
afterAll(async () => {
  await service?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('affordability', () => {
  it('a balance covers a debit up to the last cent', () => {
    expect(coversDebit(1000, 999)).toBe(true)
    expect(coversDebit(1000, 1000)).toBe(true)
    expect(coversDebit(999, 1000)).toBe(false)
    expect(coversDebit(0, 0)).toBe(true)
  })

  it('the quote says affordable exactly when paying from credit goes through', async () => {
    const r = await service.resellers.create({ name: 'Tight', email: 'tight@example.test', groupId: 1 })
    const input = { productId: 2, domain: 'tight.example.test', period: 12 }
    const price = (await service.orders.quoteView(r, input)).total
    await service.ledger.topUp(r.id, price - 1, 'one cent short')
    const short = await service.orders.quoteView(await service.resellers.get(r.id), input)
    expect(short).toMatchObject({ balance: price - 1, total: price, affordable: false })
    await expect(service.orders.create(await service.resellers.get(r.id), input, 'credit')).rejects.toThrow(
      /insufficient credit/
    )

    await service.ledger.topUp(r.id, 1, 'the last cent')
    const exact = await service.orders.quoteView(await service.resellers.get(r.id), input)
    expect(exact).toMatchObject({ balance: price, affordable: true })
    expect((await service.orders.create(await service.resellers.get(r.id), input, 'credit')).newBalance).toBe(0)
  })
})
