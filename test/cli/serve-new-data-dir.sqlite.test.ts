/**
 * What the README says about a new data dir, as a user meets it: `npm start` (the window, or
 * browser mode through `serve --demo --ui`) starts with the demo reseller and its 1000.00 USD;
 * `certdesk serve`, for scripts, starts with no reseller and says so on start, with the command
 * that adds one and the `--demo` switch; `serve --demo` creates the demo reseller; a data dir
 * that has a reseller gets neither the hint nor a demo reseller.
 * The hints name the data dir, SQLite's book (a PostgreSQL book's name `--database`: database.test.ts).
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { browserModeArgs } from '../../scripts/start.mjs'
import { certdesk, CLI } from '../support/cli'
import { runThroughShell, SHELLS } from '../support/shell-argv'

const parent = mkdtempSync(join(tmpdir(), 'certdesk-new-data-dir-'))
afterAll(() => rmSync(parent, { recursive: true, force: true }))

/** Starts `certdesk <args>` and waits for its API URL; `stop()` ends it with SIGTERM (exit 0). */
async function start(args: string[]): Promise<{ url: string; stderr: () => string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [CLI, ...args, '--port', '0', '--acme-port', '0'], {
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const exited = new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? -1)))
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  const stop = async (): Promise<void> => {
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
  }
  for (let i = 0; i < 600 && !/listening on http:\/\/\S+\n/.test(out); i++) await new Promise((r) => setTimeout(r, 100))
  const url = /listening on (http:\/\/\S+)\n/.exec(out)?.[1]
  if (!url) {
    await stop()
    throw new Error(`no URL printed: ${err}`)
  }
  return { url, stderr: () => err, stop }
}

/** Starts, reads what was printed on the way up, stops. */
async function startOnce(args: string[]): Promise<string> {
  const s = await start(args)
  await s.stop()
  return s.stderr()
}

const resellers = (dataDir: string) =>
  certdesk(['admin', '--data-dir', dataDir, 'reseller', 'list']).json.resellers as { name: string }[]

describe('a new data dir', () => {
  it('npm start in browser mode starts with the demo reseller and its credit, as the README says', async () => {
    const dataDir = join(parent, 'npm-start')
    const args = browserModeArgs(['--data-dir', dataDir])
    expect(args.slice(0, 3)).toEqual(['serve', '--demo', '--ui'])
    const stderr = await startOnce(args)
    expect(stderr).toContain('created demo reseller 1 (Demo Reseller) with 1000.00 USD credit.')
    expect(resellers(dataDir)).toEqual([
      expect.objectContaining({ id: 1, name: 'Demo Reseller', credit_balance: 1000 })
    ])
  })

  it('certdesk serve starts with no reseller and says how to add one, in a command that pastes as it reads', async () => {
    const dataDir = join(parent, `serve it's "new" $(touch pwned)`)
    const stderr = await startOnce(['serve', '--data-dir', dataDir])
    expect(resellers(dataDir)).toEqual([])
    expect(stderr).toContain('this data dir has no reseller yet')
    expect(stderr).toContain('or start serve with --demo once for a demo reseller with 1000.00 USD of credit')
    const line = /add one with: (npx certdesk .*?reseller add --name 'My Hosting' --email ops@example\.com)/.exec(
      stderr
    )
    expect(line, stderr).not.toBeNull()
    for (const shell of SHELLS) {
      const ran = runThroughShell(shell, line![1])
      expect(ran.stderr, shell).toBe('')
      expect(
        ran.invocations.map((x) => [x.program, ...x.args]),
        shell
      ).toEqual([
        [
          'npx',
          'certdesk',
          'admin',
          '--data-dir',
          dataDir,
          'reseller',
          'add',
          '--name',
          'My Hosting',
          '--email',
          'ops@example.com'
        ]
      ])
    }

    // Once it has a reseller, serve says nothing of the kind, and --demo adds no demo reseller.
    expect(
      certdesk(['admin', '--data-dir', dataDir, 'reseller', 'add', '--name', 'Northwind', '--email', 'ops@nw.test'])
        .code
    ).toBe(0)
    const again = await startOnce(['serve', '--demo', '--data-dir', dataDir])
    expect(again).not.toContain('no reseller yet')
    expect(again).not.toContain('demo reseller')
    expect(resellers(dataDir).map((r) => r.name)).toEqual(['Northwind'])
  })

  it('serve --demo creates the demo reseller, and the README quick start works against it', async () => {
    const dataDir = join(parent, 'serve-demo')
    const running = await start(['serve', '--demo', '--data-dir', dataDir])
    try {
      expect(running.stderr()).not.toContain('no reseller yet')
      // README, "The reseller API with curl": a key for reseller 1, then its balance.
      const key = certdesk(['admin', '--data-dir', dataDir, 'apikey', 'create', '--reseller', '1'])
      expect(key.code, key.stderr).toBe(0)
      const balance = await fetch(`${running.url}/balance`, { headers: { 'x-api-key': key.json.api_key as string } })
      expect(balance.status).toBe(200)
      expect(((await balance.json()) as { balance: number }).balance).toBe(1000)
    } finally {
      await running.stop()
    }
  })
})
