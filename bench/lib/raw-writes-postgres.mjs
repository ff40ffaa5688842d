// The write baseline on PostgreSQL: raw-writes.mjs's storage work of one POST /orders done with
// `pg` alone. The same rows with the same values (the order, the balance update, its ledger row,
// the invoice, the order.created and order.paid events) in one transaction of the same shape as
// CertDesk's engine runs (SERIALIZABLE, ids from the identity sequences, one transaction of a
// reseller at a time in this process as CertDesk queues them, re-run after a serialization
// failure or deadlock following the same growing random pause), on a database
// made by CertDesk's migrations, so every trigger CertDesk's writes fire fires here too; named
// prepared statements on a pool of the engine's default size. The answer is the same JSON
// CertDesk sends. What it leaves out is CertDesk itself: the Host and key checks, validation,
// pricing, the statement translation, the queue's lock across nodes, the cache's version
// readings and the framework.
//
// Two ways of sending: `sequential` (the default) awaits each statement's answer before the
// next, as pg code is written when nothing asks for more; `pipelined` sends the statements in the
// groups CertDesk's engine sends them (pg's pipeline mode: BEGIN with both ids; the order, the
// ledger row, the debit, the invoice and the events; COMMIT), the ledger row taking the balance
// by the same condition as the debit, as CertDesk's ledger does.
//   node raw-writes-postgres.mjs <url> <resellerId> [sequential|pipelined] [poolSize]
import http from 'node:http'
import pg from 'pg'

const [url, resellerArg, modeArg, poolArg] = process.argv.slice(2)
const resellerId = Number(resellerArg)
const pipelined = modeArg === 'pipelined'
// int8 and numeric as numbers, as the engine's pool reads them.
const types = {
  getTypeParser: (oid, format) => (oid === 20 || oid === 1700 ? Number : pg.types.getTypeParser(oid, format))
}
const pool = new pg.Pool({
  connectionString: url,
  max: Number(poolArg ?? 10),
  pipeline: pipelined,
  types,
  options: '-c default_transaction_isolation=serializable -c TimeZone=UTC'
})
pool.on('error', () => undefined)

const q = (name, text) => (client, values) => client.query({ name, text, values })
const nextOrder = q('next_order', `SELECT nextval(pg_get_serial_sequence('orders', 'id')) AS id`)
const nextInvoice = q('next_invoice', `SELECT nextval(pg_get_serial_sequence('invoices', 'id')) AS id`)
const insOrder = q(
  'ins_order',
  `INSERT INTO orders (id, order_number, reseller_id, product_id, domain, period_months, san_count,
     san_wildcard_count, contact_email, base_price_cents, san_total_cents, discount_cents, total_cents,
     status, payment_status, auto_reissue, purchase_end_date, next_reissue_at, created_at, updated_at)
   VALUES ($1, $2, $3, 2, $4, 12, 0, 0, NULL, $5, 0, 0, $6, 'pending', 'paid', 1, $7, $8, $9, $10)`
)
const debit = q(
  'debit',
  `UPDATE resellers SET credit_balance_cents = credit_balance_cents + $1
   WHERE id = $2 AND credit_balance_cents + $1 >= 0 RETURNING credit_balance_cents AS balance`
)
const insTx = q(
  'ins_tx',
  `INSERT INTO credit_transactions (reseller_id, amount_cents, type, description, balance_after_cents, order_id, created_at)
   VALUES ($1, $2, 'debit', $3, $4, $5, $6)`
)
const insInvoice = q(
  'ins_invoice',
  `INSERT INTO invoices (id, invoice_number, order_id, reseller_id, total_cents, status, due_date, created_at, paid_at)
   VALUES ($1, $2, $3, $4, $5, 'paid', $6, $7, $8)`
)
// The ledger row by the debit's own condition, sent beside it (pipelined).
const insTxBeside = q(
  'ins_tx_beside',
  `INSERT INTO credit_transactions (reseller_id, amount_cents, type, description, balance_after_cents, order_id, created_at)
   SELECT $1, $2, 'debit', $3, credit_balance_cents + $2, $4, $5 FROM resellers WHERE id = $1 AND credit_balance_cents + $2 >= 0
   RETURNING balance_after_cents AS balance`
)
// Both events in one statement, as CertDesk writes them.
const insEvents = q(
  'ins_events',
  `INSERT INTO events (reseller_id, order_id, type, message, data, created_at)
   VALUES ($1, $2, $3, $4, $5, $6), ($7, $8, $9, $10, $11, $12)`
)

const first = await pool.query(
  `SELECT pp.price_cents AS p, p.name FROM product_prices pp JOIN products p ON p.id = pp.product_id
    WHERE pp.group_id = 1 AND pp.product_id = 2 AND pp.years = 1`
)
const price = first.rows[0].p
const productName = first.rows[0].name

/** The same transaction, its statements sent in CertDesk's groups without waiting in between. */
async function placePipelined(domain) {
  const client = await pool.connect()
  let broken
  try {
    const now = new Date()
    const ts = now.toISOString().slice(0, 19).replace('T', ' ')
    const day = ts.slice(0, 10)
    const end = `${Number(day.slice(0, 4)) + 1}${day.slice(4)}`
    const [, o, i] = await Promise.all([
      client.query('BEGIN ISOLATION LEVEL SERIALIZABLE'),
      nextOrder(client, []),
      nextInvoice(client, [])
    ])
    const id = o.rows[0].id
    const inv = i.rows[0].id
    const number = `ORD-${day.slice(0, 4)}-${String(id).padStart(6, '0')}`
    const invoice = `INV-${day.slice(0, 4)}-${String(inv).padStart(6, '0')}`
    const created = JSON.stringify({ product_id: 2, total_cents: price })
    const paid = JSON.stringify({ amount_cents: price })
    const [, row, b] = await Promise.all([
      insOrder(client, [id, number, resellerId, domain, price, price, end, day, ts, ts]),
      insTxBeside(client, [resellerId, -price, `Order ${number}: ${productName} for ${domain}, 1 year(s)`, id, ts]),
      debit(client, [-price, resellerId]),
      insInvoice(client, [inv, invoice, id, resellerId, price, day, ts, ts]),
      insEvents(client, [
        ...[resellerId, id, 'order.created', `Order ${number} created for ${domain}`, created, ts],
        ...[resellerId, id, 'order.paid', `Order ${number} paid from credit`, paid, ts]
      ])
    ])
    if (!b.rows[0] || !row.rows[0]) throw new Error('insufficient credit')
    await client.query('COMMIT')
    return { id, number, invoice, day, end, total: price, balance: b.rows[0].balance }
  } catch (err) {
    await client.query('ROLLBACK').catch((e) => (broken = e))
    throw err
  } finally {
    client.release(broken)
  }
}

async function placeOnce(domain) {
  if (pipelined) return placePipelined(domain)
  const client = await pool.connect()
  let broken
  try {
    await client.query('BEGIN ISOLATION LEVEL SERIALIZABLE')
    const now = new Date()
    const ts = now.toISOString().slice(0, 19).replace('T', ' ')
    const day = ts.slice(0, 10)
    const end = `${Number(day.slice(0, 4)) + 1}${day.slice(4)}`
    const id = (await nextOrder(client, [])).rows[0].id
    const number = `ORD-${day.slice(0, 4)}-${String(id).padStart(6, '0')}`
    await insOrder(client, [id, number, resellerId, domain, price, price, end, day, ts, ts])
    const b = (await debit(client, [-price, resellerId])).rows[0]
    if (!b) throw new Error('insufficient credit')
    await insTx(client, [
      resellerId,
      -price,
      `Order ${number}: ${productName} for ${domain}, 1 year(s)`,
      b.balance,
      id,
      ts
    ])
    const inv = (await nextInvoice(client, [])).rows[0].id
    const invoice = `INV-${day.slice(0, 4)}-${String(inv).padStart(6, '0')}`
    await insInvoice(client, [inv, invoice, id, resellerId, price, day, ts, ts])
    const created = JSON.stringify({ product_id: 2, total_cents: price })
    const paid = JSON.stringify({ amount_cents: price })
    await insEvents(client, [
      ...[resellerId, id, 'order.created', `Order ${number} created for ${domain}`, created, ts],
      ...[resellerId, id, 'order.paid', `Order ${number} paid from credit`, paid, ts]
    ])
    await client.query('COMMIT')
    return { id, number, invoice, day, end, total: price, balance: b.balance }
  } catch (err) {
    await client.query('ROLLBACK').catch((e) => (broken = e))
    throw err
  } finally {
    client.release(broken)
  }
}

/** The reseller's queue (TxOptions.queue): one of its transactions at a time in this process. */
let queue = Promise.resolve()
function place(domain) {
  const turn = queue.then(() => placeRetrying(domain))
  queue = turn.catch(() => undefined)
  return turn
}

/** The engine's retry (core/store/postgres-engine.ts, mutex.ts `backoff`): up to 10 s. */
async function placeRetrying(domain) {
  const started = performance.now()
  for (let n = 1; ; n++) {
    try {
      return await placeOnce(domain)
    } catch (err) {
      const retry = err?.code === '40001' || err?.code === '40P01'
      if (!retry || performance.now() - started > 10_000) throw err
      const ceiling = Math.min(200, 2 * 2 ** Math.min(n - 1, 20))
      await new Promise((r) => setTimeout(r, ceiling / 2 + Math.random() * (ceiling / 2)))
    }
  }
}

const server = http.createServer((req, res) => {
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', async () => {
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString())
      const o = await place(body.domain)
      const out = JSON.stringify({
        success: true,
        message: `Order ${o.number} created and paid from credit`,
        order_id: o.id,
        order_number: o.number,
        domain: body.domain,
        base_price: o.total / 100,
        san_total: 0,
        discount_amount: 0,
        total: o.total / 100,
        status: 'pending',
        payment_status: 'paid',
        credit_used: o.total / 100,
        new_balance: o.balance / 100,
        invoice_number: o.invoice,
        auto_reissue_enabled: true,
        max_validity_days: 200,
        purchase_end_date: o.end,
        next_reissue_at: o.day,
        period: 12
      })
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(out)
    } catch (err) {
      res
        .writeHead(503, { 'content-type': 'application/json' })
        .end(JSON.stringify({ success: false, error: err.message }))
    }
  })
})
server.listen(0, '127.0.0.1', () =>
  process.stdout.write(`raw write server listening on http://127.0.0.1:${server.address().port}\n`)
)
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))))
