/**
 * Builds the app, starts a private D-Bus session with gnome-keyring, starts browser mode on a
 * fresh data dir and signs in once through the printed one-time link with Chromium, saving
 * the session cookie for the tests. Returns the teardown that stops everything it started.
 */
import { chromium, type FullConfig } from '@playwright/test'
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CHROMIUM_ARGS } from '../../playwright.config'

const ROOT = join(__dirname, '..', '..')

export default async function globalSetup(_config: FullConfig): Promise<() => Promise<void>> {
  const built = spawnSync(join(ROOT, 'node_modules', '.bin', 'electron-vite'), ['build', '--logLevel', 'error'], {
    cwd: ROOT,
    stdio: 'inherit'
  })
  if (built.status !== 0) throw new Error('could not build CertDesk for the end-to-end tests')
  // Imported as ES module at run time: Playwright compiles this file to CommonJS, and a static
  // import would make its loader compile the .mjs too, which breaks its `import.meta`.
  const { startKeyringSession } = await import('../../scripts/keyring-session.mjs')
  const keyring = await startKeyringSession()
  const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-e2e-'))
  // The test sites run on loopback, which domain validation refuses unless the admin says this
  // is a lab; each spec may then run on its own.
  const lab = spawnSync(
    process.execPath,
    [
      join(ROOT, 'bin', 'certdesk.cjs'),
      'admin',
      '--data-dir',
      dataDir,
      'settings',
      'set',
      'dcv.allow_private_addresses',
      'true'
    ],
    { cwd: ROOT, env: { ...process.env, ...keyring.env }, encoding: 'utf8' }
  )
  if (lab.status !== 0) throw new Error(`could not turn on the lab setting: ${lab.stderr}`)
  // `timeout` stops the server even if this runner is killed before its teardown.
  const server = spawn(
    'timeout',
    [
      '30m',
      process.execPath,
      join(ROOT, 'bin', 'certdesk.cjs'),
      'serve',
      '--ui',
      '--demo',
      '--port',
      '0',
      '--data-dir',
      dataDir
    ],
    {
      cwd: ROOT,
      env: { ...process.env, ...keyring.env },
      stdio: ['ignore', 'pipe', 'pipe']
    }
  )
  let errText = ''
  server.stderr?.on('data', (d) => (errText += d))
  const login = await new Promise<string>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`browser mode printed no link in 30 s: ${errText}`)), 30_000)
    server.stdout?.on('data', (d) => {
      out += d
      const m = /open once: (http:\/\/\S+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve(m[1])
      }
    })
    server.on('exit', (code) => reject(new Error(`browser mode exited with ${code}: ${errText}`)))
  })
  const base = new URL(login).origin
  process.env.CERTDESK_E2E_BASE = base
  process.env.CERTDESK_E2E_DATA_DIR = dataDir
  process.env.CERTDESK_E2E_LOGIN = login
  Object.assign(process.env, keyring.env)

  // Sign in the way a user does: open the printed link in the browser.
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS })
  try {
    const page = await browser.newPage()
    await page.goto(login)
    if (!page.url().endsWith('/ui/')) throw new Error(`the sign-in link led to ${page.url()}`)
    mkdirSync(join(ROOT, 'test-results', '.auth'), { recursive: true })
    await page.context().storageState({ path: join(ROOT, 'test-results', '.auth', 'session.json') })
  } finally {
    await browser.close()
  }
  mkdirSync(join(ROOT, 'test-results', 'screenshots'), { recursive: true })

  return async () => {
    const exited = new Promise((r) => server.once('exit', r))
    server.kill('SIGTERM')
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))])
    keyring.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}
