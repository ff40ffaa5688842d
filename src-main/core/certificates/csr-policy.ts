/**
 * What a CSR may ask of an order: the key and signature policy of csr.ts at submission, the
 * names the product and the paid SANs cover, and the subject each validation level carries.
 */
import { type Catalogue, type Product } from '../billing/catalogue'
import { assertAcceptableCsr, decodeCsr, type DecodedCsr } from './csr'
import { requestedNames } from './csr-names'
import { baseDomain, isWildcard } from '../dcv/domains'
import { invalid, notFound } from '../errors'
import type { Order } from '../orders/orders'

/** The product of an order; an ACME subscription takes no CSR (its client brings its own). */
export async function productFor(catalogue: Catalogue, order: Order): Promise<Product> {
  const p = (await catalogue.allProducts()).find((x) => x.id === order.productId)
  if (!p) throw notFound(`product ${order.productId} not found`)
  if (p.fulfillment === 'acme_subscription') {
    throw invalid(
      `order ${order.orderNumber} is an ACME subscription: its certificates come from your ACME client, not from a CSR`
    )
  }
  return p
}

/** Decodes a CSR and refuses one the key and signature policy of its profile does not accept. */
export async function acceptCsr(pem: string, product: Product): Promise<DecodedCsr> {
  const csr = await decodeCsr(pem)
  assertAcceptableCsr(csr, product.type === 'code-signing' ? 'code-signing' : 'tls')
  return csr
}

/**
 * The names a CSR may carry for this order: the order domain (required) and its www form on
 * every product; the bare domain on wildcard products; on multi-domain products as many more
 * names as were paid for (included + san_count), wildcards only up to san_wildcard_count.
 */
export function namesFor(order: Order, product: Product, csr: DecodedCsr): string[] {
  if (product.type === 'code-signing') {
    if (csr.dnsNames.length > 0) throw invalid('could not accept CSR: a code-signing CSR carries no DNS names')
    if (!csr.commonName) throw invalid('could not accept CSR: a code-signing CSR needs a common name (the publisher)')
    return []
  }
  // Every name is checked there and refused by name, never left out (csr.ts).
  return coveredNames(order, product, requestedNames(csr))
}

/**
 * The names a certificate of this order may carry out of `asked` (namesFor): refused with the
 * reason when the product or the paid SANs do not cover them; the order domain first.
 */
export function coveredNames(order: Order, product: Product, asked: string[]): string[] {
  if (asked.length === 0) throw invalid('could not accept CSR: it names no domain (no DNS common name, no DNS SAN)')
  const domain = order.domain
  const bare = baseDomain(domain)
  const www = (n: string): string => (n.startsWith('www.') ? n.slice(4) : `www.${n}`)
  if (!asked.includes(domain)) {
    throw invalid(`could not accept CSR: it does not name the order domain ${domain} (it names ${asked.join(', ')})`)
  }
  const free = new Set([domain, www(domain)])
  if (product.type === 'wildcard') free.add(bare)
  const extra = asked.filter((n) => !free.has(n))
  if (product.type !== 'multi-domain') {
    if (extra.length > 0) {
      throw invalid(
        `could not accept CSR: ${extra.join(', ')} ${extra.length === 1 ? 'is' : 'are'} not covered by this order (${product.name} covers ${[...free].join(', ')})`
      )
    }
  } else {
    const wild = extra.filter(isWildcard)
    const plain = extra.filter((n) => !isWildcard(n))
    if (wild.length > order.sanWildcardCount) {
      throw invalid(
        `could not accept CSR: it asks for ${wild.length} wildcard name(s) but the order paid for ${order.sanWildcardCount} wildcard SAN(s)`
      )
    }
    const plainPaid = product.includedSans + order.sanCount
    if (plain.length > plainPaid) {
      throw invalid(
        `could not accept CSR: it asks for ${plain.length} additional name(s) but the order covers ${plainPaid} (${product.includedSans} included + ${order.sanCount} bought)`
      )
    }
  }
  if (product.type !== 'wildcard' && isWildcard(domain) === false) {
    const wildOnNonWildcard = asked.filter(isWildcard)
    if (wildOnNonWildcard.length > 0 && !(product.type === 'multi-domain' && product.wildcardSanEnabled)) {
      throw invalid(`could not accept CSR: wildcard name ${wildOnNonWildcard[0]} needs a wildcard product`)
    }
  }
  // The order domain first: it becomes the subject CN.
  return [domain, ...asked.filter((n) => n !== domain)]
}

/** DV carries the CN only; OV, EV and code signing carry the organisation from the CSR. */
export function subjectFor(order: Order, product: Product, csr: DecodedCsr, names: string[]): Record<string, string> {
  const cn = names[0] ?? csr.commonName ?? ''
  if (product.validationType === 'dv' && product.type !== 'code-signing') return { CN: cn }
  const s: Record<string, string> = { CN: cn }
  if (csr.organization) s.O = csr.organization
  if (csr.locality) s.L = csr.locality
  if (csr.state) s.ST = csr.state
  if (csr.country && /^[A-Z]{2}$/i.test(csr.country)) s.C = csr.country.toUpperCase()
  if (product.type === 'code-signing' && !s.O) {
    throw invalid(`could not accept CSR: ${order.productName} needs the organisation (O) in the CSR subject`)
  }
  return s
}
