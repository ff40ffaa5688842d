/**
 * Browser-mode sessions in the real UI: Debian's Chromium drives the built renderer served by
 * a real listener (browser mode as `serve --ui` builds it) over a real SQLite file, with the
 * sessions' clock moved by hand. A session idle past 30 minutes is refused and the UI says a
 * sign-in is needed; a new link is offered; the sign-out button ends the session on the server.
 */
import { chromium, type Browser, type Page } from '@playwright/test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { browserUiOptions } from '../../src-main/app/browser-mode'
import { SESSION_IDLE_MINUTES, type BrowserSessions } from '../../src-main/app/browser-ui'
import { ensureDemoReseller, openService, type Service } from '../../src-main/core/service'
import { buildServer, listen, type Listening } from '../../src-main/http/server'
import { CHROMIUM_ARGS } from '../../playwright.config'
import { manualClock } from '../support/clock'

const ROOT = join(__dirname, '..', '..')
const clock = manualClock('2026-11-21T10:00:00Z')
let dataDir: string
let service: Service
let listening: Listening
let sessions: BrowserSessions
let firstLink: string
const newLinks: string[] = []
let browser: Browser

const minutes = (m: number): void => clock.set(new Date(clock.now().getTime() + m * 60_000))

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'certdesk-session-'))
  service = openService({ dataDir, clock: clock.clock })
  ensureDemoReseller(service)
  let url = ''
  const ui = browserUiOptions(service, () => url, join(ROOT, 'out', 'renderer'), {
    onNewLink: (link) => newLinks.push(link)
  })
  sessions = ui.sessions
  listening = await listen(await buildServer(service, ui.server))
  url = listening.url
  firstLink = ui.loginUrl(url)
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS })
})

afterAll(async () => {
  await browser?.close()
  await listening?.close()
  service?.close()
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
})

async function signIn(link: string): Promise<{ page: Page; cookie: string }> {
  const context = await browser.newContext()
  const page = await context.newPage()
  await page.goto(link)
  await page.getByTestId('balance').waitFor()
  const c = (await context.cookies()).find((x) => x.name === 'certdesk_session')!
  return { page, cookie: `${c.name}=${c.value}` }
}

const rpcStatus = async (cookie: string): Promise<number> =>
  (
    await fetch(`${listening.url}/rpc/listResellers`, {
      method: 'POST',
      headers: { cookie, origin: listening.url, 'content-type': 'application/json' },
      body: '{"args":[]}'
    })
  ).status

const nav = (page: Page, label: string) => page.locator('.sidebar').getByText(label, { exact: true }).click()

describe('browser sessions', () => {
  it('end after 30 idle minutes: the server refuses the cookie and the UI says a sign-in is needed', async () => {
    expect(SESSION_IDLE_MINUTES).toBe(30)
    const { page, cookie } = await signIn(firstLink)
    // Use keeps a session alive: each request starts the 30 minutes again.
    minutes(29)
    await nav(page, 'Orders')
    await page.getByRole('heading', { name: 'Orders' }).waitFor()
    minutes(29)
    await nav(page, 'Billing')
    await page.getByRole('heading', { name: 'Billing' }).waitFor()
    expect(newLinks).toEqual([])

    minutes(31)
    await nav(page, 'Orders')
    const notice = page.getByTestId('sign-in-needed')
    await notice.waitFor()
    expect(await notice.getByRole('heading').textContent()).toBe('Sign-in needed')
    expect(await notice.textContent()).toContain('this browser session ended after 30 minutes without use')
    expect(await page.locator('.sidebar').getByRole('button', { name: 'Sign out' }).count()).toBe(0)
    expect(await rpcStatus(cookie)).toBe(401)
    const reload = await page.goto(`${listening.url}/ui/`)
    expect(reload?.status()).toBe(401)

    // A new one-time link was offered (serve prints it); it signs in again without a restart.
    expect(newLinks).toHaveLength(1)
    expect(newLinks[0]).toMatch(new RegExp(`^${listening.url}/ui/login\\?token=[A-Za-z0-9_-]{43}$`))
    expect(newLinks[0]).not.toBe(firstLink)
    const again = await signIn(newLinks[0])
    expect(await rpcStatus(again.cookie)).toBe(200)
    await again.page.context().close()
    await page.context().close()
  })

  it('the sign-out button ends the session on the server: the old cookie opens nothing', async () => {
    // The first test used every link so far; a visit without a session offers the next one.
    expect(sessions.token).toBeNull()
    expect(await rpcStatus('certdesk_session=nobody')).toBe(401)
    expect(newLinks).toHaveLength(2)
    const { page, cookie } = await signIn(newLinks[1])
    expect(await rpcStatus(cookie)).toBe(200)

    await page.locator('.sidebar').getByRole('button', { name: 'Sign out' }).click()
    const notice = page.getByTestId('sign-in-needed')
    await notice.waitFor()
    expect(await notice.textContent()).toContain('You signed out')
    // The browser dropped the cookie, and the server forgot it: replaying it opens neither RPC nor UI.
    expect((await page.context().cookies()).find((c) => c.name === 'certdesk_session')).toBeUndefined()
    expect(await rpcStatus(cookie)).toBe(401)
    const ui = await fetch(`${listening.url}/ui/`, { headers: { cookie } })
    expect(ui.status).toBe(401)
    await page.context().close()
  })
})
