/**
 * Validation per name through the reseller API: `dcv_method` stays the default of every name,
 * `dcv_per_name` gives single names their own method (a file for hosts, DNS for the wildcard,
 * email at a parent domain), change-dcv with `dcv_per_name` alone changes those names only, and
 * a reissue keeps each name's method. Real DNS (pebble-challtestsrv) and web servers on loopback
 * answer the checks; approvals use the code from the message CertDesk kept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { opensslCsr } from '../support/csr'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Body = Record<string, unknown>
type Row = {
  name: string
  method: string
  status: string
  instructions: Record<string, unknown> & { approver_choices?: string[] }
}

let s: TestServer
let dns: DnsServer
let web: WebServer
let r: TestReseller

beforeAll(async () => {
  ;[s, dns, web] = await Promise.all([startServer(), startDns(), startWeb()])
  await s.service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await s.service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  await s.service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  r = await s.reseller({ credit: 2000 })
})
afterAll(async () => {
  await Promise.all([web?.close(), dns?.close()])
  await s?.close()
})

const post = (path: string, body: Body, key = r.key) => s.request<Body>('POST', path, { key, body })
const get = (path: string, key = r.key) => s.request<Body>('GET', path, { key })
const rows = (b: Body): Row[] => b.validation as Row[]

/** A multi-domain order with one wildcard SAN. */
async function multiDomain(domain: string): Promise<number> {
  const res = await post('/orders', { product_id: 4, domain, san_wildcard_count: 1 })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body.order_id as number
}

/** The code of the newest approval message for `name`, as its approver reads it. */
async function codeFor(orderId: number, name: string): Promise<string> {
  const m = (await s.service.certificates.outbox(orderId)).find((x) => x.name === name)
  const code = /approval code to your provider:\s+(\S+)/.exec(m?.body ?? '')?.[1]
  if (!code) throw new Error(`no approval message for ${name}`)
  return code
}

/** What the store holds for the order's checks: a refused request must leave it as it was. */
const checksOf = async (orderId: number): Promise<unknown[]> =>
  await s.service.ctx.store.all(
    'SELECT name, method, approver_email, status, email_code_hash FROM dcv_checks WHERE order_id = ? ORDER BY id',
    orderId
  )

async function publish(row: Row): Promise<void> {
  const i = row.instructions
  if (row.method === 'dns') await dns.setCname(i.record_name as string, i.record_value as string)
  else web.put(row.name.replace(/^\*\./, ''), new URL(i.url as string).pathname, i.file_content as string)
}

describe('validation per name', () => {
  const NAMES = ['shop.example.test', 'www.shop.example.test', '*.shop.example.test', 'mail.shop.co.uk']

  it('validates hosts by file, the wildcard by DNS and another name by email at its parent domain, then issues', async () => {
    const id = await multiDomain(NAMES[0])
    const conf = await post('/ssl/configure', {
      order_id: id,
      csr: opensslCsr(NAMES, 'ec:P-256'),
      dcv_method: 'http',
      dcv_per_name: [
        { name: '*.shop.example.test', dcv_method: 'dns' },
        { name: 'MAIL.shop.co.uk', dcv_method: 'email', approver_email: 'hostmaster@shop.co.uk' }
      ]
    })
    expect(conf.status, JSON.stringify(conf.body)).toBe(200)
    expect(conf.body.status).toBe('validation_pending')
    // The spec's field still says the default every other name uses.
    expect(conf.body.dcv_method).toBe('http')
    const v = rows(conf.body)
    expect(v.map((x) => [x.name, x.method, x.instructions.method])).toEqual([
      [NAMES[0], 'http', 'http'],
      [NAMES[1], 'http', 'http'],
      [NAMES[2], 'dns', 'dns'],
      [NAMES[3], 'email', 'email']
    ])
    expect(v[2].instructions.record_name).toMatch(/^_[0-9a-f]{32}\.shop\.example\.test$/)
    expect(v[3].instructions.approver_email).toBe('hostmaster@shop.co.uk')
    // Approvers: the name and its parents up to the registrable domain, never the public suffix.
    const choices = v[3].instructions.approver_choices ?? []
    expect(choices).toContain('admin@mail.shop.co.uk')
    expect(choices).toContain('postmaster@shop.co.uk')
    expect(choices.filter((a) => a.endsWith('@co.uk') || a.endsWith('@uk'))).toEqual([])
    expect((await s.service.certificates.outbox(id)).map((m) => [m.name, m.to])).toEqual([
      ['mail.shop.co.uk', 'hostmaster@shop.co.uk']
    ])

    // One name moves to DNS; nothing of the others changes: the mailed code still approves.
    const code = await codeFor(id, NAMES[3])
    const before = await checksOf(id)
    const moved = await post('/ssl/change-dcv', {
      order_id: id,
      dcv_per_name: [{ name: NAMES[1], dcv_method: 'dns' }]
    })
    expect(moved.status, JSON.stringify(moved.body)).toBe(200)
    expect(rows(moved.body).map((x) => x.method)).toEqual(['http', 'dns', 'dns', 'email'])
    expect((await checksOf(id)).filter((_, i) => i !== 1)).toEqual(before.filter((_, i) => i !== 1))
    expect(await s.service.certificates.outbox(id)).toHaveLength(1)

    for (const row of rows(moved.body).slice(0, 3)) await publish(row)
    const approved = await post('/ssl/approve', { order_id: id, code })
    expect(approved.status, JSON.stringify(approved.body)).toBe(200)
    expect(approved.body.status).toBe('completed')
    expect(rows(approved.body).map((x) => x.status)).toEqual(['valid', 'valid', 'valid', 'valid'])
    const cert = await get(`/certificate/${id}`)
    expect((cert.body.certificate as Body).names).toEqual(NAMES)

    // A reissue keeps each name's method; a name given another one is validated again, alone.
    const re = await post('/ssl/reissue', {
      order_id: id,
      dcv_per_name: [{ name: '*.shop.example.test', dcv_method: 'email', approver_email: 'admin@example.test' }]
    })
    expect(re.status, JSON.stringify(re.body)).toBe(200)
    expect(re.body.status).toBe('validation_pending')
    expect(rows(re.body).map((x) => [x.method, x.status])).toEqual([
      ['http', 'valid'],
      ['dns', 'valid'],
      ['email', 'pending'],
      ['email', 'valid']
    ])
    const done = await post('/ssl/approve', { order_id: id, code: await codeFor(id, NAMES[2]) })
    expect(done.body.status).toBe('completed')
  })

  it('accepts admin@ at a parent of a deep name, refuses the public suffix, and changes nothing when refusing', async () => {
    const id = await multiDomain('a.b.shop.co.uk')
    const csr = opensslCsr(['a.b.shop.co.uk', '*.b.shop.co.uk'], 'ec:P-256')
    for (const [body, status, message] of [
      [
        { dcv_method: 'email', approver_email: 'admin@co.uk' },
        400,
        /not at a\.b\.shop\.co\.uk or a parent .* up to shop\.co\.uk/
      ],
      [{ dcv_method: 'email', approver_email: 'admin@uk' }, 400, /not at a\.b\.shop\.co\.uk or a parent/],
      [{ dcv_method: 'http' }, 400, /cannot validate the wildcard name \*\.b\.shop\.co\.uk/],
      [
        { dcv_method: 'http', dcv_per_name: [{ name: 'evil.example', dcv_method: 'dns' }] },
        400,
        /"evil\.example" is not a name of order/
      ],
      [
        {
          dcv_method: 'dns',
          dcv_per_name: [
            { name: '*.b.shop.co.uk', dcv_method: 'dns' },
            { name: '*.B.shop.co.uk', dcv_method: 'email' }
          ]
        },
        400,
        /\*\.b\.shop\.co\.uk is named twice/
      ],
      [
        {
          dcv_method: 'dns',
          dcv_per_name: [{ name: 'a.b.shop.co.uk', dcv_method: 'http', approver_email: 'admin@shop.co.uk' }]
        },
        400,
        /approver_email of a\.b\.shop\.co\.uk is only for email validation, not http/
      ],
      [
        {
          dcv_method: 'dns',
          dcv_per_name: [{ name: '*.b.shop.co.uk', dcv_method: 'email', approver_email: 'admin@co.uk' }]
        },
        400,
        /not at b\.shop\.co\.uk or a parent/
      ],
      [{ dcv_method: 'dns', dcv_per_name: [{ name: 'a.b.shop.co.uk', dcv_method: 'ftp' }] }, 400, /dcv_method/],
      [{ dcv_method: 'dns', dcv_per_name: [{ name: 'a.b.shop.co.uk', dcv_method: 'dns', x: 1 }] }, 400, /./],
      [
        { dcv_method: 'dns', dcv_per_name: Array.from({ length: 1001 }, () => ({ name: 'a', dcv_method: 'dns' })) },
        400,
        /./
      ]
    ] as const) {
      const res = await post('/ssl/configure', { order_id: id, csr, ...body })
      expect(res.status, JSON.stringify(body).slice(0, 200)).toBe(status)
      expect(res.body).toMatchObject({ success: false })
      expect(String(res.body.error)).toMatch(message)
    }
    expect((await get(`/orders/${id}`)).body).toMatchObject({ order: { status: 'pending' } })
    expect(await checksOf(id)).toEqual([])
    expect(await s.service.certificates.outbox(id)).toEqual([])

    // The registrable domain is an approver's domain for every name under it, the wildcard too.
    const ok = await post('/ssl/configure', {
      order_id: id,
      csr,
      dcv_method: 'email',
      approver_email: 'admin@shop.co.uk',
      dcv_per_name: [{ name: '*.b.shop.co.uk', dcv_method: 'dns' }]
    })
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)
    const [host, wild] = rows(ok.body)
    expect(host.instructions.approver_email).toBe('admin@shop.co.uk')
    expect(host.instructions.approver_choices).toEqual(
      ['a.b.shop.co.uk', 'b.shop.co.uk', 'shop.co.uk'].flatMap((d) =>
        ['admin', 'administrator', 'webmaster', 'hostmaster', 'postmaster'].map((l) => `${l}@${d}`)
      )
    )
    expect(wild.method).toBe('dns')

    // change-dcv: something to change is required; a validated name, another reseller's order.
    expect((await post('/ssl/change-dcv', { order_id: id })).status).toBe(400)
    const stranger = await s.reseller({ credit: 10 })
    const foreign = await post(
      '/ssl/change-dcv',
      { order_id: id, dcv_per_name: [{ name: '*.b.shop.co.uk', dcv_method: 'email' }] },
      stranger.key
    )
    expect(foreign.status).toBe(404)
    await publish(wild)
    const checked = await get(`/ssl/${id}`)
    expect(rows(checked.body)[1].status).toBe('valid')
    const again = await post('/ssl/change-dcv', {
      order_id: id,
      dcv_per_name: [{ name: '*.b.shop.co.uk', dcv_method: 'email' }]
    })
    expect(again.status).toBe(409)
    expect(again.body.error).toMatch(/\*\.b\.shop\.co\.uk: it is validated already/)
  })
})
