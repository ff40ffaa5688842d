/**
 * Place an order and follow it to its certificate:
 *
 *   CERTDESK_API_KEY=cdk_… npx tsx client/examples/place-order.mts \
 *     --domain shop.example.com --csr shop.csr --webroot /var/www/html --out ./certs
 *
 * It orders the product (PositiveSSL unless --product says otherwise) paid from credit,
 * submits the CSR for http validation, puts each validation file under the web root, polls
 * until the certificate is issued and writes it and its CA bundle to --out. Running it again
 * for the same domain and CSR places no second order: the Idempotency-Key is made from them.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { ok, replayed, status, type Schema } from '../index'
import { connect, options, sleep } from './args'

const opt = options(['domain', 'csr', 'webroot', 'out', 'product', 'period', 'wait'])
if (!opt.domain || !opt.csr || !opt.webroot || !opt.out) {
  process.stderr.write(
    'usage: place-order.ts --domain D --csr FILE --webroot DIR --out DIR [--product ID] [--period MONTHS]\n'
  )
  process.exit(64)
}
const domain = opt.domain
const csr = readFileSync(opt.csr, 'utf8')
const api = connect()

// 1. Order, paid from credit. The key makes a rerun get the same order back instead of a new one.
const idempotencyKey = `place-${createHash('sha256').update(`${domain}\n${csr}`).digest('hex').slice(0, 32)}`
const placed = await api.POST('/orders', {
  params: { header: { 'idempotency-key': idempotencyKey } },
  body: {
    product_id: Number(opt.product ?? 2),
    domain,
    period: Number(opt.period ?? 12) as Schema<'CreateOrderRequest'>['period']
  }
})
switch (status('createOrder', placed.response)) {
  case 200:
    break
  case 402:
    process.stderr.write(`not ordered: ${placed.error?.error}\n`)
    process.exit(2)
  // falls through: exit never returns
  default:
    process.stderr.write(`not ordered (${placed.response.status}): ${placed.error?.error}\n`)
    process.exit(1)
}
const order = placed.data
if (!order || order.fulfillment !== 'certificate') throw new Error('expected a certificate order')
console.log(
  replayed(placed.response)
    ? `order ${order.order_number} was placed before; following it`
    : `ordered ${order.order_number}: ${order.total} USD, balance now ${order.new_balance} USD`
)

// 2. The CSR and http validation. 409: configured by an earlier run; its status says what is left.
const configured = await api.POST('/ssl/configure', {
  body: { order_id: order.order_id, csr, dcv_method: 'http' }
})
if (configured.error && configured.response.status !== 409) {
  process.stderr.write(`could not configure ${order.order_number}: ${configured.error.error}\n`)
  process.exit(1)
}

// 3. Publish each validation file, then poll until every name is valid and the certificate is issued.
const deadline = Date.now() + Number(opt.wait ?? 300) * 1000
for (;;) {
  const ssl = await ok(api.GET('/ssl/{order_id}', { params: { path: { order_id: order.order_id } } }))
  if (ssl.certificate_issued) break
  for (const v of ssl.validation) {
    const i = v.instructions
    if (v.status !== 'pending' || i.method !== 'http' || !i.file_name || i.file_content === undefined) continue
    const file = join(opt.webroot, '.well-known', 'pki-validation', i.file_name)
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, i.file_content)
    console.log(`published ${i.url}`)
  }
  if (ssl.validation.some((v) => v.status === 'failed')) {
    process.stderr.write(`validation failed: ${ssl.validation.map((v) => `${v.name}: ${v.detail}`).join('; ')}\n`)
    process.exit(1)
  }
  if (Date.now() > deadline) {
    process.stderr.write(`still ${ssl.status} after --wait seconds; run again to go on\n`)
    process.exit(3)
  }
  await sleep(1000)
}

// 4. The certificate and its chain. The private key never left the machine that made the CSR.
const { certificate } = await ok(
  api.GET('/certificate/{order_id}/download', { params: { path: { order_id: order.order_id } } })
)
mkdirSync(opt.out, { recursive: true })
writeFileSync(join(opt.out, `${domain}.crt`), certificate.certificate_pem)
writeFileSync(join(opt.out, `${domain}.chain.crt`), certificate.ca_bundle)
console.log(
  `issued ${certificate.serial_number}, valid till ${certificate.valid_till}: ${join(opt.out, `${domain}.crt`)}`
)
