/**
 * A listener's TLS identity (src-main/common/tls-identity.ts): which pairs it accepts, which
 * files it refuses to read, and when an issued pair is made again. The clock is moved, never
 * waited for: an issued pair past two thirds of its life is renewed at once, one before it is not.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkPair, readPemFile, TlsIdentity, type TlsPair } from '../../src-main/common/tls-identity'
import { createTestCa, type TestCa, type TestLeaf } from '../support/test-ca'

const NAME = 'certs.reseller.example'
const DAY = 86_400_000
let ca: TestCa
let dir: string
const pairOf = (leaf: TestLeaf): TlsPair => ({
  cert: `${leaf.certificatePem}${leaf.chainPem}`,
  key: leaf.privateKeyPem
})

beforeAll(async () => {
  ca = await createTestCa()
  dir = mkdtempSync(join(tmpdir(), 'certdesk-tls-identity-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('a pair', () => {
  it('is taken when its key matches and it names the host', async () => {
    const leaf = await ca.issue(NAME, new Date('2026-01-01T00:00:00Z'), 30)
    expect(checkPair(pairOf(leaf), NAME)).toMatchObject({
      serial: leaf.serial,
      notBefore: new Date('2026-01-01T00:00:00Z'),
      notAfter: new Date('2026-01-30T23:59:59Z')
    })
  })

  it('is refused with the reason otherwise', async () => {
    const a = await ca.issue(NAME, new Date(), 30)
    const b = await ca.issue(NAME, new Date(), 30)
    const other = await ca.issue('other.example', new Date(), 30)
    expect(checkPair({ cert: pairOf(a).cert, key: b.privateKeyPem }, NAME)).toEqual({
      problem: 'the private key does not belong to the certificate'
    })
    expect(checkPair(pairOf(other), NAME)).toEqual({
      problem: `the certificate does not name ${NAME} (DNS:other.example)`
    })
    expect(checkPair({ cert: 'not a certificate', key: a.privateKeyPem }, NAME)).toEqual({
      problem: 'the certificate file holds no PEM certificate'
    })
    const encrypted = execFileSync('openssl', ['pkey', '-aes256', '-passout', 'pass:secret'], {
      input: a.privateKeyPem
    }).toString()
    expect(checkPair({ cert: pairOf(a).cert, key: encrypted }, NAME)).toEqual({
      problem:
        'could not read the private key: it is encrypted; give the key without a passphrase, readable by CertDesk only'
    })
  })
})

describe('a key or certificate file', () => {
  it('is refused when others may read the key, when it is not a regular file, or when it is too large', async () => {
    const leaf = await ca.issue(NAME, new Date(), 30)
    const key = join(dir, 'loose.key')
    writeFileSync(key, leaf.privateKeyPem, { mode: 0o644 })
    await expect(readPemFile(key, 'private key')).rejects.toThrow(
      `could not read the private key file ${key}: others may read it (mode 644); chmod o-rwx it`
    )
    // Group-readable is Debian's ssl-cert convention, and allowed.
    const group = join(dir, 'group.key')
    writeFileSync(group, leaf.privateKeyPem, { mode: 0o640 })
    expect(await readPemFile(group, 'private key')).toBe(leaf.privateKeyPem)

    const fifo = join(dir, 'fifo.pem')
    execFileSync('mkfifo', [fifo])
    await expect(readPemFile(fifo, 'certificate')).rejects.toThrow('it is not a regular file')

    const big = join(dir, 'big.pem')
    writeFileSync(big, Buffer.alloc(1024 * 1024 + 1, 0x41))
    await expect(readPemFile(big, 'certificate')).rejects.toThrow('it is larger than 1048576 bytes')
  })
})

describe('an issued pair', () => {
  /** An identity whose pairs are 30-day leaves from `ca`, starting at `issuedAt`, seen at `now`. */
  function issued(issuedAt: Date, now: () => number) {
    const made: TestLeaf[] = []
    const changes: string[] = []
    const identity = new TlsIdentity({
      kind: 'issued',
      host: NAME,
      source: 'the test CA',
      now,
      load: async () => {
        const leaf = await ca.issue(NAME, issuedAt, 30)
        made.push(leaf)
        return pairOf(leaf)
      },
      onChange: (_pair, info) => changes.push(info.serial)
    })
    return { identity, made, changes }
  }

  it('is made again at once when two thirds of its life have passed, and put in force', async () => {
    const issuedAt = new Date('2026-03-01T00:00:00Z')
    const { identity, made, changes } = issued(issuedAt, () => issuedAt.getTime() + 21 * DAY)
    try {
      await identity.start()
      for (let i = 0; i < 100 && changes.length === 0; i++) await new Promise((r) => setTimeout(r, 20))
      expect(made.length).toBeGreaterThanOrEqual(2)
      expect(changes[0]).toBe(made[1].serial)
      expect(identity.currentInfo?.serial).toBe(changes.at(-1))
    } finally {
      identity.close()
    }
  })

  it('is kept before that', async () => {
    const issuedAt = new Date('2026-03-01T00:00:00Z')
    const { identity, made, changes } = issued(issuedAt, () => issuedAt.getTime() + 19 * DAY)
    try {
      await identity.start()
      await new Promise((r) => setTimeout(r, 300))
      expect(made).toHaveLength(1)
      expect(changes).toEqual([])
      // SIGHUP's path: made again now, whatever the clock says.
      expect(await identity.reload()).toBe(true)
      expect(changes).toEqual([made[1].serial])
    } finally {
      identity.close()
    }
  })
})
