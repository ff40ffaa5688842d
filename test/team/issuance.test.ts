/**
 * One certificate per validation, whichever node issues it: status polls of an order whose names
 * just passed, sent to several nodes of one PostgreSQL book at the same moment (a script polling
 * through a balancer, a customer refreshing), issue once; the others see the certificate that
 * one issued. Three services in this process stand for three nodes.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { openService, type Service } from '../../src-main/core/service'
import { opensslCsr } from '../support/csr'
import { startDns, type DnsServer } from '../support/dcv-servers'
import { createTestDatabase, type TestDatabase } from '../support/postgres'

let db: TestDatabase
let dir: string
let dns: DnsServer
let web: http.Server
const files = new Map<string, string>()
const nodes: Service[] = []

beforeAll(async () => {
  db = await createTestDatabase()
  dir = mkdtempSync(join(tmpdir(), 'certdesk-team-issuance-'))
  dns = await startDns()
  web = http.createServer((req, res) => {
    const body = files.get((req.url ?? '').split('?')[0])
    if (body === undefined) return void res.writeHead(404).end()
    res.end(body)
  })
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve))
  for (let i = 0; i < 3; i++) nodes.push(await openService({ dataDir: dir, database: db.url }))
  const s = nodes[0].settings
  await s.set(DCV_SETTINGS.resolver, dns.address)
  await s.set(DCV_SETTINGS.httpPort, String((web.address() as AddressInfo).port))
  await s.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
})

afterAll(async () => {
  for (const n of nodes) await n.close()
  await new Promise((resolve) => web?.close(resolve))
  await dns?.close()
  await db?.drop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('issuance across nodes', () => {
  it('issues one certificate when every node is asked for the status of a just-validated order at once', async () => {
    const admin = nodes[0]
    const r = await admin.resellers.create({ name: 'Polling Shop', email: 'ops@polling.test', groupId: 1 })
    await admin.ledger.topUp(r.id, 100_000)
    for (let round = 0; round < 3; round++) {
      const domain = `poll${round}.issuance.test`
      const id = (await admin.orders.create(await admin.resellers.get(r.id), { productId: 2, domain, period: 12 }))
        .order.id
      const conf = await admin.certificates.configure(r.id, {
        orderId: id,
        csr: opensslCsr([domain]),
        dcvMethod: 'http'
      })
      const instr = conf.validation[0].instructions
      if (instr.method !== 'http') throw new Error('expected http validation')
      expect(conf.order.status).toBe('validation_pending')
      // The file goes up; every node is asked at once, twice each.
      files.set(new URL(instr.url).pathname, instr.fileContent)
      const answers = await Promise.all([...nodes, ...nodes].map((n) => n.certificates.status(r.id, id)))
      expect(answers.map((a) => a.order.status)).toEqual(answers.map(() => 'completed'))
      const certs = await admin.ctx.store.all<{ serial: string }>(
        'SELECT serial FROM certificates WHERE order_id = ?',
        id
      )
      expect(certs, domain).toHaveLength(1)
      expect(new Set(answers.map((a) => a.certificate?.serial))).toEqual(new Set([certs[0].serial]))
    }
  })
})
