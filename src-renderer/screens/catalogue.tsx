import { useEffect } from 'react'
import type { ProductFilter, ProductType, ValidationType } from '../../src-preload/contract'
import { usd } from '../lib/format'
import { afterDiscount, warrantyText } from '../lib/prices'
import { useReseller, useStore } from '../store'
import { Can, ErrorBox } from '../ui'

const TYPES: ProductType[] = ['ssl', 'wildcard', 'multi-domain', 'code-signing']
const VALIDATIONS: ValidationType[] = ['dv', 'ov', 'ev']

export function Catalogue(): React.JSX.Element {
  const products = useStore((s) => s.products)
  const filter = useStore((s) => s.productFilter)
  const error = useStore((s) => s.productsError)
  const resellerId = useStore((s) => s.resellerId)
  const load = useStore((s) => s.loadProducts)
  const setDraft = useStore((s) => s.setDraft)
  const go = useStore((s) => s.go)
  const rate = useReseller()?.discountRate ?? 0
  useEffect(() => {
    if (resellerId !== null) void load()
  }, [resellerId, load])
  const brands = [...new Set(products.map((p) => p.brand))].sort()
  const change = (patch: ProductFilter): void => void load({ ...filter, ...patch })
  return (
    <div className="screen">
      <header className="screen-head">
        <h1>Catalogue</h1>
        <div className="filters">
          <select
            aria-label="Brand"
            value={filter.brand ?? ''}
            onChange={(e) => change({ brand: e.target.value || undefined })}
          >
            <option value="">All brands</option>
            {brands.map((b) => (
              <option key={b}>{b}</option>
            ))}
          </select>
          <select
            aria-label="Type"
            value={filter.type ?? ''}
            onChange={(e) => change({ type: (e.target.value || undefined) as ProductType })}
          >
            <option value="">All types</option>
            {TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
          <select
            aria-label="Validation"
            value={filter.validation ?? ''}
            onChange={(e) => change({ validation: (e.target.value || undefined) as ValidationType })}
          >
            <option value="">All validation levels</option>
            {VALIDATIONS.map((v) => (
              <option key={v} value={v}>
                {v.toUpperCase()}
              </option>
            ))}
          </select>
          <label className="check">
            <input
              type="checkbox"
              checked={filter.includeAcme === true}
              onChange={(e) => change({ includeAcme: e.target.checked || undefined })}
            />{' '}
            Show ACME subscriptions
          </label>
        </div>
      </header>
      <ErrorBox text={error} />
      <p className="muted small" data-testid="price-note">
        {rate > 0
          ? `Your price is your group's price less your ${rate}% reseller discount: what an order charges. SAN prices are per additional name and year, before the discount.`
          : "Your price is your group's price: what an order charges. SAN prices are per additional name and year."}
      </p>
      <table className="table">
        <thead>
          <tr>
            <th>Product</th>
            <th>Type</th>
            <th>Validation</th>
            <th className="num">List / year</th>
            <th className="num">Your price / year</th>
            <th className="num">Extra SAN / year</th>
            <th>Years</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {products.map((p) => {
            const one = p.prices.find((x) => x.years === 1) ?? p.prices[0]
            return (
              <tr key={p.id} data-product={p.name}>
                <td>
                  <div className="strong">
                    {p.name} {p.acme ? <span className="badge badge-processing">ACME subscription</span> : null}
                  </div>
                  <div className="muted small">
                    {p.brand} · <span data-testid="warranty">warranty {warrantyText(p.warranty)}</span>
                    {p.includedSans > 0 ? ` · ${p.includedSans} SANs included` : ''}
                  </div>
                </td>
                <td>{p.type}</td>
                <td>{p.validationType.toUpperCase()}</td>
                <td className="num muted strike">{one ? usd(one.listPrice) : '—'}</td>
                <td className="num" data-testid="your-price">
                  <span className="strong">{one ? usd(afterDiscount(one.price, rate)) : '—'}</span>
                  {one && rate > 0 ? (
                    <div className="muted small">
                      {usd(one.price)} − {rate}%
                    </div>
                  ) : null}
                </td>
                <td className="num">
                  {p.sanEnabled && one ? usd(one.sanPrice) : '—'}
                  {p.wildcardSanEnabled && one ? (
                    <div className="muted small">wildcard {usd(one.wildcardSanPrice)}</div>
                  ) : null}
                </td>
                <td>1–{p.maxYears}</td>
                <td>
                  <Can m="createOrder">
                    <button
                      type="button"
                      className="btn small primary"
                      aria-label={`Order ${p.name}`}
                      onClick={() => {
                        setDraft({ productId: p.id, period: 12, sanCount: 0, sanWildcardCount: 0 })
                        go({ name: 'new-order' }, { product: p.id })
                      }}
                    >
                      Order
                    </button>
                  </Can>
                </td>
              </tr>
            )
          })}
        </tbody>
      </table>
    </div>
  )
}
