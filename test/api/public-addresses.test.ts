/**
 * Every address CertDesk shows a customer comes from the public base URL once one is set: the
 * ACME directory in GET /orders/{id}/acme (`acme.server_url`), the set-up commands for certbot,
 * acme.sh and lego, the root certificate's link, the auto-install set-up link and its page, and
 * the desktop app's ACME panel and HMAC reveal. None of them names a loopback address then.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHandlers } from '../../src-main/app/handlers'
import { PUBLIC_URL_SETTING } from '../../src-main/core/public-url'
import { API_VERSION } from '../../src-main/http/server'
import { startServer, type TestServer } from '../support/server'

type Acme = {
  account: { server_url: string; eab_kid: string; eab_hmac_key: string }
  root_ca_url: string
  commands: { root_ca: string; certbot: string; acme_sh: string; lego: string }
  autoinstall: { login_url: string } | null
}

const BASE = 'https://certs.reseller.example:8443'
const DIRECTORY = `${BASE}/acme/directory`
const LOOPBACK = /localhost|127\.0\.0\.1|\[::1\]|:7781|:7780/

let s: TestServer
beforeAll(async () => {
  s = await startServer()
  await s.service.settings.update({ [PUBLIC_URL_SETTING]: BASE })
})
afterAll(() => s.close())

async function subscription(
  productId: number,
  domain: string
): Promise<{ orderId: number; resellerId: number; acme: Acme }> {
  const r = await s.reseller({ credit: 200 })
  const created = await s.request<{ order_id: number }>('POST', '/orders', {
    key: r.key,
    body: { product_id: productId, domain, contact_email: 'ops@example.com' }
  })
  expect(created.status).toBe(200)
  const res = await s.request<{ acme: Acme }>('GET', `/orders/${created.body.order_id}/acme`, { key: r.key })
  expect(res.status).toBe(200)
  return { orderId: created.body.order_id, resellerId: r.id, acme: res.body.acme }
}

describe('with a public base URL set', () => {
  it('GET /orders/{id}/acme names the directory, the root and the commands by it', async () => {
    const { acme } = await subscription(12, 'shop.example.com')
    expect(acme.account.server_url).toBe(DIRECTORY)
    expect(acme.root_ca_url).toBe(`${BASE}/acme/root-ca.pem`)
    expect(acme.commands.root_ca).toBe(`curl -so certdesk-root.pem ${BASE}/acme/root-ca.pem`)
    expect(acme.commands.certbot).toContain(`--server ${DIRECTORY} --eab-kid ${acme.account.eab_kid}`)
    expect(acme.commands.acme_sh).toContain(`--server ${DIRECTORY} --ca-bundle certdesk-root.pem`)
    expect(acme.commands.lego).toContain(`lego --server ${DIRECTORY} --eab`)
    expect(JSON.stringify(acme)).not.toMatch(LOOPBACK)
  })

  it('the auto-install set-up link and the page it opens use it too', async () => {
    const { acme } = await subscription(14, 'auto.example.com')
    const link = acme.autoinstall?.login_url as string
    expect(link).toMatch(new RegExp(`^${BASE}/acme/setup/[A-Za-z0-9_-]{32}$`))
    // The page is served on every listener; here it is fetched on loopback by its path.
    const page = await fetch(`${s.url}${new URL(link).pathname}`)
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain(`<code>${DIRECTORY}</code>`)
    expect(html).toContain(`${BASE}/acme/root-ca.pem`)
    expect(html).not.toMatch(LOOPBACK)
  })

  it('the desktop ACME panel and the HMAC reveal show the same addresses', async () => {
    const { orderId, resellerId, acme } = await subscription(14, 'panel.example.com')
    const app = createHandlers(s.service, { transport: 'electron', listenerUrl: () => s.url, apiVersion: API_VERSION })
    const page = await app.acmeSubscription(resellerId, orderId)
    const view = page?.subscription
    expect(view?.serverUrl).toBe(DIRECTORY)
    expect(view?.rootCaUrl).toBe(`${BASE}/acme/root-ca.pem`)
    expect(view?.setupUrl).toBe(acme.autoinstall?.login_url)
    expect(view?.commands.certbot).toContain(`--server ${DIRECTORY}`)
    const revealed = await app.acmeHmacKey(resellerId, orderId)
    expect(revealed.commands.lego).toContain(`--server ${DIRECTORY}`)
    expect(JSON.stringify([view, revealed.commands])).not.toMatch(LOOPBACK)
  })

  it('cleared, the loopback addresses come back', async () => {
    await s.service.settings.update({ [PUBLIC_URL_SETTING]: '' })
    try {
      const { acme } = await subscription(12, 'local.example.com')
      expect(acme.account.server_url).toMatch(/^https:\/\/localhost:\d+\/acme\/directory$/)
      expect(acme.root_ca_url).toBe(`${s.url}/acme/root-ca.pem`)
    } finally {
      await s.service.settings.update({ [PUBLIC_URL_SETTING]: BASE })
    }
  })
})
