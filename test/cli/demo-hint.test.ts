/**
 * `serve --demo` prints the command that makes the demo reseller's API key. The data dir is the
 * user's own text; pasted back into a shell, the command must hand it over as one argument.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { CLI } from '../support/cli'
import { runThroughShell, SHELLS } from '../support/shell-argv'

const parent = mkdtempSync(join(tmpdir(), 'certdesk-demo-hint-'))
afterAll(() => rmSync(parent, { recursive: true, force: true }))

describe('serve --demo', () => {
  it('prints an API key command that passes an odd data dir as exactly one argument', async () => {
    const dataDir = join(parent, `it's "my" $(touch pwned) \`touch pwned2\` dir`)
    mkdirSync(dataDir)
    const child = spawn(
      process.execPath,
      [CLI, 'serve', '--demo', '--port', '0', '--acme-port', '0', '--data-dir', dataDir],
      {
        env: process.env,
        stdio: ['ignore', 'pipe', 'pipe']
      }
    )
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
    let err = ''
    child.stderr.on('data', (d) => (err += d))
    try {
      for (let i = 0; i < 300 && !/get its API key with: .*\n/.test(err); i++)
        await new Promise((r) => setTimeout(r, 100))
    } finally {
      child.kill('SIGTERM')
      await exited
    }
    const line = /get its API key with: (.*)\n/.exec(err)
    expect(line, err).not.toBeNull()
    const id = /--reseller (\d+)$/.exec(line![1])![1]
    for (const shell of SHELLS) {
      const ran = runThroughShell(shell, line![1])
      expect(ran.stderr, shell).toBe('')
      expect(
        ran.invocations.map((x) => [x.program, ...x.args]),
        shell
      ).toEqual([['npx', 'certdesk', 'admin', '--data-dir', dataDir, 'apikey', 'create', '--reseller', id]])
      expect(ran.leftovers, shell).toEqual([])
    }
  })
})
