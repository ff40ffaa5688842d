/**
 * A team's nodes started at the same moment on a new, empty PostgreSQL database, as a systemd
 * template starts them: every node opens (one migrates, the others wait for it and find the
 * schema made), the catalogue is seeded once, and all of them agree on one install id. Against the real test server, with the services in this process standing
 * for the nodes (each its own pools).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openService, type Service } from '../../../src-main/core/service'
import { latestVersion } from '../../../src-main/core/store/postgres-migrate'
import { createTestDatabase, type TestDatabase } from '../../support/postgres'

const dbs: TestDatabase[] = []
const services: Service[] = []
const dir = mkdtempSync(join(tmpdir(), 'certdesk-first-start-'))

afterAll(async () => {
  for (const s of services) await s.close().catch(() => undefined)
  for (const d of dbs) await d.drop()
  rmSync(dir, { recursive: true, force: true })
})

describe('nodes started together on an empty database', () => {
  it('all open, migrate once, and share one catalogue and one install id', async () => {
    for (let round = 0; round < 3; round++) {
      const db = await createTestDatabase({ empty: true })
      dbs.push(db)
      const opened = await Promise.allSettled([0, 1, 2].map(() => openService({ dataDir: dir, database: db.url })))
      for (const o of opened) if (o.status === 'fulfilled') services.push(o.value)
      // Every node opens: none stops on the others' migration.
      expect(opened.map((o) => (o.status === 'rejected' ? String(o.reason) : 'opened'))).toEqual([
        'opened',
        'opened',
        'opened'
      ])
      const [a, b, c] = services.slice(-3)
      const store = a!.ctx.store
      expect(await store.value('SELECT version FROM certdesk_schema')).toBe(latestVersion())
      // The catalogue once: the seeded products are not doubled.
      const products = await store.value<number>('SELECT COUNT(*) FROM products')
      expect(products).toBeGreaterThan(0)
      expect(await store.value('SELECT COUNT(DISTINCT name) FROM products')).toBe(products)
      const installIds = await Promise.all(
        [a, b, c].map((s) => s!.ctx.store.value<string>("SELECT value FROM settings WHERE key = 'install_id'"))
      )
      expect(new Set(installIds).size).toBe(1)
    }
  })
})
