/**
 * Renew everything due: reissue each certificate that ends within --days while its paid
 * subscription goes on, and list those whose subscription ends with it (they need a new order).
 *
 *   CERTDESK_API_KEY=cdk_… npx tsx client/examples/renew-due.mts --days 14 [--dry-run yes]
 *
 * A reissue reuses the order's CSR; when its validations are still fresh the new certificate is
 * issued at once, otherwise the order waits for validation again. An order reissued too often
 * answers 429 with Retry-After: it is reported and left for the next run.
 */
import { ok, retryAfter, status, type Schema } from '../index'
import { connect, options } from './args'

const opt = options(['days', 'dry-run'])
const days = Number(opt.days ?? 14)
const horizon = new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10)
const api = connect()

const completed: Schema<'Order'>[] = []
for (let offset = 0; ;) {
  const page = await ok(api.GET('/orders', { params: { query: { status: 'completed', limit: 100, offset } } }))
  completed.push(...page.orders)
  offset += page.pagination.limit
  if (offset >= page.pagination.total) break
}

// ACME subscriptions renew through the customer's ACME client, not here.
const due = completed.filter((o) => !o.acme && o.cert_valid_till !== null && o.cert_valid_till <= horizon)
let failed = 0
for (const o of due) {
  if (o.purchase_end_date <= (o.cert_valid_till as string)) {
    console.log(`${o.order_number} ${o.domain}: the subscription ends ${o.purchase_end_date}; place a new order`)
    continue
  }
  if (opt['dry-run']) {
    console.log(`${o.order_number} ${o.domain}: would reissue (ends ${o.cert_valid_till})`)
    continue
  }
  const res = await api.POST('/ssl/reissue', { body: { order_id: o.order_id } })
  switch (status('reissueCertificate', res.response)) {
    case 200:
      console.log(
        res.data?.certificate_issued
          ? `${o.order_number} ${o.domain}: reissued, valid till ${res.data.valid_till}`
          : `${o.order_number} ${o.domain}: reissue waits for validation (${res.data?.status})`
      )
      break
    case 429:
      console.log(`${o.order_number} ${o.domain}: reissued too often; retry in ${retryAfter(res.response)} seconds`)
      failed += 1
      break
    default:
      console.log(`${o.order_number} ${o.domain}: not reissued (${res.response.status}): ${res.error?.error}`)
      failed += 1
  }
}
console.log(`${due.length} due within ${days} days, ${failed} not reissued`)
process.exit(failed > 0 ? 1 : 0)
