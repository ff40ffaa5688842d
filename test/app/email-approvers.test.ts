/**
 * Email validation of a multi-domain order through the desktop bridge: an approver mailbox per
 * name (BR §3.2.2.4.4 constructed addresses), another one chosen for a single name while it
 * waits, and approvals recorded name by name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AppHandlers } from '../../src-main/app/bridge-answer'
import { createHandlers } from '../../src-main/app/handlers'
import { APPROVER_LOCAL_PARTS as CORE_LOCAL_PARTS } from '../../src-main/core/certificates/cab-policy'
import { API_VERSION } from '../../src-main/http/server'
import { APPROVER_LOCAL_PARTS } from '../../src-preload/contract'
import { opensslCsr } from '../support/csr'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Body = Record<string, unknown>
let s: TestServer
let app: AppHandlers
let r: TestReseller

beforeAll(async () => {
  s = await startServer()
  app = createHandlers(s.service, { transport: 'electron', listenerUrl: () => s.url, apiVersion: API_VERSION })
  r = await s.reseller({ credit: 500 })
})
afterAll(async () => {
  await s.close()
})

const NAMES = ['multi.example.com', 'shop.example.net', '*.example.org']

async function multiDomainOrder(domain: string): Promise<number> {
  const res = await s.request<Body>('POST', '/orders', {
    key: r.key,
    body: { product_id: 4, domain, san_wildcard_count: 1 }
  })
  expect(res.status).toBe(200)
  return res.body.order_id as number
}

/** The approval code of the newest message for `name` to `to`, as the approver would read it. */
async function codeFor(orderId: number, name: string, to: string): Promise<string> {
  const message = (await app.emailOutbox(r.id, orderId)).find((m) => m.name === name && m.to === to)
  const code = /approval code to your provider:\s+(\S+)/.exec(message?.body ?? '')?.[1]
  if (!code) throw new Error(`no approval message for ${name} to ${to}`)
  return code
}

describe('approvers per name', () => {
  it('offers the same mailboxes as the core accepts', () => {
    expect([...APPROVER_LOCAL_PARTS]).toEqual([...CORE_LOCAL_PARTS])
  })

  it('mails each name its chosen approver, changes one, and issues once every name is approved', async () => {
    const orderId = await multiDomainOrder('multi.example.com')
    const ssl = await app.configureOrder(r.id, {
      orderId,
      csr: opensslCsr(NAMES, 'ec:P-256'),
      dcvMethod: 'email',
      approvers: {
        'multi.example.com': 'hostmaster@multi.example.com',
        'SHOP.example.net': 'Postmaster@shop.example.net',
        '*.example.org': 'webmaster@example.org'
      }
    })
    expect(ssl.order.status).toBe('validation_pending')
    expect(ssl.approverEmail).toBe('hostmaster@multi.example.com')
    expect(ssl.validation.map((v) => [v.name, v.status, v.instructions])).toEqual([
      [
        'multi.example.com',
        'pending',
        {
          method: 'email',
          approverEmail: 'hostmaster@multi.example.com',
          sentAt: expect.any(String),
          approverChoices: expect.arrayContaining(['hostmaster@multi.example.com'])
        }
      ],
      [
        'shop.example.net',
        'pending',
        {
          method: 'email',
          approverEmail: 'postmaster@shop.example.net',
          sentAt: expect.any(String),
          approverChoices: expect.arrayContaining(['postmaster@shop.example.net'])
        }
      ],
      [
        '*.example.org',
        'pending',
        {
          method: 'email',
          approverEmail: 'webmaster@example.org',
          sentAt: expect.any(String),
          approverChoices: expect.arrayContaining(['webmaster@example.org'])
        }
      ]
    ])
    const box = await app.emailOutbox(r.id, orderId)
    expect(box.map((m) => [m.name, m.to]).sort()).toEqual(
      [
        ['multi.example.com', 'hostmaster@multi.example.com'],
        ['shop.example.net', 'postmaster@shop.example.net'],
        ['*.example.org', 'webmaster@example.org']
      ].sort()
    )

    // A code is approved only for the name it was mailed for.
    const shopCode = await codeFor(orderId, 'shop.example.net', 'postmaster@shop.example.net')
    await expect(app.approveEmail(r.id, orderId, shopCode, 'multi.example.com')).rejects.toThrow(
      /could not record approval for multi\.example\.com: the code does not match its pending approval/
    )
    const first = await app.approveEmail(r.id, orderId, shopCode, 'shop.example.net')
    expect(first.validation.map((v) => v.status)).toEqual(['pending', 'valid', 'pending'])

    // Another mailbox for the wildcard: a new code goes there; its old code stops working and the
    // other names keep theirs.
    const oldWildCode = await codeFor(orderId, '*.example.org', 'webmaster@example.org')
    const mainCode = await codeFor(orderId, 'multi.example.com', 'hostmaster@multi.example.com')
    const changed = await app.chooseApprover(r.id, orderId, '*.example.org', 'admin@example.org')
    expect(changed.validation[2]).toMatchObject({
      status: 'pending',
      instructions: { method: 'email', approverEmail: 'admin@example.org' }
    })
    expect((await app.emailOutbox(r.id, orderId)).length).toBe(4)
    await expect(app.approveEmail(r.id, orderId, oldWildCode, '*.example.org')).rejects.toThrow(/does not match/)
    // Refused choices change nothing: another domain, another mailbox, a second address, a
    // validated name, a name the order does not have, another reseller's order.
    for (const [name, address, message] of [
      ['*.example.org', 'admin@evil.test', /not at example\.org or a parent/],
      ['*.example.org', 'ceo@example.org', /not an approver address/],
      ['*.example.org', 'admin@example.org,admin@evil.test', /not an approver address/],
      ['*.example.org', 'admin@example.org\nBcc: admin@evil.test', /not an approver address/],
      ['shop.example.net', 'admin@shop.example.net', /validated already/],
      ['evil.test', 'admin@evil.test', /"evil\.test" is not a name of order/]
    ] as const) {
      await expect(app.chooseApprover(r.id, orderId, name, address), `${name} ${address}`).rejects.toThrow(message)
    }
    const stranger = await s.reseller({ credit: 10 })
    await expect(app.chooseApprover(stranger.id, orderId, '*.example.org', 'admin@example.org')).rejects.toThrow(
      /not found/
    )
    expect((await app.emailOutbox(r.id, orderId)).length).toBe(4)

    const second = await app.approveEmail(r.id, orderId, mainCode, 'multi.example.com')
    expect(second.order.status).toBe('validation_pending')
    const done = await app.approveEmail(
      r.id,
      orderId,
      await codeFor(orderId, '*.example.org', 'admin@example.org'),
      '*.example.org'
    )
    expect(done.order.status).toBe('completed')
    expect(done.validation.map((v) => [v.name, v.status])).toEqual([
      ['multi.example.com', 'valid'],
      ['shop.example.net', 'valid'],
      ['*.example.org', 'valid']
    ])
    expect(done.certificate?.names).toEqual(NAMES)
  })

  it('refuses approver maps that do not fit the order, and configures nothing', async () => {
    const orderId = await multiDomainOrder('maps.example.com')
    const csr = opensslCsr(['maps.example.com', 'api.example.net'], 'ec:P-256')
    for (const [approvers, message] of [
      [{ 'other.example.com': 'admin@other.example.com' }, /"other\.example\.com" is not a name of order/],
      [JSON.parse('{"__proto__": "admin@maps.example.com"}'), /"__proto__" is not a name of order/],
      [{ 'api.example.net': 'admin@maps.example.com' }, /not at api\.example\.net or a parent/],
      [{ 'api.example.net': 'admin@net' }, /not at api\.example\.net or a parent/],
      [{ 'api.example.net': 42 }, /each approver must be an email address/],
      [['admin@maps.example.com'], /approvers must map each name/]
    ] as const) {
      await expect(
        app.configureOrder(r.id, { orderId, csr, dcvMethod: 'email', approvers: approvers as Record<string, string> }),
        String(message)
      ).rejects.toThrow(message)
    }
    await expect(
      app.configureOrder(r.id, {
        orderId,
        csr,
        dcvMethod: 'dns',
        approvers: { 'api.example.net': 'admin@api.example.net' }
      })
    ).rejects.toThrow(/only for email validation/)
    expect((await app.getOrder(r.id, orderId)).status).toBe('pending')
    expect(await app.emailOutbox(r.id, orderId)).toEqual([])
  })
})
