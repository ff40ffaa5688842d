/**
 * A nightly report: the credit balance, what moved it in the last day, the certificates that
 * end soon and the orders still waiting for validation.
 *
 *   CERTDESK_API_KEY=cdk_… npx tsx client/examples/nightly-report.mts --days 30
 *
 * Lists are read page by page (`limit`/`offset`, `pagination.total`), so the report is whole
 * however many orders there are.
 */
import { ok, type Schema } from '../index'
import { connect, options } from './args'

const opt = options(['days', 'since'])
const days = Number(opt.days ?? 30)
// The last day by default: timestamps are UTC, `YYYY-MM-DD HH:MM:SS`, so they compare as text.
const since = opt.since ?? new Date(Date.now() - 86_400_000).toISOString().slice(0, 19).replace('T', ' ')
const api = connect()

/** Every transaction at or after `since`, newest first, page by page. */
async function transactionsSince(): Promise<Schema<'CreditTransaction'>[]> {
  const out: Schema<'CreditTransaction'>[] = []
  for (let offset = 0; ;) {
    const page = await ok(api.GET('/credits', { params: { query: { limit: 100, offset } } }))
    const recent = page.transactions.filter((t) => t.created_at >= since)
    out.push(...recent)
    offset += page.pagination.limit
    if (recent.length < page.transactions.length || offset >= page.pagination.total) return out
  }
}

/** Every order in `status`, page by page. */
async function ordersIn(state: Schema<'Order'>['status']): Promise<Schema<'Order'>[]> {
  const out: Schema<'Order'>[] = []
  for (let offset = 0; ;) {
    const page = await ok(api.GET('/orders', { params: { query: { status: state, limit: 100, offset } } }))
    out.push(...page.orders)
    offset += page.pagination.limit
    if (offset >= page.pagination.total) return out
  }
}

const balance = await ok(api.GET('/balance'))
const moved = await transactionsSince()
const expiring = await ok(api.GET('/reports/expiring', { params: { query: { days } } }))
const waiting = await ordersIn('validation_pending')

console.log(`Balance: ${balance.balance.toFixed(2)} ${balance.currency}`)
console.log(`Since ${since}: ${moved.length} transactions, ${moved.reduce((a, t) => a + t.amount, 0).toFixed(2)} USD`)
for (const t of moved) console.log(`  ${t.created_at}  ${t.amount.toFixed(2).padStart(10)}  ${t.description}`)
console.log(`Certificates ending within ${days} days: ${expiring.certificates.length}`)
for (const c of expiring.certificates)
  console.log(
    `  ${c.reference}  ${c.domain}  ends ${c.valid_till} (${c.days_left} days)` +
      (c.renewal_planned_at ? `, reissued on ${c.renewal_planned_at}` : ', no renewal planned')
  )
console.log(`Orders waiting for validation: ${waiting.length}`)
for (const o of waiting) console.log(`  ${o.order_number}  ${o.domain}  since ${o.updated_at}`)
