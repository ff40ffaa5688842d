/**
 * The keychain going away while CertDesk runs: this file's own gnome-keyring daemon (in a private
 * D-Bus session) is killed mid-test; the next call has D-Bus start it again locked, as on a
 * desktop; then it is started again unlocked on the same bus. Calls that need a secret
 * answer 503 naming the OS keychain and what to do; everything else keeps working; when the
 * daemon is back the same server stores secrets again, without a restart.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startKeyringSession, type KeyringSession } from '../../scripts/keyring-session.mjs'
import { secretServiceOn } from '../support/bare-keyring'
import { admin, audit, call, isRetryLater, makeReseller, report, sleep, startServe, type Served } from './support'

const base = mkdtempSync(join(tmpdir(), 'certdesk-keychain-'))
const password = randomBytes(18).toString('base64url')
let session: KeyringSession
let env: NodeJS.ProcessEnv
let server: Served | undefined
let restarted: ChildProcess | undefined

beforeAll(async () => {
  session = await startKeyringSession({ home: join(base, 'keyring'), password })
  env = { ...process.env, ...session.env }
})
afterAll(async () => {
  await server?.kill9()
  restarted?.kill('SIGTERM')
  session?.stop()
  rmSync(base, { recursive: true, force: true })
})

const bus = (): string => env.DBUS_SESSION_BUS_ADDRESS as string

/** The gnome-keyring-daemon serving this file's private bus (and no other one). */
function keyringDaemonPid(): number | null {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'gnome-keyring-d') continue
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0')
      if (environ.includes(`DBUS_SESSION_BUS_ADDRESS=${bus()}`)) return Number(entry)
    } catch {
      // gone, or not ours to read
    }
  }
  return null
}

const secretServiceUp = (): boolean => secretServiceOn(env)

async function killKeyring(): Promise<void> {
  const pid = keyringDaemonPid()
  if (!pid) throw new Error('could not find the test keyring daemon')
  process.kill(pid, 'SIGKILL')
  for (let i = 0; i < 50 && secretServiceUp(); i++) await sleep(100)
  expect(secretServiceUp()).toBe(false)
}

async function restartKeyring(): Promise<void> {
  // A call made while the daemon was gone had D-Bus start it again, locked (no password given):
  // that one goes, and the daemon comes back unlocked with the same files and password on the
  // same bus, as a user's session does on login.
  const locked = keyringDaemonPid()
  if (locked) await killKeyring()
  restarted = spawn(
    'timeout',
    ['--signal=KILL', '120', 'gnome-keyring-daemon', '--foreground', '--unlock', '--components=secrets'],
    { env, stdio: ['pipe', 'ignore', 'ignore'] }
  )
  restarted.stdin?.end(password)
  for (let i = 0; i < 100 && !secretServiceUp(); i++) await sleep(100)
  expect(secretServiceUp()).toBe(true)
}

describe('the keychain going away and coming back', () => {
  it('refuses only what needs a secret, with a 503 naming the keychain, and recovers without a restart', async () => {
    const dataDir = join(base, 'data')
    const r = makeReseller(dataDir, 'Keychain Hosting', 1_000, env)
    server = await startServe(dataDir, { env })
    let tried = 0
    let errors = 0
    const acmeOrder = async (i: number) => {
      tried++
      return call(server!.url, 'POST', '/orders', {
        key: r.key,
        headers: { 'idempotency-key': `acme-${i}` },
        body: { product_id: 12, domain: `acme-${i}.example.com` }
      })
    }
    expect((await acmeOrder(0)).status).toBe(200)

    await killKeyring()
    // An ACME subscription stores its EAB HMAC key in the keychain: refused, and refunded.
    const refused = await acmeOrder(1)
    errors++
    expect(isRetryLater(refused)).toBe(true)
    expect(refused.body?.error).toMatch(/OS keychain/)
    expect(refused.body?.error).toMatch(/start or unlock the OS keychain/)
    // Everything that needs no secret goes on: an order, the balance, the order list.
    for (let i = 0; i < 5; i++) {
      tried++
      const plain = await call(server.url, 'POST', '/orders', {
        key: r.key,
        body: { product_id: 1, domain: `plain-${i}.example.com` }
      })
      expect(plain.status).toBe(200)
    }
    tried += 2
    expect((await call(server.url, 'GET', '/balance', { key: r.key })).status).toBe(200)
    expect((await call(server.url, 'GET', '/orders', { key: r.key })).status).toBe(200)
    // An admin command needing a secret says what to do, with no stack trace.
    const keyCmd = admin(dataDir, ['apikey', 'create', '--reseller', String(r.id)], env)
    tried++
    errors++
    expect(keyCmd.code).toBe(1)
    expect(keyCmd.json.error).toMatch(/^could not store secret in the OS keychain: .*start or unlock the OS keychain/)
    expect(server.alive()).toBe(true)

    await restartKeyring()
    // The same server, no restart: the refused order goes through with its own key now.
    const again = await acmeOrder(1)
    expect(again.status).toBe(200)
    expect(admin(dataDir, ['apikey', 'create', '--reseller', String(r.id)], env).code).toBe(0)
    tried++
    const lost = audit(dataDir)
    expect(lost).toEqual([])
    report({ fault: 'keychain daemon killed and restarted', tried, errors, lost: lost.length })
  }, 120_000)

  it('starts with no keychain at all and says what to do when a secret is needed', async () => {
    await killKeyring()
    const dataDir = join(base, 'fresh')
    const r = admin(dataDir, ['reseller', 'add', '--name', 'Fresh', '--email', 'fresh@example.test'], env)
    expect(r.code).toBe(0)
    const key = admin(dataDir, ['apikey', 'create', '--reseller', '1'], env)
    expect(key.code).toBe(1)
    expect(key.json.error).toMatch(/OS keychain.*start or unlock the OS keychain \(on Linux: a Secret Service/)
    await restartKeyring()
    expect(admin(dataDir, ['apikey', 'create', '--reseller', '1'], env).code).toBe(0)
  }, 120_000)
})
