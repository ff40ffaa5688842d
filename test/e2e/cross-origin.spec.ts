/**
 * A page on another port of 127.0.0.1 (a local dev server, any tool's web UI) is the same site
 * as browser mode, so Chromium sends it the session cookie. Whatever it tries (forms of every
 * encoding, fetch with credentials, no-cors fetch with and without a body, a beacon, a sign-out
 * form), no backup starts and the user stays signed in; the real UI then backs up as before.
 */
import { expect, test } from '@playwright/test'
import { existsSync, readdirSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { base, nav, openApp } from './support'

/** Everything in the backups folder: a backup that started leaves its file or its temporary one. */
const backups = (): string[] => {
  const dir = join(process.env.CERTDESK_E2E_DATA_DIR ?? '', 'backups')
  return existsSync(dir) ? readdirSync(dir).sort() : []
}

/** The other page: forms into frames, then every kind of fetch, then a marker in the title. */
function hostilePage(target: string): string {
  const rpc = `${target}/rpc/startBackup`
  const form = (id: string, action: string, enctype: string, field: string, value: string): string =>
    `<iframe name="${id}"></iframe><form id="${id}-form" method="post" action="${action}" enctype="${enctype}" target="${id}">` +
    `<input name='${field}' value='${value}'></form>`
  return `<!doctype html><html><head><title>loading</title></head><body>
${form('plain', rpc, 'text/plain', '{"args":[],"x":"', '"}')}
${form('urlencoded', rpc, 'application/x-www-form-urlencoded', 'args', '[]')}
${form('multipart', rpc, 'multipart/form-data', 'args', '[]')}
${form('logout', `${target}/ui/logout`, 'text/plain', '{"x":"', '"}')}
<script>
(async () => {
  const loaded = (name) => new Promise((resolve) => {
    document.querySelector('iframe[name=' + name + ']').addEventListener('load', resolve, { once: true })
    document.getElementById(name + '-form').submit()
  })
  await Promise.all(['plain', 'urlencoded', 'multipart', 'logout'].map(loaded))
  const tries = [
    fetch(${JSON.stringify(rpc)}, { method: 'POST', mode: 'no-cors', credentials: 'include' }),
    fetch(${JSON.stringify(rpc)}, { method: 'POST', mode: 'no-cors', credentials: 'include', body: '{"args":[]}' }),
    fetch(${JSON.stringify(rpc)}, { method: 'POST', mode: 'no-cors', credentials: 'include', keepalive: true }),
    fetch(${JSON.stringify(rpc)}, {
      method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: '{"args":[]}'
    }),
    fetch(${JSON.stringify(rpc)}, { method: 'POST', credentials: 'include', body: '{"args":[]}' })
  ]
  const results = await Promise.allSettled(tries)
  navigator.sendBeacon(${JSON.stringify(rpc)}, '{"args":[]}')
  navigator.sendBeacon(${JSON.stringify(rpc)})
  window.results = results.map((r) => r.status)
  document.title = 'done'
})()
</script></body></html>`
}

let other: Server
let otherUrl = ''
const seen: string[] = []

test.beforeAll(async () => {
  other = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`)
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(hostilePage(base()))
  })
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve))
  otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}/`
})

test.afterAll(async () => {
  await new Promise((resolve) => other.close(resolve))
})

test('a page on another port of 127.0.0.1 cannot start a backup or sign the user out', async ({ page, context }) => {
  // The signed-in browser holds the session cookie, and Chromium sends it to the other port too.
  expect((await context.cookies(base())).map((c) => c.name)).toContain('certdesk_session')
  const before = backups()

  const responses: { url: string; status: number }[] = []
  page.on('response', (r) => {
    if (r.url().startsWith(base())) responses.push({ url: r.url(), status: r.status() })
  })
  await page.goto(otherUrl)
  await expect(page).toHaveTitle('done')
  expect(seen[0]).toBe('GET /')
  // Beacons go out after the page asked; give them the time a backup would need to show.
  await page.waitForTimeout(2_000)
  expect(backups()).toEqual(before)
  // Every request that reached CertDesk was refused (a CORS preflight or an opaque answer too).
  expect(responses.length).toBeGreaterThan(0)
  for (const r of responses) expect(r.status, r.url).toBeGreaterThanOrEqual(400)

  // The user is still signed in, and the UI's own backup works.
  await openApp(page)
  await nav(page, 'Settings')
  await page.getByLabel(/^Backup folder/).fill('')
  await page.getByRole('button', { name: 'Back up now' }).click()
  const status = page.getByRole('status').filter({ has: page.getByLabel('backup progress') })
  await expect(status.getByLabel('backup progress')).toHaveAttribute('value', '100')
  await expect
    .poll(() => backups().filter((f) => !before.includes(f)))
    .toEqual([expect.stringMatching(/^certdesk-backup-\d{8}-\d{6}\.backup$/)])
})
