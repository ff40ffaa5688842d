/**
 * `certdesk admin admins …` and `certdesk admin audit list`, run as the shell runs them: the
 * first owner made from the command line with the password on stdin (never an argument), every
 * admin command kept in the audit log as `cli:<os user>` with the ids it named and its outcome,
 * the log read as a table or JSON and filtered, and `serve --accounts` pointing to the first
 * owner's command while there is none.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { hostname, tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isoDate } from '../../src-main/core/time'
import { CLI } from '../support/cli'
import { bookText, engineEnv } from '../support/engine'

const PASSWORD = 'orchid-lantern-meadow-93'
const ME = `cli:${userInfo().username}`
let dataDir: string

function run(args: string[], input = ''): { code: number; out: string; err: string; json: Record<string, unknown> } {
  const r = spawnSync(process.execPath, [CLI, 'admin', '--data-dir', dataDir, ...args], {
    input,
    encoding: 'utf8',
    env: engineEnv(dataDir),
    timeout: 60_000
  })
  let json: Record<string, unknown> = {}
  try {
    json = JSON.parse(r.stdout || r.stderr)
  } catch {
    // a table, or a usage line
  }
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr, json }
}

const entries = () =>
  run(['audit', 'list', '--json', '--limit', '100']).json.entries as {
    actor: string
    source: string
    action: string
    targets: Record<string, unknown>
    outcome: string | null
    status: number | null
    at: string
  }[]

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'certdesk-admins-cli-'))
})

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true })
})

describe('admins from the command line', () => {
  it('adds the first owner with the password from stdin, and keeps only its hash', () => {
    const r = run(['admins', 'add', '--name', 'Root-Owner', '--role', 'owner'], `${PASSWORD}\n`)
    expect(r.code).toBe(0)
    expect(r.json).toMatchObject({ success: true, admin: { name: 'root-owner', role: 'owner', enabled: true } })
    const store = bookText(dataDir)
    expect(store).not.toContain(PASSWORD)
    expect(store).toContain('$scrypt$ln=17,r=8,p=1$')
  })

  it('never takes a password as an argument, and says what it needs without one', () => {
    const asArg = run(['admins', 'add', '--name', 'eve', '--role', 'viewer', '--password', PASSWORD])
    expect(asArg.code).toBe(2)
    expect(asArg.err).toMatch(/Unknown option '--password'/)
    const none = run(['admins', 'add', '--name', 'eve', '--role', 'viewer'])
    expect(none.code).toBe(2)
    expect(none.err).toMatch(/no password: pipe it on stdin or run in a terminal/)
    const weak = run(['admins', 'add', '--name', 'eve', '--role', 'viewer'], 'short\n')
    expect(weak.code).toBe(1)
    expect(weak.err).toMatch(/at least 15 characters/)
    const badRole = run(['admins', 'add', '--name', 'eve', '--role', 'root'], `${PASSWORD}\n`)
    expect(badRole.code).toBe(2)
    expect(badRole.err).toMatch(/--role must be one of viewer, operator, owner/)
    expect((run(['admins', 'list']).json.admins as unknown[]).length).toBe(1)
  })

  it('changes roles, disables and enables, but keeps an enabled owner', () => {
    expect(run(['admins', 'add', '--name', 'ops', '--role', 'operator'], `${PASSWORD}\n`).code).toBe(0)
    expect(run(['admins', 'set-role', '--name', 'ops', '--role', 'viewer']).json).toMatchObject({
      admin: { name: 'ops', role: 'viewer' }
    })
    expect(run(['admins', 'disable', '--name', 'ops']).json).toMatchObject({ admin: { enabled: false } })
    expect(run(['admins', 'enable', '--name', 'ops']).json).toMatchObject({ admin: { enabled: true } })
    const last = run(['admins', 'disable', '--name', 'root-owner'])
    expect(last.code).toBe(1)
    expect(last.err).toMatch(/root-owner is the last enabled owner/)
  })
})

describe('the audit log of the CLI', () => {
  it('keeps each admin command with who ran it, from where, the ids it named and how it ended', () => {
    run(['reseller', 'add', '--name', 'Audit Co', '--email', 'audit@example.com'])
    expect(run(['credit', 'add', '--reseller', '1', '--amount', '25']).code).toBe(0)
    expect(run(['credit', 'add', '--reseller', '999', '--amount', '25']).code).toBe(1)
    const [listed, missing, added, reseller] = entries()
    expect(listed).toMatchObject({ actor: ME, action: 'cli audit list', outcome: null })
    expect(missing).toMatchObject({
      actor: ME,
      action: 'cli credit add',
      targets: { reseller: 999 },
      outcome: 'refused',
      status: 404
    })
    expect(added).toMatchObject({
      actor: ME,
      source: `cli on ${hostname()}`,
      action: 'cli credit add',
      targets: { reseller: 1 },
      outcome: 'ok',
      status: 200
    })
    expect(reseller).toMatchObject({ action: 'cli reseller add', outcome: 'ok' })
    // The refused attempts above are entries too, without the password; a command line that does
    // not parse (`--password`) is no command, and runs nothing.
    const all = entries()
    expect(all.filter((e) => e.action === 'cli admins add').map((e) => e.outcome)).toEqual([
      'ok',
      'refused',
      'refused',
      'refused',
      'ok'
    ])
    expect(JSON.stringify(all)).not.toContain(PASSWORD)
  })

  it('dates an entry by the real clock, not by --as-of', () => {
    expect(run(['scheduler', 'run', '--as-of', '2031-06-01']).code).toBe(0)
    const e = entries().find((x) => x.action === 'cli scheduler run')!
    expect(e.at.slice(0, 10)).toBe(isoDate(new Date()))
  })

  it('filters by actor, action, outcome and day, and reads as a table in a terminal', () => {
    const mine = run(['audit', 'list', '--json', '--actor', ME, '--action', 'cli credit add', '--outcome', 'ok'])
    expect((mine.json.entries as unknown[]).length).toBe(1)
    expect(run(['audit', 'list', '--json', '--since', '2999-01-01']).json).toMatchObject({ entries: [], total: 0 })
    expect(run(['audit', 'list', '--since', 'last week']).err).toMatch(/since must be a calendar day/)
    expect(run(['audit', 'list', '--outcome', 'maybe']).code).toBe(2)
    const table = run(['audit', 'list', '--action', 'cli credit add'])
    expect(table.code).toBe(0)
    const lines = table.out.trim().split('\n')
    expect(lines[0]).toMatch(/^when \(UTC\)\s+who\s+from\s+action\s+targets\s+outcome$/)
    expect(lines[1]).toMatch(
      new RegExp(`${ME} \\(owner\\)\\s+cli on .+\\s+cli credit add\\s+reseller=999\\s+refused 404$`)
    )
    expect(lines.at(-1)).toBe('2 of 2 entries')
  })
})

describe('serve --accounts', () => {
  it('serves the admin UI without a one-time link, and says how to make the first owner when there is none', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'certdesk-accounts-'))
    const child = spawn(process.execPath, [CLI, 'serve', '--accounts', '--port', '0', '--data-dir', empty], {
      env: engineEnv(empty),
      stdio: ['ignore', 'pipe', 'pipe']
    })
    const exited = new Promise((r) => child.on('exit', r))
    let out = ''
    let err = ''
    child.stderr.on('data', (d) => (err += d))
    const s = {
      url: await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`serve printed no admin UI in 30 s: ${err}`)), 30_000)
        child.stdout.on('data', (d) => {
          out += d
          const m = /admin UI \(sign in with an admin account\) at (http:\/\/\S+)\/ui\//.exec(out)
          if (m) {
            clearTimeout(timer)
            resolve(m[1])
          }
        })
      })
    }
    try {
      expect(out).not.toMatch(/open once/)
      await expect
        .poll(() => err)
        .toMatch(
          /no admin account yet: add the first owner with: certdesk admin (--data-dir .+|--database <the same URL>) admins add --name NAME --role owner/
        )
      const ui = await fetch(`${s.url}/ui/`)
      expect(ui.status).toBe(200)
      const rpc = await fetch(`${s.url}/rpc/listResellers`, {
        method: 'POST',
        headers: { origin: s.url, 'content-type': 'application/json' },
        body: '{"args":[]}'
      })
      expect(rpc.status).toBe(401)
      expect(await rpc.json()).toEqual({ success: false, error: 'sign in with your admin account', signIn: 'password' })
      expect((await fetch(`${s.url}/ui/login?token=x`)).status).toBe(404)
    } finally {
      child.kill('SIGTERM')
      await exited
      rmSync(empty, { recursive: true, force: true })
    }
  })
})
