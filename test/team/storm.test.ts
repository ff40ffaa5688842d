/**
 * Three `certdesk serve` nodes on one PostgreSQL behind HAProxy (the reseller API in TCP mode),
 * the scheduler every two seconds. Reseller scripts place orders through the balancer with the
 * typed client, each order with its Idempotency-Key and retried on a broken connection or 503;
 * in the middle of it the node leading the background work is killed with SIGKILL.
 *
 * What a reseller and an admin would notice: no acknowledged order is missing, none is there
 * twice, every balance is what the answers said and its ledger adds up; a read right after a
 * write sees it whichever node answers; certificates due a reissue are reissued once each,
 * before and after the leader's death, because one pass at a time runs across the team; and the
 * example script of docs/scripts.md orders and gets its certificate through the balancer after
 * the kill.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import type http from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { certDesk, replayed, type CertDeskClient } from '../../client'
import { PASS_JOB } from '../../src-main/core/cluster/background'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import type { Service } from '../../src-main/core/service'
import { isoDate, parseDate } from '../../src-main/core/time'
import { opensslCsr } from '../support/csr'
import { serveFolder, startDns, type DnsServer } from '../support/dcv-servers'
import { ROOT } from '../support/offline-tool'
import { startTeam, type Team, type TeamNode } from '../support/team'

const PASS_SECONDS = 2
/** Orders set up before the nodes start, each due an automatic reissue at once. */
const DUE = 4
/** Reseller scripts placing orders at once, each for its own reseller. */
const WORKERS = 8
const STORM_MS = 12_000
const KILL_AT_MS = 5_000
/** Product 2 (PositiveSSL) for 12 months at the Standard group's price. */
const PRICE_CENTS = 3120

let team: Team
let dns: DnsServer
let web: http.Server
const dir = mkdtempSync(join(tmpdir(), 'certdesk-team-storm-'))
const webroot = join(dir, 'www')
let dueOrders: number[] = []
let killed: TeamNode
let killedAt = 0

/** Completed orders whose automatic reissue is due today, issued by the admin before any node runs. */
async function dueReissues(admin: Service): Promise<number[]> {
  await admin.settings.set(DCV_SETTINGS.resolver, dns.address)
  await admin.settings.set(DCV_SETTINGS.httpPort, String((web.address() as AddressInfo).port))
  await admin.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  const r = await admin.resellers.create({ name: 'Renewing Shop', email: 'ops@renewing.test', groupId: 1 })
  await admin.ledger.topUp(r.id, 100_000)
  const ids: number[] = []
  for (let i = 0; i < DUE; i++) {
    const domain = `due${i}.renewing.test`
    const id = (await admin.orders.create(await admin.resellers.get(r.id), { productId: 2, domain, period: 36 })).order
      .id
    const conf = await admin.certificates.configure(r.id, { orderId: id, csr: opensslCsr([domain]), dcvMethod: 'http' })
    const instr = conf.validation[0].instructions
    if (instr.method !== 'http') throw new Error('expected http validation')
    const file = join(webroot, new URL(instr.url).pathname)
    mkdirSync(join(file, '..'), { recursive: true })
    writeFileSync(file, instr.fileContent)
    expect((await admin.certificates.status(r.id, id)).order.status).toBe('completed')
    ids.push(id)
  }
  await dueToday(admin, ids)
  return ids
}

async function dueToday(admin: Service, ids: number[]): Promise<void> {
  for (const id of ids)
    await admin.ctx.store.run('UPDATE orders SET next_reissue_at = ? WHERE id = ?', isoDate(new Date()), id)
}

const reissues = async (): Promise<{ id: number; count: number; certificates: number }[]> =>
  team.admin.ctx.store.all(
    `SELECT o.id, o.reissue_count AS count, (SELECT COUNT(*) FROM certificates c WHERE c.order_id = o.id) AS certificates
       FROM orders o WHERE o.id ${team.admin.ctx.store.inList(dueOrders).sql} ORDER BY o.id`,
    team.admin.ctx.store.inList(dueOrders).arg
  )

const passes = async (): Promise<{ node: string; started_at: string; finished_at: string | null }[]> =>
  team.admin.ctx.store.all('SELECT node, started_at, finished_at FROM job_runs WHERE job = ? ORDER BY id', PASS_JOB)

beforeAll(async () => {
  ;[dns, web] = await Promise.all([startDns(), serveFolder(webroot)])
  team = await startTeam(3, {
    schedulerSeconds: PASS_SECONDS,
    before: async (admin) => {
      dueOrders = await dueReissues(admin)
    }
  })
})

afterAll(async () => {
  await team?.stop()
  await new Promise((resolve) => web?.close(resolve))
  await dns?.close()
  rmSync(dir, { recursive: true, force: true })
})

interface Ack {
  orderId: number
  domain: string
  newBalance: number
  replayed: boolean
  /** When the answer came (Date.now()). */
  at: number
}

/**
 * One reseller's script: orders one after the other, each retried with the same
 * Idempotency-Key until it is answered (a connection the dead node took with it, a 503 while
 * the team is busy), then reads its balance and its newest order through the balancer.
 */
async function script(
  worker: number,
  api: CertDeskClient,
  until: number
): Promise<{ acks: Ack[]; retries: number; staleReads: string[] }> {
  const acks: Ack[] = []
  const staleReads: string[] = []
  let retries = 0
  for (let n = 0; Date.now() < until; n++) {
    const domain = `w${worker}-${n}.storm.test`
    let ack: Ack | null = null
    for (let attempt = 0; !ack; attempt++) {
      if (attempt > 60) throw new Error(`order ${domain} was not answered after ${attempt} tries`)
      try {
        const r = await api.POST('/orders', {
          params: { header: { 'idempotency-key': `storm-${domain}` } },
          body: { product_id: 2, domain, period: 12 }
        })
        if (r.data && r.data.fulfillment === 'certificate') {
          ack = {
            orderId: r.data.order_id,
            domain,
            newBalance: r.data.new_balance,
            replayed: replayed(r.response),
            at: Date.now()
          }
          break
        }
        if (r.response.status !== 503) throw new Error(`order ${domain}: ${r.response.status} ${r.error?.error}`)
      } catch (err) {
        if (!(err instanceof TypeError)) throw err // fetch's own failure: the connection broke
      }
      retries++
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    acks.push(ack)
    // Read right after the write, through whichever node the balancer picks.
    for (let attempt = 0; ; attempt++) {
      try {
        const bal = await api.GET('/balance')
        const list = await api.GET('/orders', { params: { query: { limit: 1 } } })
        if (!bal.data || !list.data) throw new TypeError(`read answered ${bal.response.status}`)
        if (Math.round(bal.data.balance * 100) !== Math.round(ack.newBalance * 100))
          staleReads.push(`${domain}: balance ${bal.data.balance}, the order said ${ack.newBalance}`)
        if (list.data.orders[0]?.order_id !== ack.orderId)
          staleReads.push(`${domain}: newest order ${list.data.orders[0]?.order_id}, placed ${ack.orderId}`)
        break
      } catch (err) {
        if (!(err instanceof TypeError) || attempt > 20) throw err
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
  }
  return { acks, retries, staleReads }
}

describe('a team of three nodes behind HAProxy', { timeout: 120_000 }, () => {
  it('reissues each due certificate once though every node started at once', async () => {
    await expect
      .poll(async () => (await reissues()).map((r) => r.count), { timeout: 45_000 })
      .toEqual(dueOrders.map(() => 1))
    // Several more passes: none reissues again, none runs beside another.
    const seen = (await passes()).length
    await expect.poll(async () => (await passes()).length, { timeout: 30_000 }).toBeGreaterThan(seen + 2)
    expect((await reissues()).map((r) => [r.count, r.certificates])).toEqual(dueOrders.map(() => [1, 2]))
  })

  it('loses no acknowledged order and doubles none when the leading node is killed mid-storm', async () => {
    const resellers = await Promise.all(
      Array.from({ length: WORKERS }, (_, i) => team.reseller(`Storm Reseller ${i}`, 100_000))
    )
    // The node that ran the last pass leads: it is the one to die.
    const last = (await passes()).at(-1)
    expect(last).toBeDefined()
    const leader = team.nodeNamed(last?.node ?? '')
    expect(leader, `a team node ran the last pass: ${last?.node}`).toBeDefined()
    killed = leader as TeamNode
    const started = Date.now()
    const until = started + STORM_MS
    const kill = (async () => {
      await new Promise((resolve) => setTimeout(resolve, KILL_AT_MS))
      killedAt = Date.now()
      await killed.kill()
    })()
    const results = await Promise.all(
      resellers.map((r, i) => script(i, certDesk({ baseUrl: team.api, apiKey: r.key }), until))
    )
    await kill
    expect(await killed.exited).toBe('SIGKILL')

    const acks = results.flatMap((r) => r.acks)
    expect(results.flatMap((r) => r.staleReads)).toEqual([])
    // The storm ran on both sides of the death. Whether a request was in flight on the dead
    // node at that instant is the machine's timing (HAProxy may have marked a busy node down
    // first); requests that broke were sent again with their keys, and the checks below hold
    // either way.
    expect(acks.filter((a) => a.at < killedAt).length).toBeGreaterThan(0)
    expect(
      acks.filter((a) => a.at > killedAt).length,
      `orders sent again: ${results.reduce((n, r) => n + r.retries, 0)}`
    ).toBeGreaterThan(0)

    const store = team.admin.ctx.store
    const ids = store.inList(resellers.map((r) => r.id))
    const orders = await store.all<{ id: number; domain: string; reseller_id: number; total_cents: number }>(
      `SELECT id, domain, reseller_id, total_cents FROM orders WHERE reseller_id ${ids.sql} ORDER BY id`,
      ids.arg
    )
    // Every acknowledged order is there, under the id its answer gave, and nothing else is.
    const byDomain = new Map(orders.map((o) => [o.domain, o]))
    expect(byDomain.size, 'an order placed twice').toBe(orders.length)
    for (const a of acks) expect(byDomain.get(a.domain)?.id, a.domain).toBe(a.orderId)
    expect(orders).toHaveLength(acks.length)
    expect(new Set(orders.map((o) => o.total_cents))).toEqual(new Set([PRICE_CENTS]))

    // The books: each balance is its ledger's sum, one debit and one invoice per order.
    const books = await store.all<{ id: number; balance: number; ledger: number; orders: number }>(
      `SELECT r.id, r.credit_balance_cents AS balance,
              (SELECT COALESCE(SUM(t.amount_cents), 0) FROM credit_transactions t WHERE t.reseller_id = r.id) AS ledger,
              (SELECT COUNT(*) FROM orders o WHERE o.reseller_id = r.id) AS orders
         FROM resellers r WHERE r.id ${ids.sql} ORDER BY r.id`,
      ids.arg
    )
    for (const b of books) {
      expect(b.balance, `reseller ${b.id}`).toBe(b.ledger)
      expect(b.balance, `reseller ${b.id}`).toBe(100_000 * 100 - b.orders * PRICE_CENTS)
    }
    const perOrder = await store.all<{ id: number; debits: number; invoices: number }>(
      `SELECT o.id, (SELECT COUNT(*) FROM credit_transactions t WHERE t.order_id = o.id AND t.type = 'debit') AS debits,
              (SELECT COUNT(*) FROM invoices i WHERE i.order_id = o.id) AS invoices
         FROM orders o WHERE o.reseller_id ${ids.sql}`,
      ids.arg
    )
    expect(perOrder.filter((o) => o.debits !== 1 || o.invoices !== 1)).toEqual([])
    // Each script's last answer is its balance now.
    for (const [i, r] of results.entries()) {
      const lastAck = r.acks.at(-1) as Ack
      expect(books.find((b) => b.id === resellers[i].id)?.balance).toBe(Math.round(lastAck.newBalance * 100))
    }
  })

  it('goes on with one pass at a time after the leader died, and reissues what falls due once', async () => {
    expect(killed).toBeDefined()
    // Due again now: the new leader's next pass reissues each once more.
    await dueToday(team.admin, dueOrders)
    await expect
      .poll(async () => (await reissues()).map((r) => r.count), { timeout: 45_000 })
      .toEqual(dueOrders.map(() => 2))
    const seen = (await passes()).length
    await expect.poll(async () => (await passes()).length, { timeout: 30_000 }).toBeGreaterThan(seen + 2)
    expect((await reissues()).map((r) => [r.count, r.certificates])).toEqual(dueOrders.map(() => [2, 3]))

    const runs = await passes()
    const at = (ts: string): number => parseDate(ts).getTime()
    for (let i = 1; i < runs.length; i++) {
      const [a, b] = [runs[i - 1], runs[i]]
      if (a.finished_at === null) {
        // Cut short: only the killed node's pass may be, and the next one is another node's.
        expect(team.nodeNamed(a.node)?.pid).toBe(killed.pid)
        expect(b.node).not.toBe(a.node)
        continue
      }
      // Never two nodes' passes at once (the leader's own may overlap, one held up by a slow
      // check), and never more than one per interval (timestamps hold seconds).
      if (b.node !== a.node)
        expect(at(b.started_at), `${b.node} started while ${a.node} ran`).toBeGreaterThanOrEqual(at(a.finished_at))
      expect(at(b.started_at) - at(a.started_at)).toBeGreaterThanOrEqual((PASS_SECONDS - 1) * 1000)
    }
    // Passes went on after the kill, on the nodes still alive, well within a few intervals.
    const after = runs.filter((r) => at(r.started_at) >= Math.floor(killedAt / 1000) * 1000 + 1000)
    expect(after.length).toBeGreaterThan(2)
    for (const r of after) expect(team.nodeNamed(r.node)?.pid).not.toBe(killed.pid)
    expect(at(after[0].started_at) - killedAt).toBeLessThan(30_000)
  })

  it('runs the example reseller script through the balancer: ordered, validated, issued', async () => {
    const r = await team.reseller('Script Reseller', 500)
    const csrFile = join(dir, 'script.csr')
    writeFileSync(csrFile, opensslCsr(['script.storm.test']))
    const out = join(dir, 'certs')
    const args = ['--domain', 'script.storm.test', '--csr', csrFile, '--webroot', webroot, '--out', out, '--wait', '60']
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(
        join(ROOT, 'node_modules', '.bin', 'tsx'),
        [join('client', 'examples', 'place-order.mts'), ...args],
        {
          cwd: ROOT,
          env: { ...process.env, CERTDESK_URL: team.api, CERTDESK_API_KEY: r.key }
        }
      )
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (d) => (stdout += d))
      child.stderr.on('data', (d) => (stderr += d))
      child.on('error', reject)
      child.on('close', (code) => resolve({ code, stdout, stderr }))
    })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toMatch(/^issued [0-9A-F]+, valid till \d{4}-\d{2}-\d{2}: /m)
    expect(readFileSync(join(out, 'script.storm.test.crt'), 'utf8')).toContain('BEGIN CERTIFICATE')
  })
})
