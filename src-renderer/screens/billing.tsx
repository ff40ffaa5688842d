import { useEffect, useState } from 'react'
import { useSearch } from 'wouter'
import type { InvoiceStatus, InvoiceView } from '../../src-preload/contract'
import type { LedgerRow } from '../../src-shared/list-records'
import { ExportButton } from '../export-tray'
import { usd } from '../lib/format'
import { useStore } from '../store'
import { href, setQuery } from '../routes'
import { Can, Badge, DomainName, ErrorBox } from '../ui'
import { VirtualList, type Column } from '../virtual-list'

function TopUp(): React.JSX.Element {
  const record = useStore((s) => s.recordTopUp)
  const [amount, setAmount] = useState('')
  const [description, setDescription] = useState('')
  const [error, setError] = useState<string | null>(null)
  return (
    <form
      className="card form inline-form"
      onSubmit={(e) => {
        e.preventDefault()
        const usdAmount = Number(amount)
        if (!/^\d+(\.\d{1,2})?$/.test(amount.trim()) || usdAmount <= 0)
          return setError('Enter a positive amount in USD, such as 250 or 99.50')
        setError(null)
        void record(Math.round(usdAmount * 100), description).then((ok) => {
          // Only a recorded top-up clears the form.
          if (ok) {
            setAmount('')
            setDescription('')
          }
        })
      }}
    >
      <h2>Record a top-up</h2>
      <div className="row">
        <label>
          Amount (USD)
          <input inputMode="decimal" value={amount} onChange={(e) => setAmount(e.target.value)} placeholder="250.00" />
        </label>
        <label className="grow">
          Description
          <input
            value={description}
            onChange={(e) => setDescription(e.target.value)}
            placeholder="Wire transfer 2026-11"
          />
        </label>
        <button className="btn primary" type="submit">
          Record
        </button>
      </div>
      <ErrorBox text={error} />
    </form>
  )
}

const INVOICE_STATUSES: InvoiceStatus[] = ['unpaid', 'sent', 'paid', 'cancelled']
type Tab = 'transactions' | 'invoices'

const LEDGER_COLUMNS: Column<LedgerRow>[] = [
  { key: 'date', header: 'Date', className: 'muted', cell: (t) => t.createdAt },
  { key: 'description', header: 'Description', title: (t) => t.description, cell: (t) => t.description },
  {
    key: 'order',
    header: 'Order',
    cell: (t) =>
      t.orderId !== null ? (
        <a className="mono" href={href({ name: 'order', id: t.orderId })} tabIndex={-1}>
          {t.orderNumber ?? `order ${t.orderId}`}
        </a>
      ) : (
        <span className="muted">—</span>
      )
  },
  {
    key: 'amount',
    header: <span className="num">Amount</span>,
    className: 'num',
    cell: (t) => <span className={t.amount < 0 ? 'neg' : 'pos'}>{usd(t.amount)}</span>
  },
  { key: 'balance', header: <span className="num">Balance</span>, className: 'num', cell: (t) => usd(t.balanceAfter) }
]

const INVOICE_COLUMNS: Column<InvoiceView>[] = [
  {
    key: 'invoice',
    header: 'Invoice',
    className: 'mono',
    cell: (i) => (
      <a href={href({ name: 'invoice', id: i.id })} tabIndex={-1}>
        {i.invoiceNumber}
      </a>
    )
  },
  { key: 'order', header: 'Order', className: 'mono', cell: (i) => i.orderNumber },
  {
    key: 'domain',
    header: 'Domain',
    title: (i) => i.domain || i.productName,
    cell: (i) => (i.domain ? <DomainName name={i.domain} /> : i.productName)
  },
  { key: 'status', header: 'Status', cell: (i) => <Badge status={i.status} /> },
  { key: 'total', header: <span className="num">Total</span>, className: 'num', cell: (i) => usd(i.total) },
  { key: 'due', header: 'Due', className: 'muted', cell: (i) => i.dueDate }
]

export function Billing(): React.JSX.Element {
  const resellerId = useStore((s) => s.resellerId)
  const setFilter = useStore((s) => s.setListFilter)
  // The tab and the invoice filter are the address's: a reload, Back and a pasted link keep them.
  const params = new URLSearchParams(useSearch())
  const tab: Tab = params.get('tab') === 'invoices' ? 'invoices' : 'transactions'
  const status = INVOICE_STATUSES.find((s) => s === params.get('status'))
  useEffect(() => {
    if (resellerId === null) return
    if (tab === 'transactions') void setFilter('transactions', {})
    else void setFilter('invoices', { status })
  }, [resellerId, tab, status, setFilter])
  const tabButton = (t: Tab, label: string): React.JSX.Element => (
    <button
      className={tab === t ? 'tab active' : 'tab'}
      aria-pressed={tab === t}
      onClick={() => setQuery({ tab: t === 'invoices' ? 'invoices' : undefined })}
    >
      {label}
    </button>
  )
  return (
    <div className="screen fill">
      <header className="screen-head">
        <h1>Billing</h1>
        <div className="tabs">
          {tabButton('transactions', 'Credit ledger')}
          {tabButton('invoices', 'Invoices')}
        </div>
      </header>
      {tab === 'transactions' ? (
        <>
          <Can m="topUp">
            <TopUp />
          </Can>
          <div className="toolbar">
            <ExportButton list="transactions" file="credit-ledger.csv" filter={{}} />
          </div>
          <VirtualList<LedgerRow>
            name="transactions"
            label="Credit ledger"
            colsClass="tx-cols"
            columns={LEDGER_COLUMNS}
            rowHref={(t) => (t.orderId !== null ? href({ name: 'order', id: t.orderId }) : null)}
          />
        </>
      ) : (
        <>
          <div className="toolbar">
            <select
              aria-label="Invoice status"
              value={status ?? ''}
              onChange={(e) => setQuery({ tab: 'invoices', status: e.target.value || undefined })}
            >
              <option value="">All invoices</option>
              {INVOICE_STATUSES.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
            <ExportButton list="invoices" file="invoices.csv" filter={{ status }} />
          </div>
          <VirtualList<InvoiceView>
            name="invoices"
            label="Invoices"
            colsClass="inv-cols"
            columns={INVOICE_COLUMNS}
            rowHref={(i) => href({ name: 'invoice', id: i.id })}
          />
        </>
      )}
    </div>
  )
}
