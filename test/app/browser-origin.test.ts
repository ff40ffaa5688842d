/**
 * Browser mode refuses requests from other origins. The session cookie is SameSite=Strict, but
 * a page on another port of 127.0.0.1 is the same *site* (RFC 6265bis §5.2: ports do not count),
 * so its requests carry the cookie. Every state-changing request must come from the UI's own
 * origin (Origin and Sec-Fetch-Site, the Fetch Metadata headers), and every RPC call must be a
 * JSON body `{ "args": [...] }`, which no form and no no-cors request can send. Raw HTTP on a
 * real listener built as `serve --ui` builds it, real SQLite, real keychain; the effect is
 * checked where a user would see it: the backups folder and the session.
 */
import { existsSync, readdirSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Listening } from '../../src-main/http/server'
import { startBrowserMode, type BrowserMode } from '../support/browser-mode'

let browserMode: BrowserMode
let dataDir: string
let listening: Listening
let cookie: string
let origin: string

interface Answer {
  status: number
  body: { success?: boolean; error?: string; result?: unknown }
}

/** One request with exactly the headers given (a browser's, a forger's), over node:http. */
function raw(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const u = new URL(listening.url)
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let parsed: Answer['body']
        try {
          parsed = JSON.parse(text) as Answer['body']
        } catch {
          parsed = { error: text.slice(0, 200) }
        }
        resolve({ status: res.statusCode ?? 0, body: parsed })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

/** Everything in the backups folder: a backup that started leaves its file or its temporary one. */
const backups = (): string[] => {
  const dir = join(dataDir, 'backups')
  return existsSync(dir) ? readdirSync(dir) : []
}

/** What Chromium sends with the UI's own fetch of an RPC method. */
const fromTheUi = (): Record<string, string> => ({
  cookie,
  origin,
  'sec-fetch-site': 'same-origin',
  'sec-fetch-mode': 'cors',
  'sec-fetch-dest': 'empty',
  'content-type': 'application/json'
})

beforeAll(async () => {
  browserMode = await startBrowserMode('certdesk-origin-')
  ;({ dataDir, listening, cookie, url: origin } = browserMode)
  expect(cookie).toMatch(/^certdesk_session=/)
})

afterAll(async () => {
  await browserMode?.close()
})

describe('a state-changing request from another origin', () => {
  const other = (): string => `http://127.0.0.1:${Number(new URL(listening.url).port) + 1}`

  it('is refused with 403 and starts nothing, whatever Origin and Sec-Fetch-Site say', async () => {
    const body = '{"args":[]}'
    const forged: [string, Record<string, string>][] = [
      ['no Origin at all (an old browser, a plain client)', { ...fromTheUi(), origin: '' }],
      ['another port of 127.0.0.1', { ...fromTheUi(), origin: other(), 'sec-fetch-site': 'same-site' }],
      ['another port, Fetch Metadata left out', { ...fromTheUi(), origin: other(), 'sec-fetch-site': '' }],
      ['localhost instead of 127.0.0.1', { ...fromTheUi(), origin: origin.replace('127.0.0.1', 'localhost') }],
      ['the opaque origin of a sandboxed frame or a file', { ...fromTheUi(), origin: 'null' }],
      ['https on the same host and port', { ...fromTheUi(), origin: origin.replace('http:', 'https:') }],
      ['the right Origin but Sec-Fetch-Site cross-site', { ...fromTheUi(), 'sec-fetch-site': 'cross-site' }],
      ['the right Origin but Sec-Fetch-Site same-site', { ...fromTheUi(), 'sec-fetch-site': 'same-site' }],
      ['the right Origin but Sec-Fetch-Site none (typed, bookmarked)', { ...fromTheUi(), 'sec-fetch-site': 'none' }],
      ['a path on top of the origin', { ...fromTheUi(), origin: `${origin}/ui/` }]
    ]
    for (const [why, headers] of forged) {
      const sent = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== ''))
      const res = await raw('POST', '/rpc/startBackup', sent, body)
      expect(res.status, why).toBe(403)
      expect(res.body, why).toEqual({
        success: false,
        error: expect.stringMatching(/^request refused: /)
      })
    }
    expect(backups()).toEqual([])
  })

  it('cannot sign the user out, and a refused request does not count as use of the session', async () => {
    const res = await raw('POST', '/ui/logout', { cookie, origin: other(), 'sec-fetch-site': 'same-site' }, '{}')
    expect(res.status).toBe(403)
    const still = await raw('POST', '/rpc/listResellers', fromTheUi(), '{"args":[]}')
    expect(still.status).toBe(200)
    expect(still.body.success).toBe(true)
  })

  it('cannot load UI files into its own page (frames, scripts, images), while links to the UI still open', async () => {
    const embedded = await raw('GET', '/ui/', {
      cookie,
      'sec-fetch-site': 'same-site',
      'sec-fetch-mode': 'navigate',
      'sec-fetch-dest': 'iframe'
    })
    expect(embedded.status).toBe(403)
    const script = await raw('GET', '/ui/index.html', {
      cookie,
      'sec-fetch-site': 'cross-site',
      'sec-fetch-mode': 'no-cors',
      'sec-fetch-dest': 'script'
    })
    expect(script.status).toBe(403)
    // A link followed from another page (a chat, a mail) opens the UI as a page of its own.
    const followed = await raw('GET', '/ui/', {
      cookie,
      'sec-fetch-site': 'cross-site',
      'sec-fetch-mode': 'navigate',
      'sec-fetch-dest': 'document'
    })
    expect(followed.status).toBe(200)
  })
})

describe('an RPC call that is not a JSON body with args', () => {
  it('is refused: no body, a form, text, JSON without args or with args that are not a list', async () => {
    const cases: [string, Record<string, string>, string | undefined, number][] = [
      ['no body and no Content-Type (a no-cors fetch, a beacon)', { 'content-type': '' }, undefined, 415],
      ['an empty JSON body', {}, '', 400],
      ['text/plain (a form with enctype=text/plain)', { 'content-type': 'text/plain' }, '{"args":[]}', 415],
      ['a urlencoded form', { 'content-type': 'application/x-www-form-urlencoded' }, 'args=', 415],
      ['multipart', { 'content-type': 'multipart/form-data; boundary=x' }, '--x--\r\n', 415],
      ['JSON without args', {}, '{}', 400],
      ['JSON with args that is not a list', {}, '{"args":{}}', 400],
      ['JSON that is not an object', {}, '[]', 400]
    ]
    for (const [why, extra, body, status] of cases) {
      const headers = Object.fromEntries(Object.entries({ ...fromTheUi(), ...extra }).filter(([, v]) => v !== ''))
      const res = await raw('POST', '/rpc/startBackup', headers, body)
      expect(res.status, why).toBe(status)
      expect(res.body.success, why).toBe(false)
    }
    expect(backups()).toEqual([])
  })

  it('from the UI itself (its Origin, same-origin, a JSON body) works', async () => {
    const res = await raw('POST', '/rpc/startBackup', fromTheUi(), '{"args":[]}')
    expect(res.status).toBe(200)
    expect(res.body.success).toBe(true)
    await expect
      .poll(backups, { timeout: 20_000 })
      .toEqual([expect.stringMatching(/^certdesk-backup-\d{8}-\d{6}\.backup$/)])
    // A browser that sends no Fetch Metadata (Sec-Fetch-* came with Chromium 76, Firefox 90,
    // Safari 16.4) is judged by its Origin alone.
    const older = Object.fromEntries(Object.entries(fromTheUi()).filter(([k]) => !k.startsWith('sec-fetch-')))
    const read = await raw('POST', '/rpc/listResellers', older, '{"args":[]}')
    expect(read.status).toBe(200)
  })

  it('signs out only from the UI itself', async () => {
    const res = await raw('POST', '/ui/logout', { ...fromTheUi() }, '{}')
    expect(res.status).toBe(200)
    const after = await raw('POST', '/rpc/listResellers', fromTheUi(), '{"args":[]}')
    expect(after.status).toBe(401)
  })
})
