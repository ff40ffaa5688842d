/**
 * One invoice as a document: who it is from (the admin's business, from Settings), who it is for
 * (the reseller's account details), what it is for (the order's lines: price for the period,
 * SANs, discount) and its dates and status. It prints
 * on its own: the print stylesheet (styles.css, `@media print`) leaves out the app around it.
 */
import { useEffect } from 'react'
import { usd, years } from '../lib/format'
import { href } from '../routes'
import { useReseller, useStore } from '../store'
import { Badge, DomainName, ErrorBox } from '../ui'
import { NotFound } from './not-found'

export function InvoicePage({ id }: { id: number }): React.JSX.Element {
  const page = useStore((s) => (s.invoicePage?.id === id ? s.invoicePage : null))
  const load = useStore((s) => s.loadInvoice)
  const resellerId = useStore((s) => s.resellerId)
  const reseller = useReseller()
  const settings = useStore((s) => s.settings)
  const seller = { name: settings?.sellerName ?? '', address: settings?.sellerAddress ?? '' }
  useEffect(() => {
    if (resellerId !== null) void load(id)
  }, [id, resellerId, load])
  if (page?.error) return /not found/i.test(page.error) ? <NotFound what="invoice" /> : <ErrorBox text={page.error} />
  if (!page?.invoice || !page.order || !reseller) return <p className="muted">Loading the invoice…</p>
  const { invoice: inv, order } = page
  return (
    <div className="screen narrow invoice-screen">
      <header className="screen-head no-print">
        <a className="muted small" href={href({ name: 'billing' }, { tab: 'invoices' })}>
          ← Invoices
        </a>
        <button className="btn primary" type="button" onClick={() => window.print()}>
          Print invoice
        </button>
      </header>
      <article className="card invoice-doc" data-testid="invoice" aria-labelledby="invoice-title">
        <div className="invoice-top">
          <div>
            <h1 id="invoice-title">Invoice {inv.invoiceNumber}</h1>
            <Badge status={inv.status} />
          </div>
          <dl className="facts compact">
            <dt>Issued</dt>
            <dd>{inv.createdAt.slice(0, 10)}</dd>
            <dt>Due</dt>
            <dd>{inv.dueDate}</dd>
            {inv.paidAt ? (
              <>
                <dt>Paid</dt>
                <dd>{inv.paidAt.slice(0, 10)}</dd>
              </>
            ) : null}
            {inv.cancelledAt ? (
              <>
                <dt>Cancelled</dt>
                <dd>{inv.cancelledAt.slice(0, 10)}</dd>
              </>
            ) : null}
            <dt>Currency</dt>
            <dd>{inv.currency}</dd>
          </dl>
        </div>
        <div className="invoice-parties">
          <section aria-labelledby="seller">
            <h2 id="seller">From</h2>
            {seller.name ? (
              <address data-testid="invoice-seller">
                <span className="strong">{seller.name}</span>
                {seller.address.split(/\r?\n/).map((line, i) => (
                  <span key={i}>
                    <br />
                    {line}
                  </span>
                ))}
              </address>
            ) : (
              <p className="muted no-print" data-testid="invoice-seller-missing">
                Your business name and address print here once they are set in{' '}
                <a href={href({ name: 'settings' })}>Settings, Invoices</a>.
              </p>
            )}
          </section>
          <section aria-labelledby="bill-to">
            <h2 id="bill-to">Billed to</h2>
            <address data-testid="invoice-reseller">
              <span className="strong">{reseller.company || reseller.name}</span>
              <br />
              {reseller.company ? (
                <>
                  {reseller.name}
                  <br />
                </>
              ) : null}
              {reseller.email}
              <br />
              Reseller account {reseller.id}
            </address>
          </section>
        </div>
        <table className="table invoice-lines">
          <caption className="sr-only">Invoice lines</caption>
          <thead>
            <tr>
              <th scope="col">Description</th>
              <th scope="col" className="num">
                Amount ({inv.currency})
              </th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <td>
                {order.brand} {order.productName}, {years(order.periodMonths)}
                {order.domain ? (
                  <>
                    {' for '}
                    <DomainName name={order.domain} full />
                  </>
                ) : null}{' '}
                (order {order.orderNumber})
              </td>
              <td className="num">{usd(order.basePrice)}</td>
            </tr>
            {order.sanTotal > 0 ? (
              <tr>
                <td>
                  Additional names: {order.sanCount} SAN{order.sanCount === 1 ? '' : 's'}
                  {order.sanWildcardCount > 0 ? `, ${order.sanWildcardCount} wildcard` : ''}
                </td>
                <td className="num">{usd(order.sanTotal)}</td>
              </tr>
            ) : null}
            {order.discountAmount > 0 ? (
              <tr>
                <td>
                  Reseller discount (
                  {Math.round((order.discountAmount * 10_000) / (order.basePrice + order.sanTotal)) / 100}%)
                </td>
                <td className="num">−{usd(order.discountAmount)}</td>
              </tr>
            ) : null}
          </tbody>
          <tfoot>
            <tr className="total">
              <th scope="row">Total</th>
              <td className="num" data-testid="invoice-total">
                {usd(inv.total)} {inv.currency}
              </td>
            </tr>
          </tfoot>
        </table>
      </article>
    </div>
  )
}
