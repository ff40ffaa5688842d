/**
 * Answers on two nodes of one PostgreSQL book. A script that places an order through one node
 * and then reads through the other sees its order at once; and the other node, told of the
 * order by the store (LISTEN/NOTIFY), has moved its kept pages forward as the placing node did,
 * so that read is answered from kept bytes instead of rebuilt. A request sent with the same
 * Idempotency-Key to both nodes at once places one order. Two services and listeners in this
 * process stand for the two nodes.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openService, type Service } from '../../src-main/core/service'
import { usdToCents } from '../../src-main/core/billing/money'
import { buildServer, listen, type Listening } from '../../src-main/http/server'
import { createTestDatabase, type TestDatabase } from '../support/postgres'

interface Node {
  service: Service
  api: Listening
}

let db: TestDatabase
let dir: string
const nodes: Node[] = []
let key: string

beforeAll(async () => {
  db = await createTestDatabase()
  dir = mkdtempSync(join(tmpdir(), 'certdesk-team-kept-'))
  for (let i = 0; i < 2; i++) {
    const service = await openService({ dataDir: dir, database: db.url })
    nodes.push({ service, api: await listen(await buildServer(service)) })
  }
  const admin = nodes[0].service
  const r = await admin.resellers.create({ name: 'Polling Script', email: 'ops@kept.test', groupId: 1 })
  await admin.ledger.topUp(r.id, usdToCents(10_000))
  key = (await admin.resellers.createApiKey(r.id)).key
})

afterAll(async () => {
  for (const n of nodes) {
    await n.api.close()
    await n.service.close()
  }
  await db?.drop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

async function call<T>(n: Node, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${n.api.url}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined
  })
  expect(res.status).toBe(200)
  return (await res.json()) as T
}

type OrdersPage = { orders: { order_id: number }[]; pagination: { total: number } }
type Stats = { stats: { orders: { total: number } } }

describe('kept answers across nodes', () => {
  it('shows an order placed through one node on the next read through the other, from kept bytes', async () => {
    const [a, b] = nodes
    const counters = b.api.app.readCache
    for (let round = 0; round < 3; round++) {
      // b keeps the first two pages and the statistics (read twice: the second is a kept answer).
      for (let i = 0; i < 2; i++) {
        await call<OrdersPage>(b, 'GET', '/orders?limit=2')
        await call<OrdersPage>(b, 'GET', '/orders?limit=2&offset=2')
        await call<Stats>(b, 'GET', '/stats')
      }
      const moved = counters.movedElsewhere
      const placed = await call<{ order_id: number }>(a, 'POST', '/orders', {
        product_id: 2,
        domain: `kept${round}.example.com`,
        period: 12
      })
      await expect.poll(() => counters.movedElsewhere, { timeout: 10_000 }).toBeGreaterThan(moved)
      const hits = counters.hits
      const first = await call<OrdersPage>(b, 'GET', '/orders?limit=2')
      const second = await call<OrdersPage>(b, 'GET', '/orders?limit=2&offset=2')
      const stats = await call<Stats>(b, 'GET', '/stats')
      // Right: the new order heads the list, every page shows the new total, as a fresh read on a.
      expect(first.orders[0].order_id).toBe(placed.order_id)
      expect(first).toEqual(await call<OrdersPage>(a, 'GET', '/orders?limit=2'))
      expect(second).toEqual(await call<OrdersPage>(a, 'GET', '/orders?limit=2&offset=2'))
      expect(stats).toEqual(await call<Stats>(a, 'GET', '/stats'))
      expect(first.pagination.total).toBe(round + 1)
      // And kept: none of the three was rebuilt on b.
      expect(counters.hits - hits).toBe(3)
    }
  })

  it('places one order for one Idempotency-Key sent to both nodes at once, and charges it once', async () => {
    const [a, b] = nodes
    const balance = async (): Promise<number> => (await call<{ balance: number }>(a, 'GET', '/balance')).balance
    for (let round = 0; round < 5; round++) {
      const before = await balance()
      const domain = `twice${round}.example.com`
      const send = (n: Node) =>
        fetch(`${n.api.url}/orders`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': `both-${round}` },
          body: JSON.stringify({ product_id: 2, domain, period: 12 })
        })
      const answers = await Promise.all([send(a), send(b), send(a), send(b)])
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200])
      const bodies = (await Promise.all(answers.map((r) => r.json()))) as { order_id: number }[]
      expect(new Set(bodies.map((x) => x.order_id)).size).toBe(1)
      expect(answers.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(3)
      const placed = await a.service.ctx.store.value('SELECT COUNT(*) FROM orders WHERE domain = ?', domain)
      expect(placed).toBe(1)
      expect(Math.round((before - (await balance())) * 100)).toBe(3120)
    }
  })
})
