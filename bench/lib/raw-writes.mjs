// The write baseline: the storage work of one POST /orders without CertDesk around it. The same
// rows with the same values (the order, the balance update, its ledger row, the invoice, the
// order.created and order.paid events), written by raw better-sqlite3 in one BEGIN IMMEDIATE
// transaction on a store made by CertDesk's own migrations, so every trigger CertDesk's writes
// fire fires here too (tallies, tallies per day, the domain search index, the cache
// generations, the order versions), with the same PRAGMAs (WAL, foreign keys on,
// synchronous=NORMAL, busy_timeout) and statements prepared once. The answer is the same JSON
// CertDesk sends, built from the values written. What it leaves out is CertDesk itself: the
// Host and key checks, validation, pricing and the framework.
//   node raw-writes.mjs <dataDir> <resellerId> serve     a bare node:http server doing it per POST
//   node raw-writes.mjs <dataDir> <resellerId> shared    the same, sharing COMMITs as CertDesk's
//     SQLite engine does: POSTs that arrive together (at most 32, within 20 ms) write in one
//     transaction, each in a savepoint, and are answered after its COMMIT at the end of the
//     first event-loop turn in which no POST joined
//   node raw-writes.mjs <dataDir> <resellerId> loop N    N transactions in-process, prints tx/s
import http from 'node:http'
import { join } from 'node:path'
import { Database, DB_FILE } from './store.mjs'

const [dataDir, resellerArg, mode, countArg] = process.argv.slice(2)
const resellerId = Number(resellerArg)
const db = new Database(join(dataDir, DB_FILE))
db.pragma('journal_mode = WAL')
db.pragma('foreign_keys = ON')
db.pragma('busy_timeout = 5000')
db.pragma('synchronous = NORMAL')

const price = db
  .prepare('SELECT price_cents AS p FROM product_prices WHERE group_id = 1 AND product_id = 2 AND years = 1')
  .get().p
const productName = db.prepare('SELECT name FROM products WHERE id = 2').pluck().get()
const nextOrder = db.prepare('SELECT COALESCE(MAX(id), 0) + 1 AS id FROM orders')
const nextInvoice = db.prepare('SELECT COALESCE(MAX(id), 0) + 1 AS id FROM invoices')
const insOrder = db.prepare(
  `INSERT INTO orders (id, order_number, reseller_id, product_id, domain, period_months, san_count,
     san_wildcard_count, contact_email, base_price_cents, san_total_cents, discount_cents, total_cents,
     status, payment_status, auto_reissue, purchase_end_date, next_reissue_at, created_at, updated_at)
   VALUES (?, ?, ?, 2, ?, 12, 0, 0, NULL, ?, 0, 0, ?, 'pending', 'paid', 1, ?, ?, ?, ?)`
)
const debit = db.prepare(
  `UPDATE resellers SET credit_balance_cents = credit_balance_cents + ?
   WHERE id = ? AND credit_balance_cents + ? >= 0 RETURNING credit_balance_cents AS balance`
)
const insTx = db.prepare(
  `INSERT INTO credit_transactions (reseller_id, amount_cents, type, description, balance_after_cents, order_id, created_at)
   VALUES (?, ?, 'debit', ?, ?, ?, ?)`
)
const insInvoice = db.prepare(
  `INSERT INTO invoices (id, invoice_number, order_id, reseller_id, total_cents, status, due_date, created_at, paid_at)
   VALUES (?, ?, ?, ?, ?, 'paid', ?, ?, ?)`
)
const insEvent = db.prepare(
  'INSERT INTO events (reseller_id, order_id, type, message, data, created_at) VALUES (?, ?, ?, ?, ?, ?)'
)

const place = db.transaction((domain) => {
  const now = new Date()
  const ts = now.toISOString().slice(0, 19).replace('T', ' ')
  const day = ts.slice(0, 10)
  const end = `${Number(day.slice(0, 4)) + 1}${day.slice(4)}`
  const id = nextOrder.get().id
  const number = `ORD-${day.slice(0, 4)}-${String(id).padStart(6, '0')}`
  insOrder.run(id, number, resellerId, domain, price, price, end, day, ts, ts)
  const b = debit.get(-price, resellerId, -price)
  if (!b) throw new Error('insufficient credit')
  insTx.run(resellerId, -price, `Order ${number}: ${productName} for ${domain}, 1 year(s)`, b.balance, id, ts)
  const inv = nextInvoice.get().id
  const invoice = `INV-${day.slice(0, 4)}-${String(inv).padStart(6, '0')}`
  insInvoice.run(inv, invoice, id, resellerId, price, day, ts, ts)
  insEvent.run(
    resellerId,
    id,
    'order.created',
    `Order ${number} created for ${domain}`,
    JSON.stringify({ product_id: 2, total_cents: price }),
    ts
  )
  insEvent.run(
    resellerId,
    id,
    'order.paid',
    `Order ${number} paid from credit`,
    JSON.stringify({ amount_cents: price }),
    ts
  )
  return { id, number, invoice, day, end, total: price, balance: b.balance }
})

if (mode === 'loop') {
  const n = Number(countArg)
  const t = process.hrtime.bigint()
  for (let i = 0; i < n; i++) place.immediate(`loop-${i}.example.com`)
  const s = Number(process.hrtime.bigint() - t) / 1e9
  process.stdout.write(`${JSON.stringify({ transactions: n, seconds: s, perSecond: n / s })}\n`)
  db.close()
} else {
  const shared = mode === 'shared'
  const begin = db.prepare('BEGIN IMMEDIATE')
  const commit = db.prepare('COMMIT')
  /** Answers waiting for the open transaction's COMMIT. */
  let waiting = null
  let began = 0
  const commitOpen = () => {
    const answers = waiting
    waiting = null
    commit.run()
    for (const send of answers) send()
  }
  const atTurnEnd = (answers, counted) => {
    if (waiting !== answers) return
    if (answers.length > counted && performance.now() - began < 20)
      return void setImmediate(() => atTurnEnd(answers, answers.length))
    commitOpen()
  }
  const placeShared = (domain) => {
    if (waiting === null) {
      begin.run()
      waiting = []
      began = performance.now()
      const answers = waiting
      setImmediate(() => atTurnEnd(answers, 1))
    }
    // Inside an open transaction better-sqlite3 runs `place` in a savepoint of its own.
    return place(domain)
  }
  const server = http.createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString())
      const o = shared ? placeShared(body.domain) : place.immediate(body.domain)
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
      const send = () => res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(out)
      if (!shared) return send()
      waiting.push(send)
      if (waiting.length >= 32 || performance.now() - began >= 20) commitOpen()
    })
  })
  server.listen(0, '127.0.0.1', () =>
    process.stdout.write(`raw write server listening on http://127.0.0.1:${server.address().port}\n`)
  )
  process.on('SIGTERM', () => server.close(() => process.exit(0)))
}
