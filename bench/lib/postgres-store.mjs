// Big PostgreSQL books for the benchmarks, the counterpart of store.mjs: the schema comes from
// CertDesk's own migrations (the first `certdesk admin` on the database makes it, with the
// reseller and its API key), then orders, invoices and the ledger are generated inside the
// server with generate_series (a million orders in one statement per table, not one by one),
// with the same shapes and values as store.mjs's `fillOrders`: every order one invoice and three
// ledger rows, every balance equal to the sum of its ledger.
import pg from 'pg'

const WORDS = ['nimbus', 'harbor', 'quartz', 'juniper', 'falcon', 'meadow', 'cobalt', 'ember', 'tundra', 'saffron', 'orchid', 'granite', 'lumen', 'vertex', 'willow', 'atlas', 'cinder', 'delta', 'fjord', 'glacier'] // prettier-ignore
const SUBS = ['www', 'shop', 'mail', 'api', 'portal']
const TLDS = ['com', 'net', 'org', 'io', 'de', 'co.uk']
const array = (xs) => `ARRAY[${xs.map((x) => `'${x}'`).join(', ')}]`

export async function withClient(url, fn) {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return await fn(c)
  } finally {
    await c.end()
  }
}

/**
 * Adds `count` orders to reseller `resellerId` of the database at `url`, spread over the two
 * years before `now`, with the status mix, domains, invoices and ledger rows of `fillOrders`.
 * The row triggers are off while the rows go in, and what they keep (tallies, tallies per day,
 * the cache generations) is rebuilt from the rows afterwards; PostgreSQL keeps the search index.
 */
export async function fillOrdersPostgres(url, resellerId, count, now = Date.now()) {
  await withClient(url, async (c) => {
    await c.query('BEGIN')
    for (const t of ['orders', 'invoices', 'credit_transactions'])
      await c.query(`ALTER TABLE ${t} DISABLE TRIGGER USER`)
    await c.query(`CREATE TEMP TABLE prod ON COMMIT DROP AS
      SELECT (row_number() OVER (ORDER BY p.id) - 1)::int AS i, p.id, p.type, pp.price_cents AS price
        FROM products p JOIN product_prices pp ON pp.product_id = p.id
       WHERE pp.group_id = 1 AND pp.years = 1 AND p.fulfillment = 'certificate'`)
    const start = Number((await c.query('SELECT COALESCE(MAX(id), 0) + 1 AS n FROM orders')).rows[0].n)
    const balance0 = Number(
      (await c.query('SELECT credit_balance_cents AS b FROM resellers WHERE id = $1', [resellerId])).rows[0].b
    )
    const span = 730 * 86_400_000
    // One row per order with every value the three tables take (store.mjs, `fillOrders`).
    await c.query(
      `CREATE TEMP TABLE gen ON COMMIT DROP AS
       WITH k AS (
         SELECT k, $1::bigint + k AS id,
                to_timestamp(($2::bigint - $3::bigint + floor($3::numeric * (k + 1) / ($4::bigint + 1))) / 1000.0) AT TIME ZONE 'UTC' AS at
           FROM generate_series(0, $4::bigint - 1) AS k
       ), p AS (
         SELECT k.*, prod.id AS product_id, prod.type, prod.price,
                k.at + interval '365 days' > to_timestamp($2::bigint / 1000.0) AT TIME ZONE 'UTC' AS running,
                (k.id * 31) % 100 AS pick
           FROM k JOIN prod ON prod.i = k.id % (SELECT COUNT(*) FROM prod)
       )
       SELECT id, product_id, type, price AS total, at,
              to_char(at, 'YYYY-MM-DD HH24:MI:SS') AS ts, to_char(at, 'YYYY-MM-DD') AS day, to_char(at, 'YYYY') AS year,
              CASE WHEN running THEN CASE WHEN pick < 65 THEN 'completed' WHEN pick < 80 THEN 'pending'
                                          WHEN pick < 90 THEN 'pending_configuration' ELSE 'cancelled' END
                   ELSE CASE WHEN pick < 85 THEN 'expired' ELSE 'cancelled' END END AS status,
              CASE WHEN type = 'code-signing' THEN ''
                   ELSE (${array(SUBS)})[id % 5 + 1] || '.' || (${array(WORDS)})[(id * 7) % 20 + 1] || '-' || id || '.' || (${array(TLDS)})[id % 6 + 1]
              END AS domain,
              CASE WHEN type = 'code-signing' THEN 0 ELSE 1 END AS auto,
              to_char(at + interval '365 days', 'YYYY-MM-DD') AS purchase_end,
              to_timestamp($2::bigint / 1000.0) AT TIME ZONE 'UTC' + (1 + id % 180) * interval '1 day' AS reissue_at
         FROM p`,
      [start, now, span, count]
    )
    await c.query(`INSERT INTO orders (id, order_number, reseller_id, product_id, domain, period_months, base_price_cents,
        san_total_cents, discount_cents, total_cents, status, payment_status, auto_reissue, purchase_end_date,
        next_reissue_at, created_at, updated_at)
      SELECT id, 'ORD-' || year || '-' || lpad(id::text, 6, '0'), ${Number(resellerId)}, product_id, domain, 12, total,
             0, 0, total, status, CASE WHEN status = 'cancelled' THEN 'refunded' ELSE 'paid' END, auto, purchase_end,
             CASE WHEN auto = 1 AND status = 'completed' AND reissue_at < at + interval '365 days'
                  THEN to_char(reissue_at, 'YYYY-MM-DD') END,
             ts, ts
        FROM gen ORDER BY id`)
    await c.query(`INSERT INTO invoices (id, invoice_number, order_id, reseller_id, total_cents, status, due_date,
        created_at, paid_at, cancelled_at)
      SELECT id, 'INV-' || year || '-' || lpad(id::text, 6, '0'), id, ${Number(resellerId)}, total,
             CASE WHEN status = 'cancelled' THEN 'cancelled' ELSE 'paid' END, day, ts, ts,
             CASE WHEN status = 'cancelled' THEN ts END
        FROM gen ORDER BY id`)
    // A top-up, the order's debit, then the refund of a cancelled order or another top-up; the
    // balance after each is the running sum, in the order the rows are numbered.
    await c.query(
      `INSERT INTO credit_transactions (reseller_id, amount_cents, type, description, balance_after_cents, order_id, created_at)
       SELECT $1, amount, type, description, $2::bigint + SUM(amount) OVER (ORDER BY id, seq), order_id, ts
         FROM (
           SELECT id, 1 AS seq, total + 1000 AS amount, 'credit' AS type, 'Credit top-up' AS description,
                  NULL::bigint AS order_id, ts FROM gen
           UNION ALL
           SELECT id, 2, -total, 'debit', 'Order ORD-' || year || '-' || lpad(id::text, 6, '0'), id, ts FROM gen
           UNION ALL
           SELECT id, 3, CASE WHEN status = 'cancelled' THEN total ELSE 500 END, 'credit',
                  CASE WHEN status = 'cancelled' THEN 'Refund for cancelled order ORD-' || year || '-' || lpad(id::text, 6, '0')
                       ELSE 'Credit top-up' END,
                  CASE WHEN status = 'cancelled' THEN id END, ts FROM gen
         ) x
        ORDER BY id, seq`,
      [resellerId, balance0]
    )
    await c.query(
      `UPDATE resellers SET credit_balance_cents = $2::bigint
         + (SELECT COALESCE(SUM(total + 1000 - total + CASE WHEN status = 'cancelled' THEN total ELSE 500 END), 0) FROM gen)
        WHERE id = $1`,
      [resellerId, balance0]
    )
    // What the triggers keep, from the rows (the same statements the migrations backfill with).
    await c.query(`DELETE FROM order_tallies;
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
      INSERT INTO cache_generations VALUES ('reseller:${Number(resellerId)}', 1)
        ON CONFLICT (scope) DO UPDATE SET gen = cache_generations.gen + 1;`)
    for (const t of ['orders', 'invoices', 'credit_transactions']) await c.query(`ALTER TABLE ${t} ENABLE TRIGGER USER`)
    for (const t of ['orders', 'invoices', 'credit_transactions'])
      await c.query(`SELECT setval(pg_get_serial_sequence('${t}', 'id'), (SELECT MAX(id) FROM ${t}) + 1, false)`)
    await c.query('COMMIT')
    await c.query('VACUUM ANALYZE')
  })
}

/** Balance, and orders with their total, of reseller `id`. */
export async function postgresBalance(url, id) {
  return withClient(url, async (c) => {
    const b = await c.query('SELECT credit_balance_cents AS b FROM resellers WHERE id = $1', [id])
    const o = await c.query('SELECT COUNT(*) AS n, COALESCE(SUM(total_cents), 0) AS t FROM orders')
    return { balance: Number(b.rows[0].b), orders: { n: Number(o.rows[0].n), t: Number(o.rows[0].t) } }
  })
}

/**
 * The books, checked as store.mjs's `auditStore` checks them: balance equals the ledger sum,
 * every order one invoice, every paid order one debit of its total, a refunded one one refund.
 */
export async function auditPostgres(url) {
  return withClient(url, async (c) => {
    const bad = []
    const books =
      await c.query(`SELECT r.id, r.credit_balance_cents AS balance, COALESCE(SUM(t.amount_cents), 0) AS ledger
        FROM resellers r LEFT JOIN credit_transactions t ON t.reseller_id = r.id GROUP BY r.id`)
    for (const r of books.rows)
      if (Number(r.balance) !== Number(r.ledger))
        bad.push(`reseller ${r.id}: balance ${r.balance} != ledger sum ${r.ledger}`)
    const orders = await c.query(`SELECT o.id, o.total_cents AS total, o.payment_status AS pay,
        COALESCE(i.n, 0) AS invoices, COALESCE(d.n, 0) AS debits, COALESCE(d.sum, 0) AS debited, COALESCE(f.n, 0) AS refunds
        FROM orders o
        LEFT JOIN (SELECT order_id, COUNT(*) AS n FROM invoices GROUP BY order_id) i ON i.order_id = o.id
        LEFT JOIN (SELECT order_id, COUNT(*) AS n, SUM(-amount_cents) AS sum FROM credit_transactions
                    WHERE type = 'debit' GROUP BY order_id) d ON d.order_id = o.id
        LEFT JOIN (SELECT order_id, COUNT(*) AS n FROM credit_transactions WHERE type = 'credit' AND order_id IS NOT NULL
                    GROUP BY order_id) f ON f.order_id = o.id`)
    for (const o of orders.rows) {
      const total = Number(o.total)
      if (Number(o.invoices) !== 1) bad.push(`order ${o.id}: ${o.invoices} invoices`)
      const paid = o.pay !== 'unpaid' && total > 0
      if (Number(o.debits) !== (paid ? 1 : 0)) bad.push(`order ${o.id}: ${o.debits} debits`)
      if (paid && Number(o.debited) !== total) bad.push(`order ${o.id}: debited ${o.debited}, total ${total}`)
      if (Number(o.refunds) !== (o.pay === 'refunded' && total > 0 ? 1 : 0))
        bad.push(`order ${o.id}: ${o.refunds} refunds`)
    }
    return { violations: bad, orders: orders.rows.length }
  })
}
