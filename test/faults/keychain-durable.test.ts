/**
 * Secrets go to a durable keychain or nowhere. On a session bus without service activation a
 * killed gnome-keyring leaves no Secret Service at all, and a keyring library that falls back to
 * the kernel's keyring would keep a new secret only in kernel memory (`/proc/keys`), gone at the
 * next reboot. Here the real daemon is killed under a running `certdesk serve`: an ACME
 * subscription sold meanwhile is refused with 503 and refunded, no secret of the data dir reaches
 * the kernel keyring, and once the daemon is back the same server sells one whose EAB key is
 * there to read. A data dir first started with no keychain says so in one line at start, creates
 * no local CA (no wrapping key that only kernel memory would hold), keeps answering reads, and
 * creates its CA once the keychain is there, the same one after a restart.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { kernelKeysNaming, startBareKeyring, type BareKeyring } from '../support/bare-keyring'
import {
  admin,
  audit,
  call,
  Database,
  DB_FILE,
  isRetryLater,
  makeReseller,
  report,
  startServe,
  type Served
} from './support'

// A short base: the bus socket lives under it (a Unix socket path has at most 108 bytes).
const base = mkdtempSync(join(tmpdir(), 'cd-kd-'))
let keyring: BareKeyring
const servers: Served[] = []

beforeAll(async () => {
  keyring = await startBareKeyring(join(base, 'k'), randomBytes(18).toString('base64url'))
})
afterAll(async () => {
  for (const s of servers) await s.kill9()
  keyring?.stop()
  rmSync(base, { recursive: true, force: true })
})

const installIdOf = (dataDir: string): string => {
  const db = new Database(join(dataDir, DB_FILE), { readonly: true })
  try {
    return (db.prepare(`SELECT value FROM settings WHERE key = 'install_id'`).get() as { value: string }).value
  } finally {
    db.close()
  }
}

const count = (dataDir: string, sql: string): number => {
  const db = new Database(join(dataDir, DB_FILE), { readonly: true })
  try {
    return (db.prepare(sql).get() as { n: number }).n
  } finally {
    db.close()
  }
}

const rootCa = async (url: string): Promise<{ status: number; text: string }> => {
  const res = await fetch(`${url}/acme/root-ca.pem`)
  return { status: res.status, text: await res.text() }
}

const balance = async (url: string, key: string): Promise<number> =>
  (await call(url, 'GET', '/balance', { key })).body?.balance as number

describe('a keychain that goes away never sends secrets to kernel memory', () => {
  it('refuses and refunds an ACME subscription while the Secret Service is gone, and sells it once it is back', async () => {
    await keyring.startDaemon()
    const dataDir = join(base, 'sale')
    const r = makeReseller(dataDir, 'Durable Hosting', 1_000, keyring.env)
    const s = await startServe(dataDir, { env: keyring.env })
    servers.push(s)
    const service = `CertDesk/${installIdOf(dataDir)}`
    const buy = (i: number) =>
      call(s.url, 'POST', '/orders', {
        key: r.key,
        headers: { 'idempotency-key': `sub-${i}` },
        body: { product_id: 12, domain: `sub-${i}.example.com` }
      })
    expect((await buy(0)).status).toBe(200)

    await keyring.killDaemon()
    const before = await balance(s.url, r.key)
    const refused = await buy(1)
    expect(isRetryLater(refused), JSON.stringify(refused)).toBe(true)
    expect(refused.body?.error).toMatch(/OS keychain/)
    // Refunded: the balance is as before, and the books balance.
    expect(await balance(s.url, r.key)).toBe(before)
    expect(audit(dataDir)).toEqual([])
    // Nothing of this data dir's keychain service went to the kernel's keyrings.
    expect(kernelKeysNaming(service)).toEqual([])
    // Reads go on.
    expect((await call(s.url, 'GET', '/orders', { key: r.key })).status).toBe(200)

    await keyring.startDaemon()
    const sold = await buy(2)
    expect(sold.status, JSON.stringify(sold.body)).toBe(200)
    for (const id of [sold.body?.order_id]) {
      const details = await call(s.url, 'GET', `/orders/${String(id)}/acme`, { key: r.key })
      expect(details.status).toBe(200)
      const eab = (details.body?.acme as { account: { eab_hmac_key: string } }).account.eab_hmac_key
      expect(eab.length).toBeGreaterThanOrEqual(43)
    }
    expect(kernelKeysNaming(service)).toEqual([])
    report({ fault: 'keychain daemon killed on a bus without activation', tried: 3, errors: 1, lost: 0 })
  }, 180_000)

  it('starts a new data dir without a keychain with one line saying so, creates no CA keys, and creates them once the keychain is back', async () => {
    if (keyring.secretServiceUp()) await keyring.killDaemon()
    const dataDir = join(base, 'fresh')
    // An admin that needs no secret works without the keychain; a reseller to sign in with later.
    expect(
      admin(dataDir, ['reseller', 'add', '--name', 'Fresh', '--email', 'fresh@example.test'], keyring.env).code
    ).toBe(0)
    const service = `CertDesk/${installIdOf(dataDir)}`

    const first = await startServe(dataDir, { env: keyring.env })
    servers.push(first)
    const said = first
      .log()
      .split('\n')
      .filter((l) => /keychain/i.test(l))
    expect(said.filter((l) => /^certdesk: no durable OS keychain/.test(l))).toHaveLength(1)
    expect(said.join('\n')).toMatch(/refuses to create keys/)
    // The root certificate needs the local CA: refused with what to do, and no CA was made.
    const root = await rootCa(first.url)
    expect(root.status).toBe(503)
    expect(root.text).toMatch(/OS keychain/)
    expect(count(dataDir, 'SELECT COUNT(*) AS n FROM ca_keys')).toBe(0)
    expect(kernelKeysNaming(service)).toEqual([])
    // Reads answer: the listener is up and the store is there.
    expect(first.alive()).toBe(true)

    await keyring.startDaemon()
    const key = admin(dataDir, ['apikey', 'create', '--reseller', '1'], keyring.env)
    expect(key.code, key.stderr).toBe(0)
    const made = await rootCa(first.url)
    expect(made.status).toBe(200)
    expect(made.text).toMatch(/^-----BEGIN CERTIFICATE-----/)
    expect(count(dataDir, 'SELECT COUNT(*) AS n FROM ca_keys')).toBe(2)
    await first.stop()
    servers.splice(servers.indexOf(first), 1)

    // A restart (the keychain kept its files): the same CA, and no start-up warning.
    const again = await startServe(dataDir, { env: keyring.env })
    servers.push(again)
    expect(again.log()).not.toMatch(/no durable OS keychain/)
    const same = await rootCa(again.url)
    expect(same.status).toBe(200)
    expect(same.text).toBe(made.text)
    expect(kernelKeysNaming(service)).toEqual([])
  }, 180_000)
})
