/**
 * The ACME client commands CertDesk shows (GET /orders/{id}/acme, the public set-up page, the
 * desktop ACME panel over the bridge) are pasted into shells. A hostile contact address is
 * refused at the door on every path, and whatever an older store holds reaches the client as
 * exactly the intended arguments when the command runs in a real shell.
 */
import type { SqlArg } from '../../src-main/core/store'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callHandler, type AppHandlers } from '../../src-main/app/bridge-answer'
import { createHandlers } from '../../src-main/app/handlers'
import { ACME_DIRECTORY_URL_SETTING, eabSecretName } from '../../src-main/core/acme-server/acme-subscriptions'
import { API_VERSION } from '../../src-main/http/server'
import { HMAC_KEY_PLACEHOLDER } from '../../src-preload/contract'
import { preBlocks, runThroughShell, SHELLS, type Invocation } from '../support/shell-argv'
import { startServer, type TestServer } from '../support/server'

type Body = Record<string, unknown>
type Commands = { root_ca: string; certbot: string; acme_sh: string; lego: string }

const HOSTILE_EMAIL = 'x@y.z;id>/tmp/pwned;#'
const ACME_CAAS = 12
const ACME_AIS = 14
const LISTENER = "http://127.0.0.1:7780/it's $(touch pwned-listener)"

let s: TestServer
let handlers: AppHandlers
beforeAll(async () => {
  s = await startServer()
  handlers = createHandlers(s.service, { transport: 'electron', listenerUrl: () => LISTENER, apiVersion: API_VERSION })
})
afterAll(async () => await s.close())

const count = async (sql: string, ...args: SqlArg[]): Promise<number> =>
  ((await s.service.ctx.store.get(sql, ...args)) as { n: number }).n

describe('contact_email on ACME orders', () => {
  it('refuses a hostile address with 400 in the envelope and creates nothing, over the API and the bridge', async () => {
    const r = await s.reseller({ credit: 500 })
    const hostile = [
      HOSTILE_EMAIL,
      '$(id)@example.com',
      '`id`@example.com',
      "o'brien@example.com",
      'ops@example.com\nid',
      'two words@example.com',
      'bücher@example.com',
      '-oops@example.com'
    ]
    for (const productId of [ACME_CAAS, ACME_AIS, 2]) {
      for (const email of hostile) {
        const res = await s.request<Body>('POST', '/orders', {
          key: r.key,
          body: { product_id: productId, domain: 'hostile.example.com', contact_email: email }
        })
        expect(res.status, `${productId} ${JSON.stringify(email)}`).toBe(400)
        expect(res.body).toEqual({ success: false, error: expect.stringContaining('is not an email address') })
      }
    }
    const bridged = await callHandler(handlers, 'createOrder', [
      r.id,
      { productId: ACME_AIS, domain: 'hostile.example.com', contactEmail: HOSTILE_EMAIL },
      'credit'
    ])
    expect(bridged).toEqual({
      status: 400,
      body: {
        success: false,
        error:
          'contact_email "x@y.z;id>/tmp/pwned;#" is not an email address: "y.z;id>/tmp/pwned;#" after the @ is not a domain name'
      }
    })
    const quoted = await callHandler(handlers, 'quoteOrder', [
      r.id,
      { productId: ACME_AIS, domain: 'hostile.example.com', contactEmail: HOSTILE_EMAIL }
    ])
    expect(quoted.status).toBe(400)

    // Nothing was created and nothing was charged.
    expect(await count('SELECT COUNT(*) AS n FROM orders WHERE reseller_id = ?', r.id)).toBe(0)
    expect(await count('SELECT COUNT(*) AS n FROM acme_subscriptions WHERE reseller_id = ?', r.id)).toBe(0)
    expect(await count('SELECT COUNT(*) AS n FROM events WHERE reseller_id = ?', r.id)).toBe(0)
    expect(
      await count("SELECT COUNT(*) AS n FROM credit_transactions WHERE reseller_id = ? AND type = 'debit'", r.id)
    ).toBe(0)
    expect((await s.request<Body>('GET', '/balance', { key: r.key })).body.balance).toBe(500)
  })
})

describe('generated commands', () => {
  it('hand every stored value to the client as exactly one argument, in every shell, and run nothing else', async () => {
    const r = await s.reseller({ credit: 500 })
    const created = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { product_id: ACME_AIS, domain: 'quoting.example.com', contact_email: 'ops@example.com' }
    })
    expect(created.status).toBe(200)
    const orderId = created.body.order_id as number
    const sub = await s.service.acme.forOrder(r.id, orderId)

    // An older store (or a hand edit) with values today's checks refuse.
    const email = `o'brien "ops" @ex ample.com; touch pwned-email #`
    const names = [
      'shop example.com',
      "it's.example.com",
      '$(touch pwned-name).example.com',
      '`touch pwned-tick`.example.com',
      'new\nline.example.com',
      '*.bücher.example'
    ]
    const serverUrl = `https://localhost:7781/acme/directory?a='b c'&d=$(touch pwned-url)`
    const kid = `kid_'x' "y" $(touch pwned-kid)`
    const hmac = "hm'ac `touch pwned-hmac` $HOME;touch pwned-hmac2"
    const db = s.service.ctx.store
    await db.run('UPDATE orders SET contact_email = ? WHERE id = ?', email, orderId)
    await db.run('DELETE FROM acme_subscription_domains WHERE subscription_id = ?', sub.id)
    for (const [i, n] of names.entries()) {
      await db.run(
        'INSERT INTO acme_subscription_domains (subscription_id, public_id, name, position) VALUES (?, ?, ?, ?)',
        sub.id,
        `dom_q${i}`,
        n,
        i
      )
    }
    await db.run(
      'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      ACME_DIRECTORY_URL_SETTING,
      serverUrl
    )
    await db.run('UPDATE acme_subscriptions SET eab_kid = ? WHERE id = ?', kid, sub.id)
    await s.service.ctx.secrets.set(eabSecretName(kid), hmac)

    const expected = (rootCaUrl: string, key: string): Record<keyof Commands, Invocation[]> => {
      const common = ['--server', serverUrl]
      return {
        root_ca: [{ program: 'curl', args: ['-so', 'certdesk-root.pem', rootCaUrl], env: {} }],
        certbot: [
          {
            program: 'certbot',
            args: [
              'certonly',
              '--standalone',
              '--non-interactive',
              '--agree-tos',
              ...common,
              '--eab-kid',
              kid,
              `--eab-hmac-key=${key}`,
              '-m',
              email,
              ...names.flatMap((n) => ['-d', n])
            ],
            env: { REQUESTS_CA_BUNDLE: 'certdesk-root.pem' }
          }
        ],
        acme_sh: [
          {
            program: 'acme.sh',
            args: [
              '--register-account',
              ...common,
              '--ca-bundle',
              'certdesk-root.pem',
              '--eab-kid',
              kid,
              '--eab-hmac-key',
              key,
              '-m',
              email
            ],
            env: {}
          },
          {
            program: 'acme.sh',
            args: [
              '--issue',
              '--standalone',
              ...common,
              '--ca-bundle',
              'certdesk-root.pem',
              ...names.flatMap((n) => ['-d', n])
            ],
            env: {}
          }
        ],
        lego: [
          {
            program: 'lego',
            args: [
              ...common,
              '--eab',
              '--kid',
              kid,
              `--hmac=${key}`,
              '--email',
              email,
              '--accept-tos',
              ...names.flatMap((n) => ['--domains', n]),
              '--http',
              'run'
            ],
            env: { LEGO_CA_CERTIFICATES: 'certdesk-root.pem' }
          }
        ]
      }
    }

    // 1. GET /orders/{id}/acme
    const api = await s.request<{ acme: { commands: Commands; autoinstall: { login_url: string } } }>(
      'GET',
      `/orders/${orderId}/acme`,
      { key: r.key }
    )
    expect(api.status).toBe(200)
    const sources: { from: string; commands: Commands; want: Record<keyof Commands, Invocation[]> }[] = [
      {
        from: 'GET /orders/{id}/acme',
        commands: api.body.acme.commands,
        want: expected(`${s.url}/acme/root-ca.pem`, hmac)
      }
    ]
    // 2. The public set-up page, as a browser shows it.
    const page = await fetch(api.body.acme.autoinstall.login_url)
    expect(page.status).toBe(200)
    const [rootCa, certbot, acmeSh, lego] = preBlocks(await page.text())
    sources.push({
      from: 'set-up page',
      commands: { root_ca: rootCa, certbot, acme_sh: acmeSh, lego },
      want: expected(`${s.url}/acme/root-ca.pem`, hmac)
    })
    // 3. The desktop ACME panel: before the key is revealed, and after.
    const listed = await callHandler(handlers, 'listAcmeSubscriptions', [r.id])
    const view = (listed.body as { result: { orderId: number; commands: Record<string, string> }[] }).result.find(
      (v) => v.orderId === orderId
    )!
    const fromView = (c: Record<string, string>): Commands => ({
      root_ca: c.rootCa,
      certbot: c.certbot,
      acme_sh: c.acmeSh,
      lego: c.lego
    })
    const rootFromListener = "http://127.0.0.1:7780/it's $(touch pwned-listener)/acme/root-ca.pem"
    sources.push({
      from: 'desktop panel (hidden key)',
      commands: fromView(view.commands),
      want: expected(rootFromListener, HMAC_KEY_PLACEHOLDER)
    })
    const revealed = await callHandler(handlers, 'acmeHmacKey', [r.id, orderId])
    const result = (revealed.body as { result: { eabHmacKey: string; commands: Record<string, string> } }).result
    expect(result.eabHmacKey).toBe(hmac)
    sources.push({
      from: 'desktop panel (revealed key)',
      commands: fromView(result.commands),
      want: expected(rootFromListener, hmac)
    })

    expect(SHELLS.length).toBeGreaterThanOrEqual(2)
    for (const shell of SHELLS) {
      for (const { from, commands, want } of sources) {
        for (const name of ['root_ca', 'certbot', 'acme_sh', 'lego'] as const) {
          const ran = runThroughShell(shell, commands[name])
          const label = `${from}, ${name}, ${shell}: ${commands[name]}`
          expect(ran.stderr, label).toBe('')
          expect(ran.status, label).toBe(0)
          expect(ran.invocations, label).toEqual(want[name])
          expect(ran.leftovers, label).toEqual([])
        }
      }
    }
  })
})
