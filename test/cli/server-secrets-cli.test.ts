/**
 * A server on a key source instead of a keychain, as an operator runs it: `certdesk admin secrets
 * init --out FILE` makes every key once; `serve --secrets file:FILE` and the admin commands beside
 * it run with no D-Bus session at all, never start or join a keyring, and still create the CA,
 * API keys and ACME subscriptions; a file others may read stops `serve` before anything listens.
 */
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { certdeskIn, serverEnv, startServeNode } from '../support/serve-node'

const dirs: string[] = []
const tempDir = (what: string): string => {
  const d = mkdtempSync(join(tmpdir(), `certdesk-${what}-`))
  dirs.push(d)
  return d
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

/** Everything under `dir`, recursively, as relative paths. */
const tree = (dir: string): string[] =>
  existsSync(dir) ? (readdirSync(dir, { recursive: true }) as string[]).map(String).sort() : []

describe('certdesk admin secrets init', () => {
  it('writes every server key into a new 0600 file once, and never over an existing one', () => {
    const home = tempDir('home')
    const env = serverEnv(home)
    const file = join(tempDir('etc'), 'secrets')
    const made = certdeskIn(env, ['admin', 'secrets', 'init', '--out', file])
    expect(made.code, made.stderr).toBe(0)
    expect(made.json).toMatchObject({
      success: true,
      file,
      keys: [
        'local-ca-wrapping-key',
        'key-vault:wrapping-key',
        'backup:hmac-key',
        'server:sealing-key',
        'server:eab-key'
      ]
    })
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const text = readFileSync(file, 'utf8')
    expect(text.match(/^[a-z:.-]+=[A-Za-z0-9+/]{43}=$/gm)).toHaveLength(5)
    // The keys are printed nowhere.
    for (const line of text.split('\n').filter((l) => /^[a-z]/.test(l))) {
      expect(made.stdout + made.stderr).not.toContain(line.split('=')[1])
    }

    const again = certdeskIn(env, ['admin', 'secrets', 'init', '--out', file])
    expect(again.code).toBe(1)
    expect(again.json.error).toMatch(/the file exists; choose a new name/)
    expect(readFileSync(file, 'utf8')).toBe(text)
    // No keyring was started or made for it.
    expect(tree(home)).toEqual([])
  })
})

describe('serve --secrets file: without any D-Bus session', () => {
  it('runs the whole book and never touches a keyring', async () => {
    const home = tempDir('home')
    const dataDir = tempDir('data')
    const file = join(tempDir('etc'), 'secrets')
    const env = serverEnv(home)
    expect(env.DBUS_SESSION_BUS_ADDRESS).toBeUndefined()
    expect(certdeskIn(env, ['admin', 'secrets', 'init', '--out', file]).code).toBe(0)
    const admin = (...args: string[]) =>
      certdeskIn(env, ['admin', '--data-dir', dataDir, '--secrets', `file:${file}`, ...args])

    const reseller = admin('reseller', 'add', '--name', 'Node Reseller', '--email', 'ops@example.com', '--group', '1')
    expect(reseller.code, reseller.stderr).toBe(0)
    const id = String((reseller.json.reseller as { id: number }).id)
    expect(admin('credit', 'add', '--reseller', id, '--amount', '100').code).toBe(0)
    const key = admin('apikey', 'create', '--reseller', id)
    expect(key.code, key.stderr).toBe(0)
    const apiKey = key.json.api_key as string
    expect(apiKey).toMatch(/^cdk_/)

    const node = await startServeNode(env, ['--data-dir', dataDir, '--secrets', `file:${file}`])
    try {
      const order = await fetch(`${node.api}/orders`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ product_id: 12, domain: 'node.example.com' })
      })
      expect(order.status).toBe(200)
      const orderId = ((await order.json()) as { order_id: number }).order_id
      const acme = (await (
        await fetch(`${node.api}/orders/${orderId}/acme`, { headers: { 'x-api-key': apiKey } })
      ).json()) as {
        acme: { account: { eab_hmac_key: string } }
      }
      expect(acme.acme.account.eab_hmac_key).toMatch(/^[A-Za-z0-9_-]{43}$/)
      // The local CA is made with the file's wrapping key, and its root served.
      const root = await fetch(`${node.api}/acme/root-ca.pem`)
      expect(await root.text()).toContain('BEGIN CERTIFICATE')
      expect(node.stderr()).not.toMatch(/keyring|keychain/i)
    } finally {
      expect(await node.stop()).toBe(0)
    }
    // Nothing of a keyring anywhere: not in HOME, not in XDG_DATA_HOME, not beside the data dir.
    expect(tree(home)).toEqual([])
    expect(tree(dataDir).filter((p) => /keyring/.test(p))).toEqual([])
  })

  it('runs on systemd credentials the same way, and without them says how to provide them', async () => {
    const home = tempDir('home')
    const credentials = tempDir('credentials')
    const plain = join(tempDir('etc'), 'secrets')
    expect(certdeskIn(serverEnv(home), ['admin', 'secrets', 'init', '--out', plain]).code).toBe(0)
    // What LoadCredentialEncrypted= leaves for the service: the plain file under the credential's name.
    writeFileSync(join(credentials, 'certdesk-secrets'), readFileSync(plain), { mode: 0o400 })
    const env = serverEnv(home, { CREDENTIALS_DIRECTORY: credentials })
    const dataDir = tempDir('data')
    const reseller = certdeskIn(env, [
      'admin',
      '--data-dir',
      dataDir,
      '--secrets',
      'systemd',
      'reseller',
      'add',
      '--name',
      'Unit',
      '--email',
      'ops@example.com',
      '--group',
      '1'
    ])
    expect(reseller.code, reseller.stderr).toBe(0)
    const key = certdeskIn(env, [
      'admin',
      '--data-dir',
      dataDir,
      '--secrets',
      'systemd',
      'apikey',
      'create',
      '--reseller',
      '1'
    ])
    expect(key.code, key.stderr).toBe(0)
    const node = await startServeNode(env, ['--data-dir', dataDir, '--secrets', 'systemd'])
    try {
      const orders = await fetch(`${node.api}/orders`, { headers: { 'x-api-key': key.json.api_key as string } })
      expect(orders.status).toBe(200)
    } finally {
      expect(await node.stop()).toBe(0)
    }
    expect(tree(home)).toEqual([])

    const outside = certdeskIn(serverEnv(tempDir('home')), [
      'serve',
      '--data-dir',
      tempDir('data'),
      '--port',
      '0',
      '--secrets',
      'systemd'
    ])
    expect(outside.code).toBe(1)
    expect(outside.stderr).toContain(
      '$CREDENTIALS_DIRECTORY is not set: run CertDesk from its systemd unit with LoadCredentialEncrypted=certdesk-secrets'
    )
  })

  it('refuses to start on a secrets file others may read, saying why, before anything listens', async () => {
    const home = tempDir('home')
    const file = join(tempDir('etc'), 'secrets')
    const env = serverEnv(home)
    expect(certdeskIn(env, ['admin', 'secrets', 'init', '--out', file]).code).toBe(0)
    chmodSync(file, 0o644)
    const r = certdeskIn(env, ['serve', '--data-dir', tempDir('data'), '--port', '0', '--secrets', `file:${file}`])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`group or others may read or change the secrets file ${file} (mode 644); chmod 600 it`)
    expect(r.stdout).not.toContain('listening')
  })

  it('refuses a --secrets that is not a key source as a usage error', () => {
    const r = certdeskIn(serverEnv(tempDir('home')), [
      'admin',
      '--data-dir',
      tempDir('data'),
      '--secrets',
      'etc/secrets',
      'group',
      'list'
    ])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--secrets must be keychain, file:/absolute/path or systemd')
  })
})
