/**
 * `certdesk serve --database postgres://…` and `CERTDESK_DATABASE`: the book in a PostgreSQL
 * database of the real test server. A URL that is not one, a refused password and a server that
 * does not answer each end the command with one line on stderr and a sysexits code (64, 77,
 * 69), never a stack, and never the password; a good URL serves, and the admin CLI writes into
 * the same book.
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI } from '../support/cli'
import { createTestDatabase, type TestDatabase } from '../support/postgres'

const base = mkdtempSync(join(tmpdir(), 'certdesk-database-'))
let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(async () => {
  await db?.drop()
  rmSync(base, { recursive: true, force: true })
})

/** The environment of a shell that has set nothing of CertDesk's store. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env }
  delete env.CERTDESK_DATABASE
  delete env.CERTDESK_DATA_DIR
  return { ...env, ...extra }
}

function run(args: string[], env = cleanEnv()): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env, timeout: 60_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port
      s.close(() => resolve(p))
    })
  })
}

/** One line on stderr that says what is wrong, no stack, no password. */
function expectOneLine(stderr: string, password?: string): string {
  const lines = stderr.trim().split('\n')
  expect(lines, stderr).toHaveLength(1)
  expect(lines[0]).toMatch(/^certdesk: could not open the store at /)
  expect(stderr).not.toMatch(/\n\s+at |Error:/)
  if (password) expect(stderr).not.toContain(password)
  return lines[0]
}

describe('certdesk serve --database', () => {
  it('refuses a URL that is not a PostgreSQL URL, before connecting (exit 64)', () => {
    const dataDir = join(base, 'not-a-url')
    for (const url of ['not a url', 'mysql://root:hunter2@127.0.0.1/certdesk']) {
      const r = run(['serve', '--data-dir', dataDir, '--port', '0', '--database', url])
      expect(r.code, r.stderr).toBe(64)
      expect(expectOneLine(r.stderr, 'hunter2')).toMatch(/write postgres:\/\/user@host:5432\/database/)
    }
    // Nothing was started in the data dir on the way.
    expect(() => readdirSync(dataDir)).toThrow()
  })

  it('says the server refused the password, and never shows it (exit 77)', () => {
    const r = run([
      'serve',
      '--port',
      '0',
      '--data-dir',
      join(base, 'refused'),
      '--database',
      `postgres://certdesk:Wr0ng-secret@127.0.0.1:${db.port}/${db.name}`
    ])
    expect(r.code, r.stderr).toBe(77)
    expect(expectOneLine(r.stderr, 'Wr0ng-secret')).toContain('the server refused the password of user "certdesk"')
  })

  it('says nothing answers on an unreachable server (exit 69)', async () => {
    const port = await closedPort()
    const r = run([
      'serve',
      '--port',
      '0',
      '--data-dir',
      join(base, 'unreachable'),
      '--database',
      `postgres://certdesk@127.0.0.1:${port}/certdesk`
    ])
    expect(r.code, r.stderr).toBe(69)
    expect(expectOneLine(r.stderr)).toContain(`nothing answers on 127.0.0.1:${port}`)
  })

  it('takes the URL from CERTDESK_DATABASE too, for admin commands as for serve', () => {
    const wrong = `postgres://certdesk:Wr0ng-secret@127.0.0.1:${db.port}/${db.name}`
    const dataDir = join(base, 'from-env')
    const admin = run(['admin', '--data-dir', dataDir, 'reseller', 'list'], cleanEnv({ CERTDESK_DATABASE: wrong }))
    expect(admin.code, admin.stderr).toBe(77)
    expectOneLine(admin.stderr, 'Wr0ng-secret')
    const serve = run(
      ['serve', '--port', '0', '--data-dir', dataDir],
      cleanEnv({ CERTDESK_DATABASE: 'redis://127.0.0.1/0' })
    )
    expect(serve.code, serve.stderr).toBe(64)
    expectOneLine(serve.stderr)
  })

  it('serves the book in the database, which the admin CLI writes into too', async () => {
    const dataDir = join(base, 'served')
    const env = cleanEnv()
    const added = run(
      [
        'admin',
        '--data-dir',
        dataDir,
        '--database',
        db.tcpUrl,
        'reseller',
        'add',
        '--name',
        'Team Hosting',
        '--email',
        'team@example.test'
      ],
      env
    )
    expect(added.code, added.stderr).toBe(0)
    const reseller = (JSON.parse(added.stdout) as { reseller: { id: number } }).reseller
    const credit = run(
      ['admin', '--database', db.tcpUrl, 'credit', 'add', '--reseller', String(reseller.id), '--amount', '100'],
      env
    )
    expect(credit.code, credit.stderr).toBe(0)
    const key = (
      JSON.parse(
        run(['admin', '--database', db.tcpUrl, 'apikey', 'create', '--reseller', String(reseller.id)], env).stdout
      ) as { api_key: string }
    ).api_key
    // No SQLite file is made in the data dir: the book is the database's.
    expect(existsSync(join(dataDir, 'certdesk.sqlite'))).toBe(false)

    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--acme-port', '0', '--data-dir', dataDir], {
      env: { ...env, CERTDESK_DATABASE: db.tcpUrl },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = ''
        let err = ''
        child.stderr.on('data', (d) => (err += d))
        child.stdout.on('data', (d) => {
          out += d
          const m = /listening on (http:\/\/\S+)/.exec(out)
          if (m) resolve(m[1])
        })
        child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)))
      })
      const balance = await fetch(`${url}/balance`, { headers: { 'x-api-key': key } })
      expect(await balance.json()).toMatchObject({ success: true, balance: 100 })
      const order = await fetch(`${url}/orders`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ product_id: 2, domain: 'team.example.com' })
      })
      expect(order.status).toBe(200)
      const listed = run(['admin', '--database', db.tcpUrl, 'reseller', 'list'], env)
      expect(
        (JSON.parse(listed.stdout) as { resellers: { credit_balance: number }[] }).resellers[0].credit_balance
      ).toBe(100 - ((await order.json()) as { total: number }).total)
    } finally {
      child.kill('SIGTERM')
      await new Promise((r) => child.once('exit', r))
    }
  })

  it('says how to add the first reseller to the same database, and never prints its URL or password', async () => {
    const fresh = await createTestDatabase()
    const dataDir = join(base, 'hint')
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--acme-port', '0', '--data-dir', dataDir], {
      env: cleanEnv({ CERTDESK_DATABASE: fresh.tcpUrl }),
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let err = ''
    try {
      await new Promise<void>((resolve, reject) => {
        let out = ''
        child.stderr.on('data', (d) => (err += d))
        child.stdout.on('data', (d) => {
          out += d
          if (/listening on http:\/\//.test(out)) resolve()
        })
        child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)))
      })
    } finally {
      child.kill('SIGTERM')
      await new Promise((r) => child.once('exit', r))
      await fresh.drop()
    }
    expect(err).toContain(
      "this book has no reseller yet: add one with: npx certdesk admin --database <the same URL> reseller add --name 'My Hosting'"
    )
    expect(err).not.toContain(fresh.password)
    expect(err).not.toContain(fresh.name)
    expect(err).not.toContain('--data-dir')
  })
})
