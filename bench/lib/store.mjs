// Big stores for the benchmarks, generated with direct SQL in a few large transactions (the API
// would take hours for a million orders). The schema comes from the real migrations: the
// reseller and its API key are made by `certdesk admin`, then orders, invoices and the ledger
// are inserted consistently: every order has one debit and one invoice, every balance change
// one ledger row, and the balance equals the sum of the ledger.
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { CLI, ROOT } from './paths.mjs'

const require = createRequire(join(ROOT, 'package.json'))
export const Database = require('better-sqlite3')

export const DB_FILE = 'certdesk.sqlite'

/** Runs `certdesk admin …` and returns its JSON answer. */
export function admin(dataDir, args, env = process.env) {
  const r = spawnSync(process.execPath, [CLI, 'admin', '--data-dir', dataDir, ...args], {
    encoding: 'utf8',
    env,
    timeout: 60_000
  })
  if (r.status !== 0) throw new Error(`could not run certdesk admin ${args.join(' ')}: ${r.stderr || r.stdout}`)
  return JSON.parse(r.stdout)
}

/** A reseller in the Standard group with an API key; returns { id, key }. */
export function makeReseller(dataDir, env, name = 'Bench Hosting') {
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-')
  const r = admin(
    dataDir,
    ['reseller', 'add', '--name', name, '--email', `${slug}@example.test`, '--company', name],
    env
  )
  const k = admin(dataDir, ['apikey', 'create', '--reseller', String(r.reseller.id)], env)
  return { id: r.reseller.id, key: k.api_key }
}

const WORDS = [
  'nimbus',
  'harbor',
  'quartz',
  'juniper',
  'falcon',
  'meadow',
  'cobalt',
  'ember',
  'tundra',
  'saffron',
  'orchid',
  'granite',
  'lumen',
  'vertex',
  'willow',
  'atlas',
  'cinder',
  'delta',
  'fjord',
  'glacier'
]
const SUBS = ['www', 'shop', 'mail', 'api', 'portal']
const TLDS = ['com', 'net', 'org', 'io', 'de', 'co.uk']
/**
 * Status mix of a mature shop with nothing due for the scheduler: a running subscription is
 * mostly completed (its next reissue still ahead), some wait for a CSR, a tenth are cancelled;
 * an ended one has expired or was cancelled. No order waits on a validation check.
 */
const table = (mix) => mix.flatMap(([s, w]) => Array(w).fill(s))
const RUNNING = table([
  ['completed', 65],
  ['pending', 15],
  ['pending_configuration', 10],
  ['cancelled', 10]
])
const ENDED = table([
  ['expired', 85],
  ['cancelled', 15]
])

export const domainOf = (i) => `${SUBS[i % SUBS.length]}.${WORDS[(i * 7) % WORDS.length]}-${i}.${TLDS[i % TLDS.length]}`

const pad = (n) => String(n).padStart(2, '0')
const ts = (ms) => {
  const d = new Date(ms)
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
}
const day = (ms) => ts(ms).slice(0, 10)

/**
 * Adds `count` orders to reseller `resellerId`, each with one invoice and three ledger rows
 * (a top-up, the order's debit, then the refund of a cancelled order or another top-up), so a
 * store of N orders has 3N ledger rows. Orders are spread over the two years before `now`.
 */
export function fillOrders(dataDir, resellerId, count, now = Date.now()) {
  const db = new Database(join(dataDir, DB_FILE))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = OFF')
  db.pragma('cache_size = -200000')
  const products = db
    .prepare(
      `SELECT p.id, p.type, pp.price_cents AS price FROM products p JOIN product_prices pp ON pp.product_id = p.id
       WHERE pp.group_id = 1 AND pp.years = 1 AND p.fulfillment = 'certificate' ORDER BY p.id`
    )
    .all()
  const start = db.prepare('SELECT COALESCE(MAX(id), 0) AS n FROM orders').get().n + 1
  let balance = db.prepare('SELECT credit_balance_cents AS b FROM resellers WHERE id = ?').get(resellerId).b
  const insOrder = db.prepare(
    `INSERT INTO orders (id, order_number, reseller_id, product_id, domain, period_months, base_price_cents,
       san_total_cents, discount_cents, total_cents, status, payment_status, auto_reissue, purchase_end_date,
       next_reissue_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 12, ?, 0, 0, ?, ?, ?, ?, ?, ?, ?, ?)`
  )
  const insInvoice = db.prepare(
    `INSERT INTO invoices (id, invoice_number, order_id, reseller_id, total_cents, status, due_date, created_at, paid_at, cancelled_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
  )
  const insTx = db.prepare(
    `INSERT INTO credit_transactions (reseller_id, amount_cents, type, description, balance_after_cents, order_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`
  )
  // Bulk load without the per-row triggers of migrations 0003, 0009, 0013 and 0018, then rebuild what they
  // keep (the same statements the migrations backfill with): ten times faster for a million
  // orders. No server runs on the store meanwhile, so no cached answer can miss these rows.
  const triggers = db
    .prepare(
      `SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ('orders', 'invoices', 'credit_transactions')`
    )
    .all()
  for (const t of triggers) db.exec(`DROP TRIGGER ${t.name}`)
  const span = 730 * 86_400_000
  const CHUNK = 50_000
  for (let from = 0; from < count; from += CHUNK) {
    db.transaction(() => {
      for (let k = from; k < Math.min(count, from + CHUNK); k++) {
        const id = start + k
        const p = products[id % products.length]
        const at = now - span + Math.floor((span * (k + 1)) / (count + 1))
        const created = ts(at)
        const year = created.slice(0, 4)
        const endMs = at + 365 * 86_400_000
        const running = endMs > now
        const status = running ? RUNNING[(id * 31) % RUNNING.length] : ENDED[(id * 31) % ENDED.length]
        const cancelled = status === 'cancelled'
        const total = p.price
        const domain = p.type === 'code-signing' ? '' : domainOf(id)
        const number = `ORD-${year}-${String(id).padStart(6, '0')}`
        const auto = p.type === 'code-signing' ? 0 : 1
        const end = day(endMs)
        // A completed certificate's next reissue is still ahead (nothing due); others have none.
        const reissueAt = now + (1 + (id % 180)) * 86_400_000
        const nextReissue = auto && status === 'completed' && reissueAt < endMs ? day(reissueAt) : null
        balance += total + 1000
        insTx.run(resellerId, total + 1000, 'credit', 'Credit top-up', balance, null, created)
        insOrder.run(
          id,
          number,
          resellerId,
          p.id,
          domain,
          total,
          total,
          status,
          cancelled ? 'refunded' : 'paid',
          auto,
          end,
          nextReissue,
          created,
          created
        )
        balance -= total
        insTx.run(resellerId, -total, 'debit', `Order ${number}`, balance, id, created)
        insInvoice.run(
          id,
          `INV-${year}-${String(id).padStart(6, '0')}`,
          id,
          resellerId,
          total,
          cancelled ? 'cancelled' : 'paid',
          day(at),
          created,
          created,
          cancelled ? created : null
        )
        if (cancelled) {
          balance += total
          insTx.run(resellerId, total, 'credit', `Refund for cancelled order ${number}`, balance, id, created)
        } else {
          balance += 500
          insTx.run(resellerId, 500, 'credit', 'Credit top-up', balance, null, created)
        }
      }
      db.prepare('UPDATE resellers SET credit_balance_cents = ? WHERE id = ?').run(balance, resellerId)
    })()
  }
  db.transaction(() => {
    db.exec(`DELETE FROM order_tallies;
      INSERT INTO order_tallies SELECT reseller_id, status, payment_status, product_id, COUNT(*), SUM(total_cents)
        FROM orders GROUP BY reseller_id, status, payment_status, product_id;
      DELETE FROM invoice_tallies;
      INSERT INTO invoice_tallies SELECT reseller_id, status, COUNT(*) FROM invoices GROUP BY reseller_id, status;
      DELETE FROM ledger_tallies;
      INSERT INTO ledger_tallies SELECT reseller_id, COUNT(*) FROM credit_transactions GROUP BY reseller_id;
      DELETE FROM order_day_tallies;
      INSERT INTO order_day_tallies SELECT reseller_id, substr(created_at, 1, 10), COUNT(*),
          COALESCE(SUM(CASE WHEN payment_status = 'paid' THEN total_cents END), 0)
        FROM orders GROUP BY 1, 2;
      DELETE FROM orders_search;
      INSERT INTO orders_search(rowid, domain, owner) SELECT id, domain, '#' || reseller_id || '#' FROM orders;
      DELETE FROM order_renewal_days;
      INSERT INTO order_renewal_days SELECT reseller_id, renewal_due, COUNT(*) FROM orders
        WHERE renewal_due IS NOT NULL GROUP BY 1, 2;
      DELETE FROM order_problem_tallies;
      INSERT INTO order_problem_tallies SELECT reseller_id, COUNT(*) FROM orders WHERE install_problem GROUP BY 1;`)
    for (const t of triggers) db.exec(t.sql)
  })()
  db.pragma('wal_checkpoint(TRUNCATE)')
  db.close()
}

/**
 * Gives a generated store the work a reseller's saved views show (the orders list's worklist):
 * completed orders whose servers were checked and found unreachable (ids divisible by 500), and
 * orders waiting for a CSR moved into domain validation by email (ids divisible by 71), about a
 * thousand each in a million. Written with the store's triggers on, as the checker and the
 * validation would write them, so every tally the views count stays exact. Returns the counts.
 */
export function markWorklist(dataDir) {
  const db = new Database(join(dataDir, DB_FILE))
  try {
    return db.transaction(() => {
      const problems = db
        .prepare(
          `INSERT INTO installation_status (order_id, verdict, checked_at, next_check_at)
           SELECT id, 'unreachable', created_at, '9999-12-31 00:00:00' FROM orders WHERE status = 'completed' AND id % 500 = 0`
        )
        .run().changes
      // Each waits for an email approval: the scheduler's look at it needs no network.
      db.prepare(
        `INSERT INTO dcv_checks (order_id, name, method, status)
         SELECT id, domain, 'email', 'pending' FROM orders WHERE status = 'pending' AND id % 71 = 0 AND domain != ''`
      ).run()
      const validating = db
        .prepare(
          `UPDATE orders SET status = 'validation_pending'
           WHERE status = 'pending' AND id % 71 = 0 AND id IN (SELECT order_id FROM dcv_checks)`
        )
        .run().changes
      return { problems, validating }
    })()
  } finally {
    db.close()
  }
}

/**
 * The store's books, checked the way an auditor would: balance equals the ledger sum, every
 * order has exactly one invoice, every paid order exactly one debit and a refunded one a
 * refund too, and SQLite's own integrity check passes. Returns a list of violations.
 */
export function auditStore(dataDir) {
  const db = new Database(join(dataDir, DB_FILE), { readonly: true })
  try {
    const bad = []
    const integrity = db.pragma('integrity_check', { simple: true })
    if (integrity !== 'ok') bad.push(`integrity_check: ${integrity}`)
    for (const r of db
      .prepare(
        `SELECT r.id, r.credit_balance_cents AS balance, COALESCE(SUM(t.amount_cents), 0) AS ledger
         FROM resellers r LEFT JOIN credit_transactions t ON t.reseller_id = r.id GROUP BY r.id`
      )
      .all()) {
      if (r.balance !== r.ledger) bad.push(`reseller ${r.id}: balance ${r.balance} != ledger sum ${r.ledger}`)
    }
    const orders = db
      .prepare(
        `SELECT o.id, o.total_cents AS total, o.payment_status AS pay,
           (SELECT COUNT(*) FROM invoices i WHERE i.order_id = o.id) AS invoices,
           (SELECT COUNT(*) FROM credit_transactions t WHERE t.order_id = o.id AND t.type = 'debit') AS debits,
           (SELECT COALESCE(SUM(-t.amount_cents), 0) FROM credit_transactions t WHERE t.order_id = o.id AND t.type = 'debit') AS debited,
           (SELECT COUNT(*) FROM credit_transactions t WHERE t.order_id = o.id AND t.type = 'credit') AS refunds
         FROM orders o`
      )
      .all()
    for (const o of orders) {
      if (o.invoices !== 1) bad.push(`order ${o.id}: ${o.invoices} invoices`)
      const paid = o.pay !== 'unpaid' && o.total > 0
      if (o.debits !== (paid ? 1 : 0)) bad.push(`order ${o.id}: ${o.debits} debits`)
      if (paid && o.debited !== o.total) bad.push(`order ${o.id}: debited ${o.debited}, total ${o.total}`)
      if (o.refunds !== (o.pay === 'refunded' && o.total > 0 ? 1 : 0)) bad.push(`order ${o.id}: ${o.refunds} refunds`)
    }
    return { violations: bad, orders: orders.length }
  } finally {
    db.close()
  }
}
