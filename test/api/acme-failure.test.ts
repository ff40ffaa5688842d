/**
 * The failure path of spec "Order transitions": when the subscription cannot be created the
 * order ends `cancelled` and the amount is refunded. The failure is real: this file runs on a
 * keychain of its own and kills its daemon, so storing the EAB key fails the way it does on a
 * machine whose keyring went away; the daemon then starts again on the same session bus.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBareKeyring, type BareKeyring } from '../support/bare-keyring'
import { startServer, type TestServer } from '../support/server'

type Body = Record<string, unknown>
let s: TestServer
// A short base: the bus socket lives under it (a Unix socket path has at most 108 bytes).
const base = mkdtempSync(join(tmpdir(), 'cd-af-'))
let keyring: BareKeyring

beforeAll(async () => {
  keyring = await startBareKeyring(join(base, 'k'), randomBytes(18).toString('base64url'))
  await keyring.startDaemon()
  Object.assign(process.env, keyring.env)
  s = await startServer()
})
afterAll(async () => {
  await s.close()
  keyring.stop()
  rmSync(base, { recursive: true, force: true })
})

const ledger = (resellerId: number) =>
  s.service.ctx.db
    .prepare(
      'SELECT amount_cents AS amount, type, balance_after_cents AS after, order_id AS orderId FROM credit_transactions WHERE reseller_id = ? ORDER BY id'
    )
    .all(resellerId) as { amount: number; type: string; after: number; orderId: number | null }[]

describe('an ACME subscription that cannot be created', () => {
  it('cancels the order, refunds it in the ledger and lets a retry with the same key succeed later', async () => {
    const r = s.reseller({ credit: 100 })
    await keyring.killDaemon()
    const res = await s.request<Body>('POST', '/orders', {
      key: r.key,
      headers: { 'idempotency-key': 'acme-retry-1' },
      body: { product_id: 12, domain: 'fail.example.com' }
    })
    expect(res.status).toBe(503)
    expect(res.body.success).toBe(false)
    expect(res.body.error).toMatch(
      /^could not create the ACME subscription: could not store secret in the OS keychain: .+; order ORD-\d{4}-\d{6} is cancelled and 39\.20 USD refunded to credit$/
    )

    const orders = await s.request<{ orders: Body[] }>('GET', '/orders?domain=fail.example.com', { key: r.key })
    expect(orders.body.orders).toHaveLength(1)
    const order = orders.body.orders[0]
    expect(order).toMatchObject({ status: 'cancelled', payment_status: 'refunded', invoice_status: 'cancelled' })
    expect(order.status_note).toMatch(/^could not create the ACME subscription: could not store secret/)

    // Debit then refund, each with its ledger row; the balance is back and equals the ledger sum.
    const rows = ledger(r.id).filter((t) => t.orderId === order.id)
    expect(rows.map((t) => [t.type, t.amount])).toEqual([
      ['debit', -3920],
      ['credit', 3920]
    ])
    const balance = await s.request<Body>('GET', '/balance', { key: r.key })
    expect(balance.body.balance).toBe(100)
    expect(ledger(r.id).reduce((n, t) => n + t.amount, 0)).toBe(10000)
    expect(ledger(r.id).at(-1)?.after).toBe(10000)
    const subs = s.service.ctx.db.prepare('SELECT COUNT(*) AS n FROM acme_subscriptions').get() as { n: number }
    expect(subs.n).toBe(0)

    // The keychain is back: the same Idempotency-Key was not kept for the failure, so it works now.
    await keyring.startDaemon()
    const retry = await s.request<Body>('POST', '/orders', {
      key: r.key,
      headers: { 'idempotency-key': 'acme-retry-1' },
      body: { product_id: 12, domain: 'fail.example.com' }
    })
    expect(retry.status).toBe(200)
    expect(retry.headers.get('idempotent-replayed')).toBeNull()
    expect(retry.body).toMatchObject({ status: 'completed', new_balance: 60.8 })
  })
})
