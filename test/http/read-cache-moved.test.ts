import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { certdesk, cliTopUp } from '../support/cli'
import { startServer, type TestReseller, type TestServer } from '../support/server'

// After an order is written, the reseller's kept order pages and statistics are moved forward
// by the writer (src-main/http/read-cache.ts) instead of being left to be rebuilt. A moved
// answer must be byte for byte what a server that keeps nothing builds from the store at that
// moment: `fresh` below opens the same store as a second server and is asked each time after a
// write it did not make, so it always builds its answer from rows.
type Body = Record<string, unknown>
let s: TestServer
let fresh: TestServer

beforeAll(async () => {
  s = await startServer()
  // On PostgreSQL the two are nodes of one book: the reference must not follow `s`'s orders.
  fresh = await startServer({ dataDir: s.dataDir, server: { followOtherNodes: false } })
})
afterAll(async () => {
  await fresh.close()
  await s.close()
})

/** GET `path` from `server` as `r`: its text, and whether a kept answer was sent. */
async function get(server: TestServer, r: TestReseller, path: string): Promise<{ text: string; kept: boolean }> {
  const before = server.app.readCache.hits
  const res = await fetch(server.url + path, { headers: { 'x-api-key': r.key } })
  const text = await res.text()
  expect(res.status, `GET ${path}: ${text}`).toBe(200)
  return { text, kept: server.app.readCache.hits === before + 1 }
}

/** The answer of `s`, checked against the one `fresh` builds from the store. */
async function same(r: TestReseller, path: string): Promise<{ text: string; kept: boolean }> {
  const answer = await get(s, r, path)
  const built = await get(fresh, r, path)
  expect(built.kept, `the reference answer to ${path} was built from rows`).toBe(false)
  expect(answer.text, `GET ${path}`).toBe(built.text)
  return answer
}

const order = async (r: TestReseller, domain: string, headers: Record<string, string> = {}): Promise<number> => {
  const res = await s.request<Body>('POST', '/orders', { key: r.key, body: { product_id: 2, domain }, headers })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body.order_id as number
}

/** One HTTP/1.1 answer read off `c`: its status, once its whole body (Content-Length) is in. */
function answerOn(c: Socket): Promise<number> {
  return new Promise((resolve, reject) => {
    let got = Buffer.alloc(0)
    const onData = (d: Buffer): void => {
      got = Buffer.concat([got, d])
      const head = got.indexOf('\r\n\r\n')
      if (head < 0) return
      const headers = got.subarray(0, head).toString()
      const length = Number(/content-length: *(\d+)/i.exec(headers)?.[1] ?? 0)
      if (got.length < head + 4 + length) return
      c.off('data', onData)
      resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(headers)?.[1] ?? 0))
    }
    c.on('data', onData)
    c.once('error', reject)
  })
}

/**
 * POST /orders bodies written in one go on connections the server has already read a request
 * from, so that it reads them all in one turn of its event loop (as a busy server does).
 */
async function sentAtOnce(orders: { key: string; body: Body }[]): Promise<number[]> {
  const { port } = new URL(s.url)
  const head = (method: string, path: string, key: string, extra = ''): string =>
    `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-API-Key: ${key}\r\n${extra}\r\n`
  const sockets = await Promise.all(
    orders.map(
      ({ key }) =>
        new Promise<Socket>((resolve, reject) => {
          const c = connect(Number(port), '127.0.0.1', () => {
            c.write(head('GET', '/balance', key))
            void answerOn(c).then(() => resolve(c), reject)
          })
          c.once('error', reject)
        })
    )
  )
  const answers = sockets.map((c) => answerOn(c))
  orders.forEach(({ key, body }, i) => {
    const json = JSON.stringify(body)
    const extra = `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n`
    sockets[i].write(head('POST', '/orders', key, extra) + json)
  })
  try {
    return await Promise.all(answers)
  } finally {
    for (const c of sockets) c.destroy()
  }
}

const PAGES = ['/orders?limit=3', '/orders?limit=3&offset=3', '/orders?limit=3&offset=6', '/orders?limit=50']

describe('answers moved forward by an order', () => {
  it('sends every kept page and the statistics after each order, equal to a rebuilt answer', async () => {
    const a = await s.reseller({ credit: 900 })
    for (let i = 1; i <= 7; i++) await order(a, `page-${i}.example.com`)
    for (const path of [...PAGES, '/stats']) await get(s, a, path)

    for (let i = 8; i <= 11; i++) {
      await order(a, `page-${i}.example.com`)
      for (const path of [...PAGES, '/stats']) {
        const answer = await same(a, path)
        expect(answer.kept, `GET ${path} after order ${i}`).toBe(true)
      }
    }
    const first = JSON.parse((await get(s, a, '/orders?limit=3')).text) as Body
    expect((first.orders as Body[]).map((o) => o.domain)).toEqual([
      'page-11.example.com',
      'page-10.example.com',
      'page-9.example.com'
    ])
    expect(first.pagination).toEqual({ total: 11, limit: 3, offset: 0 })
  })

  it('moves every kept page through orders sent at once, which share one COMMIT on SQLite', async () => {
    const a = await s.reseller({ credit: 900 })
    for (let i = 1; i <= 4; i++) await order(a, `together-${i}.example.com`)
    for (const path of [...PAGES, '/stats']) await get(s, a, path)
    // Answered together after one COMMIT: each order's move starts where the one before left off.
    const answers = await sentAtOnce(
      [5, 6, 7, 8].map((i) => ({ key: a.key, body: { product_id: 2, domain: `together-${i}.example.com` } }))
    )
    expect(answers).toEqual([200, 200, 200, 200])
    for (const path of [...PAGES, '/stats']) {
      const answer = await same(a, path)
      expect(answer.kept, `GET ${path} after four orders sent at once`).toBe(true)
    }
    const first = JSON.parse((await get(s, a, '/orders?limit=50')).text) as Body
    expect(first.pagination).toEqual({ total: 8, limit: 50, offset: 0 })
  })

  it('sends a page moved by several orders nobody read in between, and by one after it was read', async () => {
    const a = await s.reseller({ credit: 900 })
    for (let i = 1; i <= 7; i++) await order(a, `run-${i}.xn--bcher-kva.example`)
    for (const path of PAGES) await get(s, a, path)
    // Three moves before the next read: the bytes are made from the page last sent, three back.
    for (let i = 8; i <= 10; i++) await order(a, `run-${i}.xn--bcher-kva.example`)
    for (const path of PAGES) expect((await same(a, path)).kept, `GET ${path} after three orders`).toBe(true)
    await order(a, 'run-11.xn--bcher-kva.example')
    for (const path of PAGES) expect((await same(a, path)).kept, `GET ${path} after one more`).toBe(true)
    expect(JSON.parse((await get(s, a, '/orders?limit=3&offset=3')).text)).toMatchObject({
      orders: [
        { domain: 'run-8.xn--bcher-kva.example' },
        { domain: 'run-7.xn--bcher-kva.example' },
        { domain: 'run-6.xn--bcher-kva.example' }
      ]
    })
  })

  it('moves a deeper page whose page before it was never read, and pages past the end', async () => {
    const a = await s.reseller({ credit: 900 })
    for (let i = 1; i <= 5; i++) await order(a, `deep-${i}.example.com`)
    // offset 3 alone: the order that moves onto it is read from the store at the write's moment.
    const deep = ['/orders?limit=3&offset=3', '/orders?limit=3&offset=6', '/orders?limit=3&offset=9']
    for (const path of deep) await get(s, a, path)
    for (let i = 6; i <= 9; i++) {
      await order(a, `deep-${i}.example.com`)
      for (const path of deep) expect((await same(a, path)).kept, `GET ${path} after order ${i}`).toBe(true)
    }
    expect(JSON.parse((await get(s, a, '/orders?limit=3&offset=6')).text)).toMatchObject({
      orders: [{ domain: 'deep-3.example.com' }, { domain: 'deep-2.example.com' }, { domain: 'deep-1.example.com' }]
    })
  })

  it('leaves filtered lists, the balance and the ledger to be rebuilt, and shows the write in them', async () => {
    const a = await s.reseller({ credit: 900 })
    await order(a, 'filtered-1.example.com')
    const paths = ['/orders?status=pending&limit=3', '/orders?domain=filtered&limit=3', '/balance', '/credits']
    for (const path of paths) await get(s, a, path)
    await order(a, 'filtered-2.example.com')
    for (const path of paths) {
      const answer = await same(a, path)
      expect(answer.kept, `GET ${path}`).toBe(false)
      expect(answer.text).toContain(path === '/balance' ? '"balance"' : 'filtered-2.example.com')
    }
  })

  it('moves nothing past a write by another process, and shows that write', async () => {
    const a = await s.reseller({ credit: 900 })
    await order(a, 'cli-1.example.com')
    for (const path of [...PAGES, '/stats']) await get(s, a, path)
    const topUp = cliTopUp(s.dataDir, a.id, 7)
    expect(topUp.code, topUp.stderr).toBe(0)
    // The CLI's credit moved the scope after the pages were kept: the order cannot vouch for them.
    await order(a, 'cli-2.example.com')
    for (const path of [...PAGES, '/stats']) expect((await same(a, path)).kept, `GET ${path}`).toBe(false)
    const stats = JSON.parse((await get(s, a, '/stats')).text) as { stats: Body }
    const balance = JSON.parse((await get(s, a, '/balance')).text) as Body
    expect(stats.stats.credit_balance).toBe(balance.balance)
  })

  it('moves nothing for a replayed request, and keeps answering it right', async () => {
    const a = await s.reseller({ credit: 900 })
    const key = { 'idempotency-key': 'moved-replay-1' }
    const id = await order(a, 'replay.example.com', key)
    for (const path of [...PAGES, '/stats']) await get(s, a, path)
    expect(await order(a, 'replay.example.com', key)).toBe(id)
    for (const path of [...PAGES, '/stats']) expect((await same(a, path)).kept, `GET ${path}`).toBe(true)
  })

  it('stops moving a page nobody reads any more', async () => {
    const a = await s.reseller({ credit: 2000 })
    await order(a, 'unread-0.example.com')
    await get(s, a, '/orders?limit=3')
    for (let i = 1; i <= 40; i++) await order(a, `unread-${i}.example.com`)
    // Dropped after going unread through 32 orders: built from rows again.
    expect((await same(a, '/orders?limit=3')).kept).toBe(false)
    await order(a, 'unread-41.example.com')
    expect((await same(a, '/orders?limit=3')).kept).toBe(true)
  })

  it("does not move another reseller's pages, nor answer one reseller with another's", async () => {
    const a = await s.reseller({ credit: 900 })
    const b = await s.reseller({ credit: 900 })
    await order(a, 'a-only.example.com')
    await order(b, 'b-only.example.com')
    for (const r of [a, b]) for (const path of PAGES) await get(s, r, path)
    await order(a, 'a-again.example.com')
    for (const path of PAGES) {
      const theirs = await same(b, path)
      expect(theirs.kept).toBe(true)
      expect(theirs.text).not.toContain('a-again')
      expect(theirs.text).not.toContain('a-only')
      await same(a, path)
    }
    expect((await get(s, a, '/orders?limit=3')).text).toContain('a-again')
  })

  it('refuses a key revoked by another process right after an order, though its answers were moved', async () => {
    const a = await s.reseller({ credit: 900 })
    const second = await s.service.resellers.createApiKey(a.id)
    const other = { id: a.id, key: second.key }
    await order(a, 'revoke-1.example.com')
    for (let i = 0; i < 2; i++) await get(s, other, '/orders?limit=3')
    await order(a, 'revoke-2.example.com')
    expect((await get(s, other, '/orders?limit=3')).kept).toBe(true)
    const revoked = certdesk(['admin', '--data-dir', s.dataDir, 'apikey', 'revoke', '--key-id', String(second.info.id)])
    expect(revoked.code, revoked.stderr).toBe(0)
    const res = await fetch(`${s.url}/orders?limit=3`, { headers: { 'x-api-key': other.key } })
    expect(res.status).toBe(401)
    expect(await res.json()).toMatchObject({ success: false })
  })

  it("never sends a day's statistics, moved forward by an order, after that day is over", async () => {
    let now = new Date('2026-11-26T23:59:58Z')
    const t = await startServer({ clock: () => now })
    try {
      const a = await t.reseller({ credit: 100 })
      const place = async (domain: string) =>
        expect((await t.request('POST', '/orders', { key: a.key, body: { product_id: 2, domain } })).status).toBe(200)
      const stats = async () => {
        const before = t.app.readCache.hits
        const body = (
          await t.request<{ charts: { daily_sales: { date: string; orders: number }[] } }>('GET', '/stats', {
            key: a.key
          })
        ).body
        return { days: body.charts.daily_sales, kept: t.app.readCache.hits === before + 1 }
      }
      await place('late-1.example.com')
      await stats()
      expect((await stats()).kept).toBe(true)
      await place('late-2.example.com')
      now = new Date('2026-11-27T00:00:01Z')
      const after = await stats()
      expect(after.kept).toBe(false)
      expect(after.days.at(-1)).toEqual({ date: '2026-11-27', orders: 0, revenue: 0 })
      expect(after.days.at(-2)).toMatchObject({ date: '2026-11-26', orders: 2 })
    } finally {
      await t.close()
    }
  })
})
