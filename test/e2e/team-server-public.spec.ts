/**
 * A team server's admins on its public TLS listener, in Chromium: `certdesk serve --accounts
 * --public-ui` by a DNS name (the browser's resolver maps the name to this machine), as a server
 * runs it: no D-Bus session, its keys from a key file. The page is https://NAME, so the browser
 * keeps the session cookie as Secure and sends that origin with every RPC call, which the server
 * takes; the same page reached over plain http does not exist, and a call from an http origin of
 * the same name is refused. An admin's TOTP key set up there is sealed in the store under the key
 * file's sealing key.
 */
import { chromium, expect, test, type Browser, type Page } from '@playwright/test'
import Database from 'better-sqlite3'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { request as httpsRequest } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CHROMIUM_ARGS } from '../../playwright.config'
import { base32Decode, hotp, totpStep } from '../../src-main/core/admins/totp'
import { freePort } from '../support/acme'
import { CLI } from '../support/cli'
import { certdeskIn, serverEnv, startServeNode, type ServeNode } from '../support/serve-node'
import { nav, shot } from './support'

const PASSWORD = 'tangerine-kite-harbour-42'
const NAME = 'team.e2e-public.example'

let work: string
let home: string
let env: NodeJS.ProcessEnv
let dataDir: string
let secrets: string
let team: ServeNode
let port: number
let base: string
let rootPem: string
let browser: Browser

function certdesk(args: string[]): Record<string, unknown> {
  const r = certdeskIn(env, args)
  if (r.code !== 0) throw new Error(`could not run certdesk ${args.join(' ')}: ${r.stderr}`)
  return r.json
}

/**
 * A POST to the public listener from outside a browser (a browser sets Origin itself): to
 * 127.0.0.1 by the public name (SNI and Host), trusting the team's CertDesk root alone.
 */
function postByName(
  path: string,
  headers: Record<string, string>,
  body: unknown
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        servername: NAME,
        method: 'POST',
        path,
        ca: rootPem,
        headers: { host: `${NAME}:${port}`, 'content-type': 'application/json', ...headers }
      },
      (res) => {
        let text = ''
        res.on('data', (d) => (text += d))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }))
      }
    )
    req.on('error', reject)
    req.end(JSON.stringify(body))
  })
}

async function signInOnPage(page: Page, code?: string): Promise<void> {
  await page.getByLabel('Admin name').fill('owen')
  await page.getByLabel('Password').fill(PASSWORD)
  if (code) await page.getByLabel(/Code from the authenticator app/).fill(code)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
}

test.beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'certdesk-e2e-public-'))
  home = mkdtempSync(join(work, 'home-'))
  env = serverEnv(home)
  dataDir = join(work, 'data')
  secrets = join(mkdtempSync(join(work, 'etc-')), 'secrets')
  certdesk(['admin', 'secrets', 'init', '--out', secrets])
  // The first owner, as the set-up does it at the server's shell: the password on stdin.
  const added = spawnSync(
    process.execPath,
    [
      CLI,
      'admin',
      '--data-dir',
      dataDir,
      '--secrets',
      `file:${secrets}`,
      'admins',
      'add',
      '--name',
      'owen',
      '--role',
      'owner'
    ],
    { env, input: `${PASSWORD}\n`, encoding: 'utf8', timeout: 60_000 }
  )
  if (added.status !== 0) throw new Error(`could not add the first owner: ${added.stderr}`)
  port = await freePort()
  base = `https://${NAME}:${port}`
  team = await startServeNode(
    env,
    [
      '--accounts',
      '--public-ui',
      '--demo',
      '--data-dir',
      dataDir,
      '--secrets',
      `file:${secrets}`,
      '--public-url',
      base,
      '--public-listen',
      `127.0.0.1:${port}`
    ],
    /CertDesk root SHA-256 [^\n]*\n/
  )
  rootPem = certdesk(['admin', '--data-dir', dataDir, '--secrets', `file:${secrets}`, 'ca', 'root']).root_pem as string
  // The name resolves to this machine for this browser only. The listener's certificate is the
  // team's own CertDesk CA's, which this browser does not trust (the desktop app pins its root
  // instead); what is tested here is the https page's cookie and origin.
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [...CHROMIUM_ARGS, `--host-resolver-rules=MAP ${NAME} 127.0.0.1`]
  })
})

test.afterAll(async () => {
  await browser?.close()
  await team?.stop()
  if (work) rmSync(work, { recursive: true, force: true })
})

test('an admin signs in on the public https page: a Secure session cookie, and the page’s changes are taken', async () => {
  expect(team.stdout()).toContain(
    `CertDesk admin UI by the public name (sign in with an admin account) at ${base}/ui/\n`
  )
  const context = await browser.newContext({ ignoreHTTPSErrors: true, storageState: { cookies: [], origins: [] } })
  const page = await context.newPage()
  await page.goto(`${base}/ui/`)
  await expect(page.getByTestId('sign-in')).toBeVisible()
  await signInOnPage(page)
  await expect(page.getByTestId('book-label')).toHaveText(`Team: ${new URL(base).host} as owen (owner)`)
  await expect(page.getByTestId('balance')).toBeVisible()
  await shot(page, 'team-public-dashboard')

  const [cookie] = await context.cookies(base)
  expect(cookie).toMatchObject({ name: 'certdesk_session', secure: true, httpOnly: true, sameSite: 'Strict' })

  // A change from the page: its calls carry Origin https://NAME, which the server takes.
  const made = await page.evaluate(async () => {
    const res = await fetch('/rpc/createReseller', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ args: [{ name: 'Public Page Hosting', email: 'ops@public-page.example' }] })
    })
    return { status: res.status, body: (await res.json()) as { success: boolean } }
  })
  expect(made).toMatchObject({ status: 200, body: { success: true } })

  // The same call with the same session from an http page of that name is another origin
  // (RFC 6454 §4), refused; from the https page it is taken.
  const session = { cookie: `certdesk_session=${cookie.value}` }
  const forged = await postByName(
    '/rpc/listResellers',
    { ...session, origin: `http://${new URL(base).host}` },
    { args: [] }
  )
  expect(forged.status).toBe(403)
  expect(forged.body.error).toMatch(/not from the CertDesk page at https:\/\//)
  const taken = await postByName('/rpc/listResellers', { ...session, origin: base }, { args: [] })
  expect(taken.status).toBe(200)
  expect((taken.body.result as { name: string }[]).map((r) => r.name)).toContain('Public Page Hosting')

  // Plain http to the public listener gets no page: it speaks TLS only.
  const plain = await context.newPage()
  await expect(plain.goto(`http://${new URL(base).host}/ui/`)).rejects.toThrow(/net::ERR_/)
  await context.close()

  // Signed in and a reseller made: nothing of a keyring was made for any of it.
  expect(readdirSync(home)).toEqual([])
})

test('an admin sets up TOTP on the public page: the key is sealed in the store, the key file stays as it was', async () => {
  const keyFile = readFileSync(secrets)
  const context = await browser.newContext({ ignoreHTTPSErrors: true, storageState: { cookies: [], origins: [] } })
  const page = await context.newPage()
  await page.goto(`${base}/ui/`)
  await signInOnPage(page)
  await expect(page.getByTestId('book-label')).toHaveText(`Team: ${new URL(base).host} as owen (owner)`)
  await nav(page, 'My account')
  await page.getByRole('button', { name: 'Set up two-step sign-in' }).click()
  const secret = ((await page.getByTestId('totp-secret').textContent()) ?? '').replace(/\s/g, '')
  const key = base32Decode(secret)!
  await page.getByLabel('Code the app shows now').fill(hotp(key, totpStep(new Date())))
  await page.getByRole('button', { name: 'Turn on two-step sign-in' }).click()
  await expect(page.getByTestId('totp-card')).toContainText('On: signing in asks for a code')

  // The key went where every per-record secret of a server goes: sealed in the store under the
  // key file's sealing key, which itself was not written.
  expect(readFileSync(secrets).equals(keyFile)).toBe(true)
  const db = new Database(join(dataDir, 'certdesk.sqlite'), { readonly: true })
  try {
    const id = (db.prepare("SELECT id FROM admins WHERE name = 'owen'").get() as { id: number }).id
    const sealed = db.prepare('SELECT sealed FROM sealed_secrets WHERE name = ?').pluck().get(`admin-totp:${id}`) as
      Buffer | undefined
    expect(sealed).toBeDefined()
    expect(sealed!.includes(Buffer.from(secret))).toBe(false)
    expect(sealed!.includes(key)).toBe(false)
  } finally {
    db.close()
  }

  // Signing in again asks for a code, and takes the next one the authenticator shows.
  await page.locator('.sidebar').getByRole('button', { name: 'Sign out' }).click()
  await expect(page.getByTestId('sign-in')).toBeVisible()
  await signInOnPage(page)
  await expect(page.locator('.error-box')).toHaveText(
    'could not sign in: enter the 6-digit code from your authenticator app'
  )
  await signInOnPage(page, hotp(key, totpStep(new Date()) + 1))
  await expect(page.getByTestId('book-label')).toHaveText(`Team: ${new URL(base).host} as owen (owner)`)
  await context.close()
  expect(readdirSync(home)).toEqual([])
})
