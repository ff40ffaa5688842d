/**
 * `certdesk serve --ui --log-level info` logs every request, the one-time sign-in link's
 * included. The link itself is printed once on stdout for the desktop user; no log line may
 * carry its token (nor any later one), however the request spells the parameter.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { CLI } from '../support/cli'

const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-ui-log-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe('browser mode at --log-level info', () => {
  it('logs the sign-in requests with every token redacted', async () => {
    const child = spawn(
      process.execPath,
      [CLI, 'serve', '--ui', '--log-level', 'info', '--port', '0', '--data-dir', dataDir],
      {
        env: process.env,
        stdio: ['ignore', 'pipe', 'pipe']
      }
    )
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)))
    const waitFor = async (re: RegExp): Promise<RegExpExecArray> => {
      for (let i = 0; i < 300; i++) {
        const m = re.exec(out)
        if (m) return m
        await new Promise((r) => setTimeout(r, 100))
      }
      throw new Error(`serve printed no ${re} in 30 s: ${err}`)
    }
    try {
      const link = (await waitFor(/open once: (http:\/\/\S+)/))[1]
      const base = new URL(link).origin
      const token = new URL(link).searchParams.get('token')!
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)

      const signedIn = await fetch(link, { redirect: 'manual' })
      expect(signedIn.status).toBe(303)
      const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0]
      // Hostile spellings of the same secret: used again, an encoded name, another case, other keys.
      for (const path of [
        `/ui/login?token=${token}`,
        `/ui/login?x=1&%74oken=${token}`,
        `/ui/login?TOKEN=${token}&token=${token}`,
        `/ui/login?tok%65n=${token}#frag`,
        `/orders?api_key=cdk_${token}`,
        `/acme/setup/${token}`
      ]) {
        const res = await fetch(base + path, { redirect: 'manual' })
        expect(res.status, path).toBeGreaterThanOrEqual(400)
        await res.arrayBuffer()
      }
      // Once the first link is used up, a browser without a session is offered a new one (printed,
      // and logged in use like the first); signing out leaves it the only way in.
      expect(
        (
          await fetch(`${base}/ui/logout`, {
            method: 'POST',
            headers: { cookie, origin: base, 'content-type': 'application/json' },
            body: '{}'
          })
        ).status
      ).toBe(200)
      const second = (await waitFor(/sign in again, open once: (http:\/\/\S+)/))[1]
      const token2 = new URL(second).searchParams.get('token')!
      expect(token2).not.toBe(token)
      expect((await fetch(second, { redirect: 'manual' })).status).toBe(303)
    } finally {
      child.kill('SIGTERM')
      await exited
    }

    const lines = out.split('\n').filter(Boolean)
    const links = lines.filter((l) => l.includes('open once: '))
    expect(links).toHaveLength(2)
    const tokens = links.map((l) => new URL(l.slice(l.indexOf('http'))).searchParams.get('token')!)
    const logLines = lines.filter((l) => l.startsWith('{'))
    const urls = logLines.map((l) => (JSON.parse(l) as { req?: { url?: string } }).req?.url).filter(Boolean)
    // The requests were logged (info), each with its secret replaced.
    expect(urls).toEqual(
      expect.arrayContaining([
        '/ui/login?token=[redacted]',
        '/ui/login?x=1&%74oken=[redacted]',
        '/ui/login?TOKEN=[redacted]&token=[redacted]',
        '/orders?api_key=[redacted]',
        '/acme/setup/[redacted]'
      ])
    )
    for (const t of tokens) {
      for (const line of [...lines.filter((l) => !l.includes('open once: ')), ...err.split('\n')])
        expect(line).not.toContain(t)
    }
  })
})
