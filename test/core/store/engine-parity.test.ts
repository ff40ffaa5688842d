/**
 * The engine-specific parts do the same work on both engines. The same writes, through the
 * port, into a SQLite store and a PostgreSQL database leave the same tallies, cache scope
 * generations, order versions, catalogue version, installation schedule, and the orders
 * worklist's generated columns and view tallies behind (SQLite's triggers there, their plpgsql
 * counterparts here), and the substring search over domains answers the same ids and totals
 * (FTS5 trigram there, pg_trgm here).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EngineName, Store } from '../../../src-main/core/store'
import { KEEPER_TRIGGERS } from '../../../src-main/core/store/store-version'
import { ENGINES, engineFixture, type EngineFixture } from './engines'

const DOMAINS: [number, string][] = [
  [1, 'www.example.com'],
  [1, 'shop.EXAMPLE.org'],
  [1, 'a%b_c.example.net'],
  [2, 'example.reseller-two.com'],
  [1, 'mail.other.test'],
  [1, 'ex.io']
]

async function writeBook(s: Store): Promise<void> {
  await s.run(`INSERT INTO reseller_groups (id, name) VALUES (1, 'Standard')`)
  await s.run(
    `INSERT INTO products (id, name, brand, type, validation_type, domain_type, max_years, warranty)
     VALUES (1, 'Basic DV', 'CertDesk', 'ssl', 'dv', 'single', 2, '10000')`
  )
  await s.run(
    `INSERT INTO product_prices (product_id, group_id, years, price_cents) VALUES (1, 1, 1, 1000), (1, 1, 2, 1800)`
  )
  for (const id of [1, 2]) {
    await s.run(
      `INSERT INTO resellers (id, name, email, group_id, created_at) VALUES (?, ?, ?, 1, '2026-05-01 09:00:00')`,
      id,
      `R${id}`,
      `r${id}@example.com`
    )
  }
  for (const [i, [reseller, domain]] of DOMAINS.entries()) {
    const id = i + 1
    const day = `2026-05-0${1 + (i % 3)}`
    await s.tx(async (t) => {
      await t.run(
        `INSERT INTO orders (id, order_number, reseller_id, product_id, domain, period_months, base_price_cents,
           san_total_cents, discount_cents, total_cents, status, payment_status, auto_reissue, purchase_end_date,
           created_at, updated_at)
         VALUES (?, ?, ?, 1, ?, 12, 1000, 0, 0, 1000, 'pending', ?, 1, '2027-05-01', ?, ?)`,
        id,
        `ORD-2026-${String(id).padStart(6, '0')}`,
        reseller,
        domain,
        i % 2 ? 'unpaid' : 'paid',
        `${day} 10:00:00`,
        `${day} 10:00:00`
      )
      await t.insert(
        `INSERT INTO invoices (invoice_number, order_id, reseller_id, total_cents, status, due_date, created_at)
         VALUES (?, ?, ?, 1000, ?, '2026-05-15', ?)`,
        `INV-2026-${String(id).padStart(6, '0')}`,
        id,
        reseller,
        i % 2 ? 'unpaid' : 'paid',
        `${day} 10:00:00`
      )
      if (i % 2 === 0) {
        await t.insert(
          `INSERT INTO credit_transactions (reseller_id, amount_cents, type, description, balance_after_cents, order_id, created_at)
           VALUES (?, -1000, 'debit', 'order', 0, ?, ?)`,
          reseller,
          id,
          `${day} 10:00:00`
        )
      }
    })
  }
  await s.insert(
    `INSERT INTO api_keys (reseller_id, key_hash, prefix, created_at) VALUES (1, 'h1', 'cd_', '2026-05-01 09:00:00')`
  )
  await s.run(`UPDATE orders SET status = 'completed' WHERE id = 2`)
  await s.run(`UPDATE orders SET reseller_id = 2 WHERE id = 3`)
  await s.run(`UPDATE orders SET payment_status = 'refunded', updated_at = '2026-05-04 08:00:00' WHERE id = 1`)
  await s.run(`UPDATE invoices SET status = 'cancelled' WHERE order_id = 1`)
  await s.run(`UPDATE orders SET domain = 'renamed.example.com' WHERE id = 5`)
  await s.run(`DELETE FROM invoices WHERE order_id = 6`)
  await s.run(`DELETE FROM orders WHERE id = 6`)
  await s.run(
    `INSERT INTO certificates (order_id, serial, issuer, certificate_pem, chain_pem, names, valid_from, valid_till, reason, created_at)
     VALUES (2, '01', 'local', 'pem', 'chain', '[]', '2026-05-02 10:00:00', '2026-11-02 10:00:00', 'initial', '2026-05-02 23:30:00')`
  )
  const target = await s.insert(
    `INSERT INTO deploy_targets (order_id, kind, config, created_at) VALUES (4, 'folder', '{}', '2026-05-02 10:00:00')`
  )
  await s.run(
    `INSERT INTO certificates (order_id, serial, issuer, certificate_pem, chain_pem, names, valid_from, valid_till, reason, created_at)
     VALUES (4, '02', 'local', 'pem', 'chain', '[]', '2026-05-02 10:00:00', '2026-11-02 10:00:00', 'initial', '2026-05-02 10:00:00')`
  )
  const run = await s.insert(
    `INSERT INTO deploy_runs (target_id, order_id, serial, certificate_pem, chain_pem, valid_from, valid_till, trigger, status,
       created_at, updated_at)
     VALUES (?, 4, '02', 'pem', 'chain', '2026-05-02', '2026-11-02', 'issued', 'pending', '2026-05-02 10:00:00', '2026-05-02 10:00:00')`,
    target
  )
  await s.run(`UPDATE deploy_runs SET status = 'succeeded', updated_at = '2026-05-02 10:05:00' WHERE id = ?`, run)
  await s.run(`UPDATE products SET name = 'Basic DV (2026)' WHERE id = 1`)
  await s.run(`UPDATE product_prices SET price_cents = 1100 WHERE years = 1`)
  // The orders worklist (migration 0018): the next renewal and the installation verdict of each
  // order, and the tallies of its saved views, through issue, reissue dates, verdicts, a move to
  // another reseller, cancellation and removal.
  await s.run(
    `UPDATE orders SET status = 'completed', cert_valid_till = '2026-11-02 10:00:00', next_reissue_at = '2026-10-19 10:00:00'
      WHERE id = 4`
  )
  await s.run(`UPDATE installation_status SET verdict = 'other_certificate' WHERE order_id = 4`)
  await s.run(`UPDATE installation_status SET verdict = 'expired' WHERE order_id = 2`)
  await s.run(`UPDATE orders SET cert_valid_till = '2026-11-02 10:00:00' WHERE id = 2`)
  await s.run(`UPDATE orders SET status = 'completed' WHERE id = 5`)
  await s.run(`UPDATE orders SET reseller_id = 1 WHERE id = 3`)
  await s.run(`UPDATE orders SET status = 'completed', purchase_end_date = '2026-12-01' WHERE id = 3`)
  await s.run(`UPDATE orders SET reseller_id = 2 WHERE id = 5`)
  await s.run(`UPDATE installation_status SET verdict = 'ok' WHERE order_id = 4`)
  await s.run(`UPDATE installation_status SET verdict = 'unreachable' WHERE order_id = 4`)
  await s.run(`UPDATE orders SET status = 'cancelled' WHERE id = 1`)
  await s.tx(async (t) => {
    await t.run(
      `INSERT INTO orders (id, order_number, reseller_id, product_id, domain, period_months, base_price_cents,
         san_total_cents, discount_cents, total_cents, status, payment_status, auto_reissue, purchase_end_date,
         cert_valid_till, created_at, updated_at)
       VALUES (7, 'ORD-2026-000007', 1, 1, 'gone.example', 12, 1000, 0, 0, 1000, 'completed', 'paid', 0, '2027-05-01',
         '2026-12-24 10:00:00', '2026-05-03 10:00:00', '2026-05-03 10:00:00')`
    )
    await t.run(
      `INSERT INTO installation_status (order_id, verdict, checked_at, next_check_at)
       VALUES (7, 'hostname_mismatch', '2026-05-03 11:00:00', '2026-05-04 11:00:00')`
    )
  })
  await s.run(`DELETE FROM orders WHERE id = 7`)
  await s.run(`UPDATE orders SET status = 'expired' WHERE id = 3`)
}

const DERIVED: Record<string, string> = {
  order_tallies: 'SELECT * FROM order_tallies ORDER BY reseller_id, status, payment_status, product_id',
  invoice_tallies: 'SELECT * FROM invoice_tallies ORDER BY reseller_id, status',
  ledger_tallies: 'SELECT * FROM ledger_tallies ORDER BY reseller_id',
  order_day_tallies: 'SELECT * FROM order_day_tallies ORDER BY reseller_id, day',
  cache_generations: 'SELECT * FROM cache_generations ORDER BY scope',
  order_versions: 'SELECT * FROM order_versions ORDER BY order_id',
  catalogue_version: `SELECT value FROM settings WHERE key = 'catalogue_version'`,
  installation_status: 'SELECT * FROM installation_status ORDER BY order_id',
  'worklist columns of orders': 'SELECT id, renewal_due, install_verdict, install_problem FROM orders ORDER BY id',
  order_renewal_days: 'SELECT * FROM order_renewal_days ORDER BY reseller_id, day',
  order_problem_tallies: 'SELECT * FROM order_problem_tallies ORDER BY reseller_id'
}

/** What a search should find: the reseller's orders whose domain holds `term`, ignoring ASCII case. */
async function search(s: Store, reseller: number, term: string, status?: string, limit = 50, offset = 0) {
  const q = s.domainQuery(reseller, term, status)
  const ids = (await s.all<{ id: number }>(q.page.sql, ...q.page.args, limit, offset)).map((r) => r.id)
  const total = await s.value<number>(q.count.sql, ...q.count.args)
  return { ids, total }
}

describe('the same writes on both engines', () => {
  const fx: Partial<Record<EngineName, EngineFixture>> = {}
  const stores: Partial<Record<EngineName, Store>> = {}

  beforeAll(async () => {
    for (const e of ENGINES) {
      fx[e] = await engineFixture(e)
      stores[e] = await fx[e]!.open()
      await writeBook(stores[e]!)
    }
  })
  afterAll(async () => {
    for (const e of ENGINES) await fx[e]?.dispose()
  })

  it.each(Object.keys(DERIVED))('leave the same %s', async (name) => {
    const sqlite = await stores.sqlite!.all(DERIVED[name])
    const postgres = await stores.postgres!.all(DERIVED[name])
    expect(sqlite.length).toBeGreaterThan(0)
    expect(postgres).toEqual(sqlite)
  })

  it('move the same reseller scope, and another reseller’s write moves neither the scope nor the catalogue', async () => {
    for (const s of [stores.sqlite!, stores.postgres!]) {
      const before = await s.scopeVersions(1)
      const catalogue = await s.catalogueVersion()
      await s.run(`UPDATE orders SET status_note = 'checked' WHERE id = 4`)
      expect(await s.scopeVersions(1)).toEqual(before)
      await s.run(`UPDATE orders SET status_note = 'checked' WHERE id = 2`)
      const after = await s.scopeVersions(1)
      expect(Number(after.reseller)).toBe(Number(before.reseller) + 1)
      expect(after.catalogue).toBe(catalogue)
    }
    expect((await stores.postgres!.scopeVersions(2)).reseller).toBe((await stores.sqlite!.scopeVersions(2)).reseller)
  })

  it('moves the store version with every commit, by any connection', async () => {
    for (const s of [stores.sqlite!, stores.postgres!]) {
      const other = await fx[s.engine]!.open()
      const v = await s.storeVersion()
      expect(await s.storeVersion()).toBe(v)
      await other.run(`UPDATE orders SET status_note = 'again' WHERE id = 4`)
      expect(await s.storeVersion()).not.toBe(v)
      await other.close()
    }
  })

  it.each([
    [1, 'example', undefined],
    [1, 'EXAMPLE.', undefined],
    [1, 'xam', 'pending'],
    [1, 'ex', undefined],
    [1, '%', undefined],
    [1, 'b_c', undefined],
    [1, '_', undefined],
    [2, 'example', undefined],
    [1, 'nothing-like-it', undefined]
  ])('find the same orders of reseller %i for "%s" (status %s)', async (reseller, term, status) => {
    const sqlite = await search(stores.sqlite!, reseller, term, status)
    const postgres = await search(stores.postgres!, reseller, term, status)
    const rows = await stores.sqlite!.all<{ id: number; domain: string; reseller_id: number; status: string }>(
      'SELECT id, domain, reseller_id, status FROM orders ORDER BY id DESC'
    )
    const expected = rows
      .filter((r) => r.reseller_id === reseller && r.domain.toLowerCase().includes(term.toLowerCase()))
      .filter((r) => !status || r.status === status)
      .map((r) => r.id)
    expect(sqlite).toEqual({ ids: expected, total: expected.length })
    expect(postgres).toEqual(sqlite)
  })

  it('page a search the same way', async () => {
    expect(await search(stores.postgres!, 1, 'example', undefined, 1, 1)).toEqual(
      await search(stores.sqlite!, 1, 'example', undefined, 1, 1)
    )
  })

  it('on PostgreSQL, gives a version never seen twice while a keeper trigger is disabled (a bulk load)', async () => {
    const s = stores.postgres!
    expect(await s.catalogueVersion()).toBe(await s.catalogueVersion())
    await s.run('ALTER TABLE orders DISABLE TRIGGER cache_gen_orders_update')
    const [a, b] = [await s.scopeVersions(1), await s.scopeVersions(1)]
    expect(a.catalogue).not.toBe(b.catalogue)
    await s.run('ALTER TABLE orders ENABLE TRIGGER cache_gen_orders_update')
    expect(await s.catalogueVersion()).toBe(await s.catalogueVersion())
  })

  it('on PostgreSQL, sees each keeper trigger disabled or dropped alone, whichever table it is on', async () => {
    const s = stores.postgres!
    const on = new Map(
      (
        await s.all<{ tgname: string; relname: string }>(
          `SELECT t.tgname, t.tgrelid::regclass::text AS relname FROM pg_trigger t
            WHERE t.tgname IN (${KEEPER_TRIGGERS.map((t) => `'${t}'`).join(', ')})`
        )
      ).map((r) => [r.tgname, r.relname])
    )
    expect([...on.keys()].sort()).toEqual([...KEEPER_TRIGGERS].sort())
    const unkept = async (): Promise<boolean> => {
      const [a, b] = [await s.scopeVersions(1), await s.scopeVersions(1)]
      return a.catalogue !== b.catalogue
    }
    for (const [trigger, table] of on) {
      await s.run(`ALTER TABLE ${table} DISABLE TRIGGER ${trigger}`)
      expect({ trigger, unkept: await unkept() }).toEqual({ trigger, unkept: true })
      await s.run(`ALTER TABLE ${table} ENABLE TRIGGER ${trigger}`)
      expect({ trigger, unkept: await unkept() }).toEqual({ trigger, unkept: false })
    }
    // Dropped and made again (as a hand-made bulk load would): unkept while it is gone.
    await s.run('DROP TRIGGER cache_gen_ledger_insert ON credit_transactions')
    expect(await unkept()).toBe(true)
    await s.run(
      `CREATE TRIGGER cache_gen_ledger_insert AFTER INSERT ON credit_transactions
         FOR EACH ROW EXECUTE FUNCTION cache_gen_reseller_rows()`
    )
    expect(await unkept()).toBe(false)
  })
})
