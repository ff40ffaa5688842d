import { useEffect } from 'react'
import { useSearch } from 'wouter'
import { usd, years } from '../lib/format'
import { warrantyText } from '../lib/prices'
import { useReseller, useStore } from '../store'
import { setQuery } from '../routes'
import { Can, ErrorBox } from '../ui'
import { DomainField } from './domain-field'

export function NewOrder(): React.JSX.Element {
  const draft = useStore((s) => s.draft)
  const quote = useStore((s) => s.quote)
  const quoteError = useStore((s) => s.quoteError)
  const submitting = useStore((s) => s.submitting)
  const submitError = useStore((s) => s.submitError)
  const products = useStore((s) => s.products)
  const loadProducts = useStore((s) => s.loadProducts)
  const setDraft = useStore((s) => s.setDraft)
  const submit = useStore((s) => s.submitOrder)
  const go = useStore((s) => s.go)
  const reseller = useReseller()
  // The product is the address's (`#/catalogue/new-order?product=2`): a reload or a pasted link keeps it.
  const wanted = Number(new URLSearchParams(useSearch()).get('product')) || null
  useEffect(() => {
    if (products.length === 0) void loadProducts()
  }, [products.length, loadProducts])
  useEffect(() => {
    if (wanted !== null && wanted !== useStore.getState().draft.productId) setDraft({ productId: wanted })
  }, [wanted, setDraft])
  const product = products.find((p) => p.id === draft.productId) ?? null
  const yearPrice = product?.prices.find((p) => p.years === draft.period / 12) ?? null
  const short = quote !== null && draft.payment === 'credit' && !quote.affordable
  return (
    <div className="screen narrow">
      <header className="screen-head">
        <h1>New order</h1>
      </header>
      <Can m="createOrder" otherwise={<p className="muted">Placing orders needs the operator or owner role.</p>}>
        <form
          className="card form"
          onSubmit={(e) => {
            e.preventDefault()
            void submit().then((o) => o && go({ name: 'order', id: o.id }))
          }}
        >
          <label>
            Product
            <select
              aria-label="Product"
              value={draft.productId ?? ''}
              onChange={(e) => {
                const productId = e.target.value ? Number(e.target.value) : null
                setDraft({ productId })
                setQuery({ product: productId ?? undefined }, { replace: true })
              }}
            >
              <option value="">Choose a product…</option>
              {products.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.brand} {p.name} ({p.validationType.toUpperCase()})
                </option>
              ))}
            </select>
          </label>
          {product?.type !== 'code-signing' ? <DomainField product={product} products={products} /> : null}
          {product?.acme ? (
            <label>
              Contact email{product.acmeType === 'ais' ? '' : ' (optional)'}
              <input
                name="contact-email"
                type="email"
                placeholder="certificates@example.com"
                value={draft.contactEmail}
                onChange={(e) => setDraft({ contactEmail: e.target.value })}
                autoComplete="email"
              />
            </label>
          ) : null}
          <label>
            Period
            <select
              aria-label="Period"
              value={draft.period}
              onChange={(e) => setDraft({ period: Number(e.target.value) })}
            >
              {Array.from({ length: product?.maxYears ?? 1 }, (_, i) => (i + 1) * 12).map((m) => (
                <option key={m} value={m}>
                  {years(m)}
                </option>
              ))}
            </select>
          </label>
          {product?.sanEnabled ? (
            <div className="row">
              <label>
                Additional SANs
                <input
                  type="number"
                  min={0}
                  max={product.maxSans}
                  value={draft.sanCount}
                  onChange={(e) => setDraft({ sanCount: Number(e.target.value) })}
                />
              </label>
              {product.wildcardSanEnabled ? (
                <label>
                  Wildcard SANs
                  <input
                    type="number"
                    min={0}
                    max={product.maxSans}
                    value={draft.sanWildcardCount}
                    onChange={(e) => setDraft({ sanWildcardCount: Number(e.target.value) })}
                  />
                </label>
              ) : null}
            </div>
          ) : null}
          <fieldset className="radio-row">
            <legend>Payment</legend>
            <label>
              <input
                type="radio"
                name="payment"
                checked={draft.payment === 'credit'}
                onChange={() => setDraft({ payment: 'credit' })}
              />{' '}
              Pay from credit
            </label>
            <label>
              <input
                type="radio"
                name="payment"
                checked={draft.payment === 'invoice'}
                onChange={() => setDraft({ payment: 'invoice' })}
              />{' '}
              On invoice (due in 14 days)
            </label>
          </fieldset>
          <div className="quote" aria-live="polite">
            {quote ? (
              <table>
                <tbody>
                  <tr>
                    <td>Base price ({years(quote.periodMonths)})</td>
                    <td className="num">{usd(quote.basePrice)}</td>
                  </tr>
                  {product && product.includedSans > 0 ? (
                    <tr>
                      <td colSpan={2} className="muted small" data-testid="included-sans">
                        The base price includes {product.includedSans} additional names (SANs) besides the domain.
                      </td>
                    </tr>
                  ) : null}
                  {product?.sanEnabled ? (
                    <tr>
                      <td data-testid="san-line">
                        Additional SANs: {draft.sanCount} × {usd(yearPrice?.sanPrice ?? 0)}
                        {product.wildcardSanEnabled
                          ? ` + ${draft.sanWildcardCount} wildcard × ${usd(yearPrice?.wildcardSanPrice ?? 0)}`
                          : ''}{' '}
                        for {years(quote.periodMonths)}
                        {quote.periodMonths > 12 && yearPrice
                          ? ` (${usd(Math.round(yearPrice.sanPrice / (quote.periodMonths / 12)))} per name and year)`
                          : ''}
                      </td>
                      <td className="num">{usd(quote.sanTotal)}</td>
                    </tr>
                  ) : null}
                  {quote.discountAmount > 0 || quote.discountRate > 0 ? (
                    <tr data-testid="discount-line">
                      <td>Your reseller discount ({quote.discountRate}%)</td>
                      <td className="num">−{usd(quote.discountAmount)}</td>
                    </tr>
                  ) : null}
                  <tr className="total">
                    <td>You pay</td>
                    <td className="num" data-testid="quote-total">
                      {usd(quote.total)}
                    </td>
                  </tr>
                  <tr>
                    <td className="muted">Credit balance</td>
                    <td className="num muted">{usd(quote.balance)}</td>
                  </tr>
                  {product ? (
                    <tr>
                      <td className="muted">Warranty</td>
                      <td className="num muted" data-testid="quote-warranty">
                        {warrantyText(product.warranty)}
                      </td>
                    </tr>
                  ) : null}
                </tbody>
              </table>
            ) : (
              <p className="muted">{quoteError ?? 'Choose a product and a domain to see the price.'}</p>
            )}
            {quote && quoteError ? <p className="warn">{quoteError}</p> : null}
          </div>
          {short ? (
            <p className="warn" role="alert">
              The credit balance of {reseller?.name} ({usd(quote.balance)}) does not cover {usd(quote.total)}. Record a
              top-up or order on invoice.
            </p>
          ) : null}
          <ErrorBox text={submitError} />
          <div className="actions">
            <button
              className="btn primary"
              type="submit"
              disabled={submitting || !quote || quoteError !== null || short}
            >
              {submitting ? 'Placing the order…' : `Place order${quote ? ` for ${usd(quote.total)}` : ''}`}
            </button>
          </div>
        </form>
      </Can>
    </div>
  )
}
