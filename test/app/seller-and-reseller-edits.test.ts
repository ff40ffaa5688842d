/**
 * What Settings now edits, over the bridge on a real store: the seller block of invoices
 * (plain printed text, bounded, refused whole with the field's name) and a reseller's name,
 * email, company, group and discount (all or none; a hostile value changes nothing; a new
 * discount prices the next order, not the ones placed).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AppHandlers } from '../../src-main/app/bridge-answer'
import { createHandlers } from '../../src-main/app/handlers'
import { openService, type Service } from '../../src-main/core/service'

let dataDir: string
let service: Service
let h: AppHandlers

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'certdesk-settings-edits-'))
  service = await openService({ dataDir })
  h = createHandlers(service, { transport: 'browser', listenerUrl: () => 'http://127.0.0.1:1', apiVersion: '3.0' })
})
afterAll(async () => {
  await service.close()
  rmSync(dataDir, { recursive: true, force: true })
})

const refused = async (fn: () => unknown): Promise<string> => {
  try {
    await fn()
  } catch (err) {
    return (err as Error).message
  }
  throw new Error('expected a refusal')
}

describe('the seller block of invoices', () => {
  it('keeps plain text of a few lines, and refuses control characters, length and line count whole', async () => {
    await h.updateSettings({ sellerName: 'Example Certificates Ltd', sellerAddress: '1 Harbour Street\nExample City' })
    expect(await h.settings()).toMatchObject({
      sellerName: 'Example Certificates Ltd',
      sellerAddress: '1 Harbour Street\nExample City'
    })
    const cases: [Parameters<AppHandlers['updateSettings']>[0], RegExp][] = [
      [{ sellerName: 'Evil\u001b[31m Ltd' }, /^could not save the business name: it must be plain text/],
      [{ sellerName: 'Two\nlines' }, /^could not save the business name: it must be at most 1 line, not 2$/],
      [{ sellerName: 'x'.repeat(201) }, /^could not save the business name: it must be at most 200 characters/],
      [{ sellerAddress: 'a\u2028b' }, /^could not save the business address: it must be plain text/],
      [{ sellerAddress: Array(9).fill('line').join('\n') }, /it must be at most 8 lines, not 9$/],
      // One bad field refuses the good one beside it.
      [{ sellerName: 'Fine Ltd', dcvHttpPort: '99999' }, /^could not save the HTTP validation port/]
    ]
    for (const [input, reason] of cases) expect(await refused(() => h.updateSettings(input))).toMatch(reason)
    expect(await h.settings()).toMatchObject({ sellerName: 'Example Certificates Ltd' })
    expect(await h.checkSettings({ sellerName: 'a\tb', sellerAddress: 'ok' })).toEqual({
      sellerName: expect.stringMatching(/^could not save the business name: /)
    })
  })
})

describe('editing a reseller', () => {
  it('changes name, email, company, group and discount together; a bad value changes nothing', async () => {
    const r = await service.resellers.create({ name: 'Edit Me', email: 'edit@example.test', company: 'Edit Co' })
    const other = await service.resellers.create({ name: 'Other', email: 'other@example.test' })
    await service.ledger.topUp(r.id, 100_000)
    const before = await service.orders.create(await service.resellers.get(r.id), {
      productId: 2,
      domain: 'before.example.test'
    })

    for (const [input, reason] of [
      [{ name: '  ', email: 'x@example.test' }, /name must not be empty/],
      [{ name: 'X', email: 'no address' }, /is not an email address/],
      [{ name: 'X', email: 'x@example.test', discountRate: 101 }, /discount must be a percentage from 0 to 100/],
      [{ name: 'X', email: 'x@example.test', discountRate: Number.NaN }, /discount/],
      [{ name: 'X', email: 'x@example.test', groupId: 999 }, /group 999/],
      [{ name: 'x'.repeat(201), email: 'x@example.test' }, /at most 200 characters/]
    ] as const)
      expect(await refused(() => h.updateReseller(r.id, input))).toMatch(reason)
    expect(await service.resellers.get(r.id)).toMatchObject({
      name: 'Edit Me',
      email: 'edit@example.test',
      discountRate: 0
    })
    // An id that names no reseller is not found; the other account is untouched.
    expect(await refused(() => h.updateReseller(999_999, { name: 'Y', email: 'y@example.test' }))).toMatch(/not found/)
    expect((await service.resellers.get(other.id)).name).toBe('Other')

    const saved = await h.updateReseller(r.id, {
      name: 'Edited',
      email: 'billing@example.test',
      company: 'Edited GmbH',
      groupId: 1,
      discountRate: 10
    })
    expect(saved).toMatchObject({
      name: 'Edited',
      email: 'billing@example.test',
      company: 'Edited GmbH',
      discountRate: 10
    })
    // The next order gets the discount; the one placed before keeps its price.
    const after = await service.orders.create(await service.resellers.get(r.id), {
      productId: 2,
      domain: 'after.example.test'
    })
    expect(after.order.discountAmount).toBe(Math.round(before.order.total * 0.1))
    expect((await service.orders.get(r.id, before.order.id)).total).toBe(before.order.total)
    // No group: the catalogue is closed to it (reseller API v3.0: 403 without a group).
    await h.updateReseller(r.id, { name: 'Edited', email: 'billing@example.test', groupId: null, discountRate: 10 })
    expect(
      await refused(
        async () =>
          await service.orders.create(await service.resellers.get(r.id), { productId: 2, domain: 'x.example.test' })
      )
    ).toMatch(/group/)
  })
})
