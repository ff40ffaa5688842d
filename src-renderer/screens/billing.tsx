import { useEffect, useState } from 'react'
import type { InvoiceStatus, InvoiceView, TransactionView } from '../../src-preload/contract'
import { ExportButton } from '../export-tray'
import { usd } from '../lib/format'
import { useStore } from '../store'
import { href } from '../routes'
import { Can, Badge, DomainName, ErrorBox } from '../ui'
import { VirtualList } from '../virtual-list'

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

export function Billing(): React.JSX.Element {
  const resellerId = useStore((s) => s.resellerId)
  const invoiceFilter = useStore((s) => s.invoices.filter)
  const setFilter = useStore((s) => s.setListFilter)
  const [tab, setTab] = useState<'transactions' | 'invoices'>('transactions')
  useEffect(() => {
    if (resellerId === null) return
    void setFilter('transactions', {})
    void setFilter('invoices', useStore.getState().invoices.filter)
  }, [resellerId, setFilter])
  return (
    <div className="screen fill">
      <header className="screen-head">
        <h1>Billing</h1>
        <div className="tabs">
          <button className={tab === 'transactions' ? 'tab active' : 'tab'} onClick={() => setTab('transactions')}>
            Credit ledger
          </button>
          <button className={tab === 'invoices' ? 'tab active' : 'tab'} onClick={() => setTab('invoices')}>
            Invoices
          </button>
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
          <VirtualList<TransactionView>
            name="transactions"
            label="Credit ledger"
            header={
              <div className="cols tx-cols">
                <span>Date</span>
                <span>Description</span>
                <span className="num">Amount</span>
                <span className="num">Balance</span>
              </div>
            }
            row={(t) => (
              <div className="cols tx-cols">
                <span className="muted">{t.createdAt}</span>
                <span title={t.description}>{t.description}</span>
                <span className={`num ${t.amount < 0 ? 'neg' : 'pos'}`}>{usd(t.amount)}</span>
                <span className="num">{usd(t.balanceAfter)}</span>
              </div>
            )}
          />
        </>
      ) : (
        <>
          <div className="toolbar">
            <select
              aria-label="Invoice status"
              value={invoiceFilter.status ?? ''}
              onChange={(e) =>
                void setFilter('invoices', { status: (e.target.value || undefined) as InvoiceStatus | undefined })
              }
            >
              <option value="">All invoices</option>
              {['unpaid', 'sent', 'paid', 'cancelled'].map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
            <ExportButton list="invoices" file="invoices.csv" filter={invoiceFilter} />
          </div>
          <VirtualList<InvoiceView>
            name="invoices"
            label="Invoices"
            header={
              <div className="cols inv-cols">
                <span>Invoice</span>
                <span>Order</span>
                <span>Domain</span>
                <span>Status</span>
                <span className="num">Total</span>
                <span>Due</span>
              </div>
            }
            row={(i) => (
              <a className="cols inv-cols row-link" href={href({ name: 'invoice', id: i.id })}>
                <span className="mono">{i.invoiceNumber}</span>
                <span className="mono">{i.orderNumber}</span>
                <span>{i.domain ? <DomainName name={i.domain} /> : i.productName}</span>
                <span>
                  <Badge status={i.status} />
                </span>
                <span className="num">{usd(i.total)}</span>
                <span className="muted">{i.dueDate}</span>
              </a>
            )}
          />
        </>
      )}
    </div>
  )
}
