/**
 * On a headless Linux machine there is no session keyring: the certdesk command keeps secrets in
 * a private gnome-keyring in the data dir, and a second command joins the one `serve` runs, so the
 * README's "npm start, then npx certdesk admin apikey create" works there.
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { CLI } from '../support/cli'

const base = mkdtempSync(join(tmpdir(), 'certdesk-headless-'))
const dataDir = join(base, 'data')
afterAll(() => rmSync(base, { recursive: true, force: true }))

const headlessEnv = (): NodeJS.ProcessEnv => {
  const env = { ...process.env }
  delete env.DBUS_SESSION_BUS_ADDRESS
  return env
}
const certdesk = (...args: string[]) =>
  spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: headlessEnv(), timeout: 60_000 })

describe('the OS keychain without a desktop session', () => {
  it('keeps secrets across commands, and a command next to serve joins its keyring', async () => {
    const first = certdesk('admin', '--data-dir', dataDir, 'ca', 'root')
    expect(first.status, first.stderr).toBe(0)
    expect(first.stderr).toMatch(/private gnome-keyring in .*keyring/)
    expect(first.stdout).toMatch(/BEGIN CERTIFICATE/)
    // The CA's wrapping key came back from the same keyring files in a new process.
    expect(certdesk('admin', '--data-dir', dataDir, 'ca', 'root').stdout).toBe(first.stdout)

    const serve = spawn(process.execPath, [CLI, 'serve', '--data-dir', dataDir, '--port', '0', '--acme-port', '0'], {
      env: headlessEnv(),
      stdio: ['ignore', 'pipe', 'pipe']
    })
    const guard = setTimeout(() => serve.kill('SIGKILL'), 60_000)
    const exited = new Promise<number | null>((resolve) => serve.on('exit', (code) => resolve(code)))
    await new Promise<void>((resolve, reject) => {
      let out = ''
      serve.stdout.on('data', (d) => {
        out += d
        if (out.includes('listening on')) resolve()
      })
      void exited.then((code) => reject(new Error(`serve exited with ${code}`)))
    })
    expect(existsSync(join(dataDir, 'keyring', 'session.json'))).toBe(true)
    expect(certdesk('admin', '--data-dir', dataDir, 'reseller', 'add', '--name', 'Headless', '--email', 'h@example.test').status).toBe(0)
    const key = certdesk('admin', '--data-dir', dataDir, 'apikey', 'create', '--reseller', '1')
    expect(key.status, key.stderr).toBe(0)
    expect(JSON.parse(key.stdout).api_key).toMatch(/^cdk_/)
    expect(certdesk('admin', '--data-dir', dataDir, 'ca', 'root').stdout).toBe(first.stdout)
    serve.kill('SIGTERM')
    expect(await exited).toBe(0)
    clearTimeout(guard)
    expect(existsSync(join(dataDir, 'keyring', 'session.json'))).toBe(false)
  })
})
