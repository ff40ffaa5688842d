/**
 * A server's key sources (core/server-secrets): a file only the server's user may read, and
 * systemd credentials. What is refused (loose modes, another owner, a folder others may change,
 * a place inside the data dir, a FIFO), how a file is written (atomically, 0600 whatever the
 * umask), where each kind of secret ends up (root keys in the source, per-record secrets sealed
 * in the store, EAB keys derived, the same on every node), and how systemd's read-only
 * credentials refuse to make a key, saying how to provision it.
 */
import { execFileSync } from 'node:child_process'
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { eabSecretName } from '../../src-main/core/acme-server/acme-subscriptions'
import { exportSecrets, importSecrets } from '../../src-main/core/backup/secrets-export'
import { formatKeys, newRootKeys, ROOT_KEYS, type SecretSourceSpec } from '../../src-main/core/server-secrets'
import { FileKeySource } from '../../src-main/core/server-secrets/source'
import type { Service } from '../../src-main/core/service'
import { openService, storedBytes } from '../support/engine'

const dirs: string[] = []
const open: Service[] = []
const tempDir = (what: string): string => {
  const d = mkdtempSync(join(tmpdir(), `certdesk-${what}-`))
  dirs.push(d)
  return d
}
afterEach(async () => {
  for (const s of open.splice(0)) await s.close()
})
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

/** A server over a fresh data dir reading its keys from `spec`. */
async function server(spec: SecretSourceSpec, dataDir = tempDir('data')): Promise<Service> {
  const s = await openService({ dataDir, secretSource: spec })
  open.push(s)
  return s
}

/** A folder only this user may write, with a secrets file made as `secrets init` makes it. */
function secretsFile(keys = newRootKeys()): string {
  const folder = tempDir('etc')
  const file = join(folder, 'secrets')
  writeFileSync(file, formatKeys(keys), { mode: 0o600 })
  return file
}

/** Everything the store keeps (the SQLite files, or a dump of the PostgreSQL database), as text. */
const storeBytes = (s: Service): string =>
  storedBytes(s)
    .map((b) => b.bytes.toString('latin1'))
    .join('')

async function reseller(s: Service) {
  const r = await s.resellers.create({ name: 'Node test', email: 'ops@example.com', company: 'X', groupId: 1 })
  await s.ledger.topUp(r.id, 500_00)
  return await s.resellers.get(r.id)
}

describe('a secrets file', () => {
  it('is refused when group or others may read it, and nothing is read from it', async () => {
    for (const mode of [0o640, 0o604, 0o660]) {
      const file = secretsFile()
      chmodSync(file, mode)
      const s = await server({ kind: 'file', path: file })
      expect(s.ctx.secrets.unavailableReason?.()).toBe(
        `could not read the server secrets: group or others may read or change the secrets file ${file} (mode ${mode.toString(8)}); chmod 600 it`
      )
      await expect(s.ctx.secrets.get(ROOT_KEYS.caWrapping)).rejects.toThrow(/chmod 600 it/)
    }
  })

  it("is refused when it belongs to another user than the server's", () => {
    const file = secretsFile()
    const uid = process.geteuid?.() ?? 0
    let source: FileKeySource
    if (uid === 0) {
      // Really another owner: the file as a mistaken `chown` or a copy by another account leaves it.
      chownSync(file, 12345, 12345)
      source = new FileKeySource(file, tempDir('data'))
    } else {
      // Without root the file cannot change hands: the server is said to run as another user instead.
      source = new FileKeySource(file, tempDir('data'), uid + 1)
    }
    expect(() => source.read()).toThrow(/belongs to uid \d+, not to the user CertDesk runs as \(uid \d+\); chown it/)
  })

  it('is refused in a folder others may change, and inside the data dir', async () => {
    const file = secretsFile()
    const folder = join(file, '..')
    chmodSync(folder, 0o770)
    expect((await server({ kind: 'file', path: file })).ctx.secrets.unavailableReason?.()).toMatch(
      /others may change the folder .* \(mode 770, owner uid \d+\)/
    )
    chmodSync(folder, 0o700)

    const dataDir = tempDir('data')
    const inside = join(dataDir, 'secrets')
    writeFileSync(inside, formatKeys(newRootKeys()), { mode: 0o600 })
    expect((await server({ kind: 'file', path: inside }, dataDir)).ctx.secrets.unavailableReason?.()).toMatch(
      /is inside the data dir .*so that a copy of the data dir alone decrypts nothing/
    )
    // Also through a link from outside into the data dir.
    const link = join(tempDir('etc'), 'secrets')
    symlinkSync(inside, link)
    expect((await server({ kind: 'file', path: link }, dataDir)).ctx.secrets.unavailableReason?.()).toMatch(
      /is inside the data dir/
    )
  })

  it('that is a FIFO is refused at once, never waited on', async () => {
    const folder = tempDir('etc')
    const fifo = join(folder, 'secrets')
    execFileSync('mkfifo', ['-m', '600', fifo])
    const s = await server({ kind: 'file', path: fifo })
    expect(s.ctx.secrets.unavailableReason?.()).toMatch(/is not a regular file/)
  })

  it('with a bad line names the line, never its content', async () => {
    const file = secretsFile()
    writeFileSync(file, `${readFileSync(file, 'utf8')}server:eab-key=not base64 SECRETVALUE\n`, { mode: 0o600 })
    const reason = (await server({ kind: 'file', path: file })).ctx.secrets.unavailableReason?.() as string
    expect(reason).toMatch(/line \d+, is not name=value with a base64 value/)
    expect(reason).not.toContain('SECRETVALUE')
  })

  it('is made when CertDesk needs its first key: atomically, 0600 whatever the umask, the other keys kept', async () => {
    const folder = tempDir('etc')
    const file = join(folder, 'secrets')
    const before = process.umask(0)
    try {
      const s = await server({ kind: 'file', path: file })
      expect(existsSync(file)).toBe(false)
      // The local CA's wrapping key is the first key a new server makes.
      await s.localCa.rootPem()
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect(readFileSync(file, 'utf8')).toMatch(/^local-ca-wrapping-key=[A-Za-z0-9+/]{43}=$/m)
      // An API key's copy is sealed under the sealing key, which is made now: the CA's key stays.
      const keyFileBefore = /^local-ca-wrapping-key=.*$/m.exec(readFileSync(file, 'utf8'))?.[0]
      await s.resellers.createApiKey((await reseller(s)).id)
      const text = readFileSync(file, 'utf8')
      expect(text).toContain(keyFileBefore)
      expect(text).toMatch(/^server:sealing-key=/m)
      expect(statSync(file).mode & 0o777).toBe(0o600)
      // No temporary file is left beside it.
      expect(readdirSync(folder)).toEqual(['secrets'])
    } finally {
      process.umask(before)
    }
  })

  it('reached through a link is rewritten at the link’s end, and the link stays', async () => {
    const real = secretsFile(new Map([[ROOT_KEYS.caWrapping, Buffer.alloc(32, 1).toString('base64')]]))
    const link = join(tempDir('etc'), 'secrets')
    symlinkSync(real, link)
    const s = await server({ kind: 'file', path: link })
    await s.resellers.createApiKey((await reseller(s)).id)
    expect(readFileSync(real, 'utf8')).toMatch(/^server:sealing-key=/m)
    expect(readFileSync(real, 'utf8')).toContain(`${ROOT_KEYS.caWrapping}=${Buffer.alloc(32, 1).toString('base64')}`)
    expect(statSync(link).isFile()).toBe(true)
    expect(readFileSync(link, 'utf8')).toBe(readFileSync(real, 'utf8'))
  })
})

describe('what a server keeps where', () => {
  it('seals per-record secrets in the store: unreadable without the file, refused under another server’s file', async () => {
    const file = secretsFile()
    const s = await server({ kind: 'file', path: file })
    const r = await reseller(s)
    const { key, info } = await s.resellers.createApiKey(r.id)
    expect(await s.resellers.revealApiKey(info.id)).toBe(key)
    // Only ciphertext in the store: neither the key nor any root key.
    const bytes = storeBytes(s)
    expect(bytes).not.toContain(key)
    for (const line of readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.includes('=') && !l.startsWith('#')))
      expect(bytes).not.toContain(line.split('=')[1])
    const row = await s.ctx.store.all('SELECT name, length(sealed) AS n FROM sealed_secrets')
    expect(row).toEqual([{ name: `api-key:${info.id}`, n: Buffer.byteLength(key) + 16 }])

    // A row moved under another name does not open.
    await s.ctx.store.run("UPDATE sealed_secrets SET name = 'api-key:999'")
    await expect(s.ctx.secrets.get('api-key:999')).rejects.toThrow(
      /could not open the secret api-key:999: its sealed entry was changed/
    )
    await s.ctx.store.run('UPDATE sealed_secrets SET name = ?', `api-key:${info.id}`)

    // The same store opened with another server's file names both keys and opens nothing.
    await s.close()
    open.splice(open.indexOf(s), 1)
    const other = await server({ kind: 'file', path: secretsFile() }, s.dataDir)
    await expect(other.resellers.revealApiKey(info.id)).rejects.toThrow(
      /could not open the secret api-key:\d+: it was sealed under key [0-9a-f]{16}, and the secrets file .* holds key [0-9a-f]{16}/
    )
  })

  it('derives EAB keys: two nodes with the same file answer the same key, and none is stored', async () => {
    const file = secretsFile()
    const nodeA = await server({ kind: 'file', path: file })
    const nodeB = await server({ kind: 'file', path: file })
    const r = await reseller(nodeA)
    const created = await nodeA.orders.create(r, { productId: 12, domain: 'shop.example.com' })
    const sub = await nodeA.acme.forOrder(r.id, created.order.id)
    const hmac = (await nodeA.acme.details(sub)).eabHmacKey
    expect(hmac).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{42}$/)
    // Node B never saw this subscription's creation and reads the same key from the same file.
    expect(await nodeB.ctx.secrets.get(eabSecretName(sub.eabKid))).toBe(hmac)
    expect(await nodeA.ctx.store.value('SELECT count(*) FROM sealed_secrets')).toBe(0)
    expect(storeBytes(nodeA)).not.toContain(hmac)
    // Another server's file derives another key.
    expect(
      await (await server({ kind: 'file', path: secretsFile() })).ctx.secrets.get(eabSecretName(sub.eabKid))
    ).not.toBe(hmac)
  })

  it('exports everything a desktop keychain needs to open the book, and imports into another server', async () => {
    const s = await server({ kind: 'file', path: secretsFile() })
    const r = await reseller(s)
    const { key, info } = await s.resellers.createApiKey(r.id)
    const created = await s.orders.create(r, { productId: 12, domain: 'move.example.com' })
    const sub = await s.acme.forOrder(r.id, created.order.id)
    const hmac = (await s.acme.details(sub)).eabHmacKey
    const installId = (await s.settings.get('install_id')) as string
    const { file } = await exportSecrets(s.ctx.secrets, 'a long passphrase', installId)
    const names = (await s.ctx.secrets.list?.())?.map((e) => e.name)
    expect(names).toEqual(
      expect.arrayContaining([
        ROOT_KEYS.caWrapping,
        ROOT_KEYS.eab,
        ROOT_KEYS.sealing,
        `api-key:${info.id}`,
        eabSecretName(sub.eabKid)
      ])
    )
    // Into a server with a file of its own (another machine): the imported EAB key wins over its derivation.
    await s.close()
    open.splice(open.indexOf(s), 1)
    const target = await server({ kind: 'file', path: secretsFile() }, s.dataDir)
    await importSecrets(target.ctx.secrets, JSON.stringify(file), 'a long passphrase', installId)
    expect(await target.resellers.revealApiKey(info.id)).toBe(key)
    expect((await target.acme.details(sub)).eabHmacKey).toBe(hmac)
  })
})

describe('systemd credentials', () => {
  const withCredentials = async <T>(dir: string | undefined, fn: () => Promise<T>): Promise<T> => {
    const before = process.env.CREDENTIALS_DIRECTORY
    if (dir === undefined) delete process.env.CREDENTIALS_DIRECTORY
    else process.env.CREDENTIALS_DIRECTORY = dir
    try {
      return await fn()
    } finally {
      if (before === undefined) delete process.env.CREDENTIALS_DIRECTORY
      else process.env.CREDENTIALS_DIRECTORY = before
    }
  }

  it('without $CREDENTIALS_DIRECTORY say how to run CertDesk under its unit', async () => {
    await withCredentials(undefined, async () => {
      expect((await server({ kind: 'systemd' })).ctx.secrets.unavailableReason?.()).toMatch(
        /\$CREDENTIALS_DIRECTORY is not set: run CertDesk from its systemd unit with LoadCredentialEncrypted=certdesk-secrets/
      )
    })
  })

  it('serve every key `secrets init` made, and seal per-record secrets in the store', async () => {
    const dir = tempDir('credentials')
    writeFileSync(join(dir, 'certdesk-secrets'), formatKeys(newRootKeys()), { mode: 0o400 })
    await withCredentials(dir, async () => {
      const s = await server({ kind: 'systemd' })
      expect(s.ctx.secrets.unavailableReason?.()).toBeNull()
      await s.localCa.rootPem()
      const r = await reseller(s)
      const { key, info } = await s.resellers.createApiKey(r.id)
      expect(await s.resellers.revealApiKey(info.id)).toBe(key)
      const created = await s.orders.create(r, { productId: 12, domain: 'unit.example.com' })
      expect((await s.acme.details(await s.acme.forOrder(r.id, created.order.id))).eabHmacKey).toMatch(
        /^[A-Za-z0-9_-]{43}$/
      )
    })
  })

  it('refuse to make a missing key, saying how to provision it, and nothing is created', async () => {
    const dir = tempDir('credentials')
    const keys = newRootKeys()
    keys.delete(ROOT_KEYS.sealing)
    writeFileSync(join(dir, 'certdesk-secrets'), formatKeys(keys), { mode: 0o400 })
    await withCredentials(dir, async () => {
      const s = await server({ kind: 'systemd' })
      const r = await reseller(s)
      let message = ''
      try {
        await s.resellers.createApiKey(r.id)
      } catch (err) {
        message = (err as Error).message
      }
      expect(message).toContain('could not keep server:sealing-key in the systemd credential certdesk-secrets')
      expect(message).toContain('systemd credentials are read-only')
      expect(message).toContain('certdesk admin secrets init --out FILE')
      expect(message).toContain('systemd-creds encrypt --name=certdesk-secrets FILE')
      expect(message).toContain('LoadCredentialEncrypted=certdesk-secrets')
      expect(await s.resellers.apiKeys(r.id)).toEqual([])
      expect(readFileSync(join(dir, 'certdesk-secrets'), 'utf8')).toBe(formatKeys(keys))
    })
  })
})
