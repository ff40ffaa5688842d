// The race for a reseller's last dollars, from the outside: two `certdesk serve` processes on one
// book (two nodes of a team on PostgreSQL, two processes on one SQLite file) take 40 orders at
// once, 20 each, for a reseller whose credit covers 10 of them. Exactly 10 may be paid, the
// other 30 must be refused with 402, and the balance must end at what is left, equal to its
// ledger. On PostgreSQL the two nodes' transactions meet only in the database (each node queues
// its own), so this is SERIALIZABLE's check across nodes (docs/decisions.md, "The store").
import { makeClient } from '../bench/lib/http-client.mjs'
import { admin, makeReseller } from '../bench/lib/store.mjs'

const RACERS = 40
const AFFORDABLE = 10

export async function lastDollarsRace({ book, serve, check, secret }) {
  const r = makeReseller(book.dir, book.env, 'Race Hosting')
  secret(r.key, 'the race API key')
  const nodes = [await serve(book.dir, book.env), await serve(book.dir, book.env)]
  try {
    const clients = nodes.map((n) => makeClient(n.url, { sockets: RACERS / nodes.length }))
    const product = JSON.parse(
      (await clients[0].request({ path: '/products/2', headers: { 'x-api-key': r.key } })).text
    ).product
    const priceCents = Math.round(product.pricing['1'] * 100)
    // Ten orders and half of another: the last dollars.
    const credit = AFFORDABLE * priceCents + Math.floor(priceCents / 2)
    admin(book.dir, ['credit', 'add', '--reseller', String(r.id), '--amount', (credit / 100).toFixed(2)], book.env)
    const answers = await Promise.all(
      Array.from({ length: RACERS }, (_, i) =>
        clients[i % clients.length].request({
          method: 'POST',
          path: '/orders',
          headers: { 'x-api-key': r.key, 'content-type': 'application/json' },
          body: JSON.stringify({ product_id: 2, domain: `race-${i}.example.com`, period: 12 })
        })
      )
    )
    for (const c of clients) c.close()
    const byStatus = {}
    for (const a of answers) byStatus[a.status ?? a.error] = (byStatus[a.status ?? a.error] ?? 0) + 1
    const paid = answers.filter((a) => a.status === 200).length
    const refused = answers.filter((a) => a.status === 402 && /insufficient credit/.test(a.text)).length
    const balance = await book.balance(r.id)
    const orders = await book.orderCount(r.id)
    const audit = await book.audit()
    const problems = [
      paid !== AFFORDABLE ? `${paid} orders paid where the credit covers ${AFFORDABLE}` : '',
      refused !== RACERS - AFFORDABLE
        ? `${refused} refused with 402, answers by status ${JSON.stringify(byStatus)}`
        : '',
      orders !== paid ? `${orders} orders in the store for ${paid} paid answers` : '',
      balance !== credit - paid * priceCents ? `balance ${balance} cents after ${paid} orders from ${credit}` : '',
      balance < 0 ? `the balance went below zero: ${balance} cents` : '',
      ...audit.violations.slice(0, 3)
    ].filter(Boolean)
    check(
      `[${book.engine}] ${RACERS} orders race through two servers for credit that covers ${AFFORDABLE}: none overspends`,
      problems.length === 0,
      problems.length ? problems.join('; ') : `${paid} paid, ${refused} refused with 402, balance = ledger`
    )
  } finally {
    for (const n of nodes) await n.stop()
  }
}
