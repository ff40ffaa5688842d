/**
 * Opening a PostgreSQL store that cannot be opened says why in one line, with an exit code for
 * the CLI (sysexits), and never shows the password: a URL that is not one, a refused password,
 * a server that is not there, a database that does not exist. Against the real test server.
 */
import { createServer, type Server } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { StoreOpenError } from '../../../src-main/core/store'
import { openPostgresStore } from '../../../src-main/core/store/postgres-open'
import { createTestDatabase, type TestDatabase } from '../../support/postgres'

async function refusal(url: string, options = {}): Promise<StoreOpenError> {
  const err = await openPostgresStore(url, options).then(
    async (s) => {
      await s.close()
      return new Error('opened')
    },
    (e: unknown) => e
  )
  expect(err).toBeInstanceOf(StoreOpenError)
  const e = err as StoreOpenError
  expect(e.message.split('\n')).toHaveLength(1)
  expect(e.message).toMatch(/^could not open the store at /)
  return e
}

describe('opening a PostgreSQL store', () => {
  let db: TestDatabase
  let silent: Server
  let silentPort: number

  beforeAll(async () => {
    db = await createTestDatabase()
    // A peer that accepts the connection and never answers (a firewall that drops replies).
    silent = createServer(() => undefined)
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r))
    silentPort = (silent.address() as { port: number }).port
  })
  afterAll(async () => {
    silent?.close()
    await db?.drop()
  })

  it('opens with the right password over TCP and runs a statement', async () => {
    const store = await openPostgresStore(db.tcpUrl)
    expect(await store.value('SELECT COUNT(*) FROM orders')).toBe(0)
    await store.close()
  })

  it('refuses a URL that is not a PostgreSQL URL, before connecting (exit 64)', async () => {
    for (const url of [
      'not a url',
      'mysql://root:secret@127.0.0.1/certdesk',
      `postgres://certdesk@127.0.0.1:${db.port}/`
    ]) {
      const e = await refusal(url)
      expect(e.exitCode).toBe(64)
      expect(e.message).not.toContain('secret')
    }
  })

  it('says the server refused the password, and never shows it (exit 77)', async () => {
    const e = await refusal(`postgres://certdesk:wrong-Pa55word@127.0.0.1:${db.port}/${db.name}`)
    expect(e.message).toContain('the server refused the password of user "certdesk"')
    expect(e.message).not.toContain('wrong-Pa55word')
    expect(e.exitCode).toBe(77)
  })

  it('says when the URL gives no password and the server asks for one (exit 77)', async () => {
    const e = await refusal(`postgres://certdesk@127.0.0.1:${db.port}/${db.name}`)
    expect(e.message).toContain('asks for a password')
    expect(e.exitCode).toBe(77)
  })

  it('says nothing answers on a closed port (exit 69)', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = createServer()
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port
        s.close(() => resolve(p))
      })
    })
    const e = await refusal(`postgres://certdesk:x@127.0.0.1:${closed}/certdesk`)
    expect(e.message).toContain(`nothing answers on 127.0.0.1:${closed} (connection refused)`)
    expect(e.exitCode).toBe(69)
  })

  it('says the server did not answer in time when a peer stays silent (exit 69)', async () => {
    const e = await refusal(`postgres://certdesk:x@127.0.0.1:${silentPort}/certdesk`, { connectTimeoutMs: 500 })
    expect(e.message).toContain('did not answer in time')
    expect(e.exitCode).toBe(69)
  })

  it('says the database does not exist (exit 78)', async () => {
    const e = await refusal(`postgres://certdesk:${db.password}@127.0.0.1:${db.port}/no_such_book`)
    expect(e.message).toContain('the database does not exist')
    expect(e.message).not.toContain(db.password)
    expect(e.exitCode).toBe(78)
  })
})
