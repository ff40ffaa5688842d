/**
 * Admin accounts and their sign-in in the core, over a real SQLite file and the real keychain,
 * with the clock moved by hand: scrypt hashes and no password or token in the store, answers
 * that do not tell names apart, the limits per name and per address, TOTP enrolment and sign-in
 * with a reused code refused, and sessions that end when idle, when old, and when the account
 * changes.
 */
import Database from 'better-sqlite3'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SESSION_ABSOLUTE_HOURS, SESSION_IDLE_MINUTES, SIGN_IN_LIMITS } from '../../src-main/core/admins'
import { totpSecretName } from '../../src-main/core/admins/accounts'
import { base32Decode, hotp, totpStep } from '../../src-main/core/admins/totp'
import { DB_FILE } from '../../src-main/core/store/db'
import { RateLimitedError, ServiceError } from '../../src-main/core/errors'
import { openService, type Service } from '../../src-main/core/service'
import { manualClock } from '../support/clock'

const clock = manualClock('2026-11-21T10:00:00Z')
let dataDir: string
let service: Service
const PASSWORD = 'correct horse battery staple'
const minutes = (m: number): void => clock.set(new Date(clock.now().getTime() + m * 60_000))

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'certdesk-admins-'))
  service = await openService({ dataDir, clock: clock.clock })
  await service.admins.accounts.create({ name: 'Alice', role: 'owner', password: PASSWORD })
})

afterAll(async () => {
  await service?.close()
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
})

/** Everything SQLite has written for this data dir: the store, its WAL and shared memory. */
const storeBytes = (): string =>
  readdirSync(dataDir)
    .filter((f) => f.startsWith(DB_FILE))
    .map((f) => readFileSync(join(dataDir, f)).toString('latin1'))
    .join('')

async function refusal(p: Promise<unknown>): Promise<ServiceError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e
  )
  expect(err).toBeInstanceOf(ServiceError)
  return err as ServiceError
}

const signIn = (name: string, password: string, source = '192.0.2.10', code?: string) =>
  service.admins.sessions.signIn({ name, password, source, code })

const audit = async () => (await service.admins.audit.list({ action: 'signIn' }, { limit: 100, offset: 0 })).items

describe('accounts', () => {
  it('keeps the name lower-cased and the password only as a scrypt hash at the OWASP cost', async () => {
    const row = (await service.ctx.store.get("SELECT * FROM admins WHERE name = 'alice'")) as { password_hash: string }
    expect(row.password_hash).toMatch(/^\$scrypt\$ln=17,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
    expect(storeBytes()).not.toContain(PASSWORD)
  })

  it('refuses short, name-holding and repetitive passwords, bad names and a second account of a name', async () => {
    expect(
      (await refusal(service.admins.accounts.create({ name: 'bob', role: 'viewer', password: 'short' }))).kind
    ).toBe('invalid')
    const holding = service.admins.accounts.create({ name: 'bob', role: 'viewer', password: 'bob-is-my-password-ok' })
    expect((await refusal(holding)).message).toMatch(/must not contain the admin name/)
    const repetitive = service.admins.accounts.create({ name: 'bob', role: 'viewer', password: 'aaaaaaaaaaaaaaaaaaab' })
    expect((await refusal(repetitive)).message).toMatch(/repeats too few characters/)
    const badName = service.admins.accounts.create({
      name: "x'; DROP TABLE admins;--",
      role: 'viewer',
      password: PASSWORD
    })
    expect((await refusal(badName)).kind).toBe('invalid')
    const again = service.admins.accounts.create({ name: 'ALICE', role: 'viewer', password: PASSWORD })
    expect((await refusal(again)).kind).toBe('conflict')
    expect((await service.admins.accounts.list()).map((a) => a.name)).toEqual(['alice'])
  })

  it('never leaves the team without an enabled owner', async () => {
    await expect(service.admins.accounts.setRole('alice', 'viewer')).rejects.toThrow(/last enabled owner/)
    await expect(service.admins.accounts.setEnabled('alice', false)).rejects.toThrow(/last enabled owner/)
    expect(await service.admins.accounts.get('alice')).toMatchObject({ role: 'owner', enabled: true })
  })
})

describe('sign-in', () => {
  it('opens a session whose token the store keeps only as a hash', async () => {
    const { token, admin } = await signIn('alice', PASSWORD)
    expect(admin).toMatchObject({ name: 'alice', role: 'owner' })
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(storeBytes()).not.toContain(token)
    const check = await service.admins.sessions.check(token)
    expect(check).toMatchObject({ state: 'valid', session: { admin: { name: 'alice', role: 'owner' } } })
    expect((await audit())[0]).toMatchObject({
      actor: 'alice',
      role: 'owner',
      source: '192.0.2.10',
      outcome: 'ok',
      status: 200
    })
  })

  it('answers a wrong password and an unknown name alike, and keeps no typed name that is no account', async () => {
    const wrongPassword = await refusal(signIn('alice', 'not the password at all', '192.0.2.20'))
    // Someone types their password into the name field by mistake.
    const typedPassword = 'my-Secret-Passw0rd'
    const unknown = await refusal(signIn(typedPassword, PASSWORD, '192.0.2.20'))
    expect(wrongPassword.message).toBe(unknown.message)
    expect(wrongPassword.kind).toBe('unauthorized')
    const [last, before] = await audit()
    expect(last).toMatchObject({ actor: '(unknown name)', adminId: null, outcome: 'denied', status: 401 })
    expect(before).toMatchObject({ actor: 'alice', outcome: 'denied', status: 401 })
    expect(storeBytes()).not.toContain(typedPassword)
    expect(storeBytes()).not.toContain(typedPassword.toLowerCase())
  })

  it(`refuses a name after ${SIGN_IN_LIMITS.name.limit} failures in 15 minutes, even with the right password, until they age out`, async () => {
    await service.admins.accounts.create({ name: 'carol', role: 'viewer', password: PASSWORD })
    for (let i = 0; i < SIGN_IN_LIMITS.name.limit; i++)
      expect((await refusal(signIn('carol', `wrong password ${i}!`, `198.51.100.${i}`))).kind).toBe('unauthorized')
    const limited = await refusal(signIn('carol', PASSWORD, '198.51.100.99'))
    expect(limited).toBeInstanceOf(RateLimitedError)
    expect((limited as RateLimitedError).retryAfterSeconds).toBeGreaterThan(14 * 60)
    expect(limited.message).toMatch(/too many failed sign-ins; try again in \d+ seconds/)
    expect((await audit())[0]).toMatchObject({ actor: 'carol', outcome: 'denied', status: 429 })
    minutes(16)
    await expect(signIn('carol', PASSWORD, '198.51.100.99')).resolves.toMatchObject({ admin: { name: 'carol' } })
  })

  it(`refuses an address after ${SIGN_IN_LIMITS.source.limit} failures under any names; other addresses go on`, async () => {
    for (let i = 0; i < SIGN_IN_LIMITS.source.limit; i++)
      await refusal(signIn(`nobody${i}`, 'guess guess guess!', '203.0.113.66'))
    const limited = await refusal(signIn('alice', PASSWORD, '203.0.113.66'))
    expect(limited.kind).toBe('rate_limited')
    await expect(signIn('alice', PASSWORD, '203.0.113.67')).resolves.toMatchObject({ admin: { name: 'alice' } })
    minutes(16)
  })

  it('refuses a disabled account, and ends its sessions when it is disabled', async () => {
    await service.admins.accounts.create({ name: 'dave', role: 'operator', password: PASSWORD })
    const { token } = await signIn('dave', PASSWORD)
    await service.admins.accounts.setEnabled('dave', false)
    expect((await service.admins.sessions.check(token)).state).toBe('none')
    expect((await refusal(signIn('dave', PASSWORD))).kind).toBe('forbidden')
    await service.admins.accounts.setEnabled('dave', true)
    await expect(signIn('dave', PASSWORD)).resolves.toBeTruthy()
  })
})

describe('sessions', () => {
  it(`end after ${SESSION_IDLE_MINUTES} minutes without use`, async () => {
    const { token } = await signIn('alice', PASSWORD)
    minutes(SESSION_IDLE_MINUTES - 1)
    expect((await service.admins.sessions.check(token)).state).toBe('valid')
    minutes(SESSION_IDLE_MINUTES - 1)
    expect((await service.admins.sessions.check(token)).state).toBe('valid')
    minutes(SESSION_IDLE_MINUTES + 1)
    expect((await service.admins.sessions.check(token)).state).toBe('expired')
    // Ended for good: the row is gone, not just refused once.
    expect((await service.admins.sessions.check(token)).state).toBe('none')
  })

  it(`end ${SESSION_ABSOLUTE_HOURS} hours after sign-in, however busy`, async () => {
    const { token } = await signIn('alice', PASSWORD)
    for (let m = 0; m < SESSION_ABSOLUTE_HOURS * 60 - 20; m += 20) {
      minutes(20)
      expect((await service.admins.sessions.check(token)).state).toBe('valid')
    }
    minutes(21)
    expect((await service.admins.sessions.check(token)).state).toBe('expired')
  })

  it('end when the role changes, and on sign-out', async () => {
    await service.admins.accounts.create({ name: 'erin', role: 'operator', password: PASSWORD })
    const first = await signIn('erin', PASSWORD)
    await service.admins.accounts.setRole('erin', 'viewer')
    expect((await service.admins.sessions.check(first.token)).state).toBe('none')
    const second = await signIn('erin', PASSWORD)
    expect(await service.admins.sessions.check(second.token)).toMatchObject({ session: { admin: { role: 'viewer' } } })
    await service.admins.sessions.end(second.token, '192.0.2.10')
    expect((await service.admins.sessions.check(second.token)).state).toBe('none')
    expect((await service.admins.audit.list({ action: 'signOut' }, { limit: 1, offset: 0 })).items[0]).toMatchObject({
      actor: 'erin',
      outcome: 'ok'
    })
  })
})

describe('TOTP', () => {
  let key: Buffer
  const code = (stepOffset = 0) => hotp(key, totpStep(clock.now()) + stepOffset)

  it('enrols with a secret kept in the keychain, not the store, once a code from it is shown', async () => {
    const alice = await service.admins.accounts.get('alice')
    const enrolment = await service.admins.accounts.beginTotp(alice.id)
    key = base32Decode(enrolment.secret)!
    expect(key).toHaveLength(20)
    expect(enrolment.uri).toMatch(/^otpauth:\/\/totp\/CertDesk:alice\?secret=[A-Z2-7]{32}&issuer=CertDesk/)
    // Not on yet: a sign-in still needs no code, and a wrong code does not turn it on.
    await expect(service.admins.accounts.confirmTotp(alice.id, '000000')).rejects.toThrow(/not the current code/)
    expect((await service.admins.accounts.get('alice')).totpEnabled).toBe(false)
    await service.admins.accounts.confirmTotp(alice.id, code())
    expect((await service.admins.accounts.get('alice')).totpEnabled).toBe(true)
    expect(await service.ctx.secrets.get(totpSecretName(alice.id))).toBe(enrolment.secret)
    expect(storeBytes()).not.toContain(enrolment.secret)
  })

  it('asks for the code after a right password, and the code the enrolment used is spent', async () => {
    expect((await refusal(signIn('alice', PASSWORD))).message).toMatch(/enter the 6-digit code/)
    expect((await refusal(signIn('alice', PASSWORD, '192.0.2.10', code()))).message).toMatch(/used already/)
  })

  it('signs in with the next code, and refuses that code a second time (RFC 6238 §5.2)', async () => {
    minutes(0.5)
    const c = code()
    await expect(signIn('alice', PASSWORD, '192.0.2.10', c)).resolves.toMatchObject({ admin: { name: 'alice' } })
    const replay = await refusal(signIn('alice', PASSWORD, '192.0.2.10', c))
    expect(replay.kind).toBe('unauthorized')
    expect(replay.message).toMatch(/used already/)
    // An older code of the window is refused too once a newer one was used.
    expect((await refusal(signIn('alice', PASSWORD, '192.0.2.10', code(-1)))).message).toMatch(/used already/)
    expect((await audit())[0]).toMatchObject({ actor: 'alice', outcome: 'denied', status: 401 })
  })

  it('refuses a wrong code as it refuses a wrong password', async () => {
    minutes(0.5)
    const wrong = String((Number(code()) + 1) % 1_000_000).padStart(6, '0')
    expect((await refusal(signIn('alice', PASSWORD, '192.0.2.10', wrong))).message).toBe(
      'could not sign in: wrong name, password or code'
    )
  })

  it('of two sign-ins racing with one code, exactly one gets a session', async () => {
    minutes(0.5)
    const c = code()
    const results = await Promise.allSettled([
      signIn('alice', PASSWORD, '192.0.2.10', c),
      signIn('alice', PASSWORD, '192.0.2.11', c)
    ])
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
  })

  it('turns off with the password, and the secret leaves the keychain', async () => {
    const alice = await service.admins.accounts.get('alice')
    await expect(service.admins.accounts.disableTotp(alice.id, 'not the password at all')).rejects.toThrow(/wrong/)
    await service.admins.accounts.disableTotp(alice.id, PASSWORD)
    expect(await service.ctx.secrets.get(totpSecretName(alice.id))).toBeNull()
    await expect(signIn('alice', PASSWORD)).resolves.toBeTruthy()
  })
})

describe('the audit log is append-only in the store itself', () => {
  it('refuses UPDATE and DELETE of entries and outcomes, from another connection too', () => {
    const other = new Database(join(dataDir, DB_FILE))
    try {
      const before = other.prepare('SELECT COUNT(*) FROM audit_log').pluck().get() as number
      expect(before).toBeGreaterThan(0)
      for (const sql of [
        "UPDATE audit_log SET actor = 'someone else'",
        'DELETE FROM audit_log',
        "UPDATE audit_outcomes SET outcome = 'ok'",
        'DELETE FROM audit_outcomes',
        // INSERT OR REPLACE removes the row it replaces without running DELETE triggers.
        "INSERT OR REPLACE INTO audit_outcomes (audit_id, outcome, status, finished_at) SELECT audit_id, 'ok', 200, finished_at FROM audit_outcomes LIMIT 1",
        "INSERT OR REPLACE INTO audit_log (id, at, actor, source, action, targets) SELECT id, at, 'someone else', source, action, targets FROM audit_log LIMIT 1",
        "INSERT INTO audit_outcomes (audit_id, outcome, status, finished_at) SELECT audit_id, 'ok', 200, finished_at FROM audit_outcomes LIMIT 1 ON CONFLICT (audit_id) DO UPDATE SET outcome = 'ok'"
      ])
        expect(() => other.prepare(sql).run(), sql).toThrow(/append-only/)
      expect(other.prepare('SELECT COUNT(*) FROM audit_log').pluck().get()).toBe(before)
      expect(other.prepare("SELECT COUNT(*) FROM audit_log WHERE actor = 'someone else'").pluck().get()).toBe(0)
    } finally {
      other.close()
    }
  })
})
