/**
 * The orders list as a reseller's worklist: saved views with their counts ("needs validation",
 * "renewal due in 30 days", "installation problems", "unpaid"), columns a reseller scans (expiry
 * date and days left, validation progress, next renewal, installation verdict, product), and
 * search, filters and sort kept in the address, so a reload, Back and a pasted link show the
 * same list.
 */
import { useEffect, useRef, useState } from 'react'
import { useSearch } from 'wouter'
import type { OrderStatus } from '../../src-preload/contract'
import type { ListFilter, OrderListRow, OrderListView, OrderSort, OrderViewCounts } from '../../src-shared/list-records'
import { ExportButton } from '../export-tray'
import { toUnicode } from '../lib/domain-input'
import { daysUntil, statusLabel, usd } from '../lib/format'
import { currentSearch, href, setQuery, type Query } from '../routes'
import { useStore } from '../store'
import { Can, Badge, DomainName } from '../ui'
import { VirtualList, type Column } from '../virtual-list'

const STATUSES: OrderStatus[] = [
  'pending',
  'pending_configuration',
  'validation_pending',
  'processing',
  'completed',
  'cancelled',
  'expired'
]
const SORTS: OrderSort[] = ['date', 'domain', 'status', 'expiry', 'renewal']

/** The direction each sort reads first: newest orders, A to Z, soonest expiry or renewal. */
const FIRST_DIR: Record<OrderSort, 'asc' | 'desc'> = {
  date: 'desc',
  domain: 'asc',
  status: 'asc',
  expiry: 'asc',
  renewal: 'asc'
}

export const VIEW_LABELS: Record<OrderListView, string> = {
  needs_validation: 'Needs validation',
  renewal_due: 'Renewal due in 30 days',
  installation_problems: 'Installation problems',
  unpaid: 'Unpaid'
}
const VIEWS = Object.keys(VIEW_LABELS) as OrderListView[]
/** Each view opens in the order that answers it: what renews soonest first. */
const VIEW_SORT: Partial<Record<OrderListView, OrderSort>> = { renewal_due: 'renewal' }

/** The installation verdicts in a word or two for the list; the full words are in the tooltip. */
const VERDICT_SHORT: Record<string, string> = {
  unreachable: 'unreachable',
  other_certificate: 'other certificate',
  old_certificate: 'old certificate',
  expired: 'expired certificate',
  hostname_mismatch: 'wrong name',
  chain_incomplete: 'chain incomplete',
  ok: 'OK'
}

const METHOD_LABEL: Record<string, string> = { http: 'HTTP', https: 'HTTPS', dns: 'DNS', email: 'email' }

/** What the address says the list shows; anything unknown in it is left out. */
export function listFromAddress(search: string): { filter: ListFilter; sort: OrderSort; dir: 'asc' | 'desc' } {
  const p = new URLSearchParams(search)
  const oneOf = <T extends string>(v: string | null, values: readonly T[]): T | undefined =>
    values.includes(v as T) ? (v as T) : undefined
  const view = oneOf(p.get('view'), VIEWS)
  const status = oneOf(p.get('status'), STATUSES)
  const q = p.get('q')?.trim().slice(0, 253) || undefined
  const sort = oneOf(p.get('sort'), SORTS) ?? (view && VIEW_SORT[view]) ?? 'date'
  const dir = oneOf(p.get('dir'), ['asc', 'desc'] as const) ?? FIRST_DIR[sort]
  return { filter: { view, status, search: q }, sort, dir }
}

/** The address of a list: the defaults (no view, newest first) are left out. */
function addressOf(filter: ListFilter, sort: OrderSort, dir: 'asc' | 'desc'): Query {
  const defaultSort = (filter.view && VIEW_SORT[filter.view]) ?? 'date'
  return {
    view: filter.view,
    status: filter.status,
    q: filter.search,
    sort: sort === defaultSort ? undefined : sort,
    dir: dir === FIRST_DIR[sort] ? undefined : dir
  }
}

/** Days until the certificate ends: "—" without one, "ended" once past. */
export function daysLeft(o: Pick<OrderListRow, 'certValidTill'>, now = new Date()): string {
  if (!o.certValidTill) return '—'
  const d = daysUntil(o.certValidTill, now)
  return d < 0 ? 'ended' : d.toLocaleString('en-US')
}

function daysText(day: string): string {
  const d = daysUntil(day)
  if (d < 0) return `${(-d).toLocaleString('en-US')} day${d === -1 ? '' : 's'} ago`
  if (d === 0) return 'today'
  return `in ${d.toLocaleString('en-US')} day${d === 1 ? '' : 's'}`
}

/** "2/3 names valid · DNS", "awaiting CSR", or nothing where validation is not the question. */
export function validationText(o: OrderListRow): string {
  if (o.status === 'cancelled' || o.status === 'expired') return ''
  if (o.status === 'pending' || o.status === 'pending_configuration')
    return o.productType === 'code-signing' ? '' : 'awaiting CSR'
  const w = o.worklist
  if (w.namesTotal === 0) return ''
  const methods = w.methods.map((m) => METHOD_LABEL[m] ?? m).join(', ')
  return `${w.namesValid}/${w.namesTotal} name${w.namesTotal === 1 ? '' : 's'} valid${methods ? ` · ${methods}` : ''}`
}

/** The status as the row reads it: a cancelled order is only cancelled (its invoice too). */
function statusTitle(o: OrderListRow): string {
  const unpaid = o.paymentStatus === 'unpaid' && o.status !== 'cancelled'
  const v = validationText(o)
  const revoked = o.certificateRevoked ? ', certificate revoked' : ''
  return `${statusLabel(o.status)}${revoked}${unpaid ? ', unpaid' : ''}${v ? `; ${v}` : ''}`
}

function renewalLine(o: OrderListRow): string {
  const w = o.worklist
  if (!w.renewalDue) return ''
  return w.renewalKind === 'reissue' ? 'automatic reissue' : 'renewal due'
}

const Two = ({ first, second }: { first: React.ReactNode; second?: React.ReactNode }): React.JSX.Element => (
  <>
    <span className="line">{first}</span>
    <span className="line sub">{second || '\u00a0'}</span>
  </>
)

function columns(sort: OrderSort, dir: 'asc' | 'desc', sortBy: (s: OrderSort) => void): Column<OrderListRow>[] {
  const ariaSort = (s: OrderSort): 'ascending' | 'descending' | undefined =>
    s === sort ? (dir === 'asc' ? 'ascending' : 'descending') : undefined
  const head = (s: OrderSort, text: string): React.ReactNode => (
    <button className="sort" onClick={() => sortBy(s)}>
      {text}
      {s === sort ? <span aria-hidden="true">{dir === 'asc' ? ' ▲' : ' ▼'}</span> : null}
    </button>
  )
  return [
    {
      key: 'order',
      header: head('date', 'Order'),
      sort: ariaSort('date'),
      className: 'col-order',
      cellClassName: 'two',
      cell: (o) => (
        <Two
          first={
            <a className="mono" href={href({ name: 'order', id: o.id })} tabIndex={-1}>
              {o.orderNumber}
            </a>
          }
          second={o.createdAt.slice(0, 10)}
        />
      )
    },
    {
      key: 'domain',
      header: (
        <>
          {head('domain', 'Domain')} <span className="muted">/ product</span>
        </>
      ),
      sort: ariaSort('domain'),
      cellClassName: 'two',
      title: (o) => `${o.domain ? toUnicode(o.domain) : o.productName} · ${o.orderNumber} · ${o.productName}`,
      cell: (o) => (
        <Two
          first={<span className="strong">{o.domain ? <DomainName name={o.domain} /> : o.productName}</span>}
          second={
            <>
              <span className="narrow-only mono">{o.orderNumber} · </span>
              {o.productName}
            </>
          }
        />
      )
    },
    {
      key: 'status',
      header: head('status', 'Status'),
      sort: ariaSort('status'),
      cellClassName: 'two',
      title: statusTitle,
      cell: (o) => (
        <Two
          first={
            <>
              <Badge status={o.status} />
              {o.paymentStatus === 'unpaid' && o.status !== 'cancelled' ? (
                <span className="tag warn">unpaid</span>
              ) : null}
            </>
          }
          second={
            // A revoked certificate outweighs how its names were validated: it takes the second
            // line, where it is read whole at 1024 px (beside the status it would be cut short).
            o.certificateRevoked ? (
              <Badge status="revoked" label="certificate revoked" />
            ) : (
              <span data-testid="validation-progress">{validationText(o)}</span>
            )
          }
        />
      )
    },
    {
      key: 'installation',
      header: 'Installation',
      cellClassName: 'two',
      title: (o) =>
        o.worklist.installVerdict
          ? `Installation: ${o.worklist.installLabel ?? o.worklist.installVerdict}`
          : o.status === 'completed'
            ? 'Installation not checked yet'
            : undefined,
      cell: (o) =>
        o.worklist.installVerdict ? (
          <Two
            first={
              <span className={`badge badge-install-${o.worklist.installVerdict}`} data-testid="installation-verdict">
                {VERDICT_SHORT[o.worklist.installVerdict]}
              </span>
            }
          />
        ) : (
          <Two first={<span className="muted">{o.status === 'completed' ? 'not checked' : '—'}</span>} />
        )
    },
    {
      key: 'expiry',
      header: head('expiry', 'Expires'),
      sort: ariaSort('expiry'),
      cellClassName: 'two',
      title: (o) => (o.certValidTill ? `Certificate ends ${o.certValidTill}, ${daysText(o.certValidTill)}` : undefined),
      cell: (o) =>
        o.certValidTill ? (
          <Two
            first={<span data-testid="expiry-date">{o.certValidTill.slice(0, 10)}</span>}
            second={daysLeft(o) === 'ended' ? 'ended' : `${daysLeft(o)} days left`}
          />
        ) : (
          <Two first={<span className="muted">—</span>} />
        )
    },
    {
      key: 'renewal',
      header: head('renewal', 'Next renewal'),
      sort: ariaSort('renewal'),
      cellClassName: 'two',
      title: (o) =>
        o.worklist.renewalDue
          ? `${renewalLine(o)} ${o.worklist.renewalDue}, ${daysText(o.worklist.renewalDue)}`
          : undefined,
      cell: (o) =>
        o.worklist.renewalDue ? (
          <Two first={<span data-testid="renewal-date">{o.worklist.renewalDue}</span>} second={renewalLine(o)} />
        ) : (
          <Two first={<span className="muted">—</span>} />
        )
    },
    {
      key: 'total',
      header: <span className="num">Total</span>,
      className: 'col-total num',
      cellClassName: 'two',
      cell: (o) => <Two first={usd(o.total)} />
    }
  ]
}

export function Orders(): React.JSX.Element {
  const search = useSearch()
  const { filter, sort, dir } = listFromAddress(search)
  const setFilter = useStore((s) => s.setListFilter)
  const resellerId = useStore((s) => s.resellerId)
  const version = useStore((s) => s.orders.version)
  const counts = useStore((s) => s.orderViewCounts)
  const loadCounts = useStore((s) => s.loadOrderViewCounts)
  const go = useStore((s) => s.go)
  const [text, setText] = useState(filter.search ?? '')
  /** Typing goes into one history entry: Back leaves the search, not each keystroke. */
  const typing = useRef(false)
  const key = JSON.stringify([filter, sort, dir])
  // The address is the list's state: a reload, Back or a pasted link reads the same rows.
  useEffect(() => {
    if (resellerId !== null) void setFilter('orders', filter, { sort, dir })
  }, [resellerId, key, setFilter])
  useEffect(() => {
    if (resellerId !== null) void loadCounts()
  }, [resellerId, version, loadCounts])
  // Back or a link changed the search: the field shows it.
  useEffect(() => {
    if ((filter.search ?? '') !== text.trim()) setText(filter.search ?? '')
  }, [filter.search])
  // From the address as it is when the change is made: a search typed a moment ago and a status
  // picked since both stay.
  const change = (
    next: Partial<ListFilter>,
    order?: { sort: OrderSort; dir: 'asc' | 'desc' },
    replace = false
  ): void => {
    const now = listFromAddress(currentSearch())
    setQuery(addressOf({ ...now.filter, ...next }, order?.sort ?? now.sort, order?.dir ?? now.dir), { replace })
  }
  // Server-side search, a moment after the last keystroke.
  useEffect(() => {
    const t = setTimeout(() => {
      const term = text.trim() || undefined
      if (listFromAddress(currentSearch()).filter.search === term) return
      change({ search: term }, undefined, typing.current)
      typing.current = true
    }, 250)
    return () => clearTimeout(t)
  }, [text])
  const sortBy = (s: OrderSort): void => {
    typing.current = false
    change({}, { sort: s, dir: s === sort ? (dir === 'asc' ? 'desc' : 'asc') : FIRST_DIR[s] })
  }
  // A saved view is a question of its own: it starts without the status filter and search of another.
  const viewHref = (view: OrderListView | undefined): string => href({ name: 'orders' }, { view })
  return (
    <div className="screen fill wide">
      <header className="screen-head">
        <h1>Orders</h1>
        <div className="filters">
          <input
            type="search"
            aria-label="Search order number or domain"
            placeholder="ORD-… or domain"
            value={text}
            onChange={(e) => setText(e.target.value)}
            onBlur={() => (typing.current = false)}
          />
          <select
            aria-label="Status"
            value={filter.status ?? ''}
            onChange={(e) => {
              typing.current = false
              change({ status: (e.target.value || undefined) as OrderStatus | undefined })
            }}
          >
            <option value="">All statuses</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {statusLabel(s)}
              </option>
            ))}
          </select>
          <ExportButton list="orders" file="orders.csv" filter={filter} sort={sort} dir={dir} />
          <Can m="createOrder">
            <button className="btn primary" onClick={() => go({ name: 'catalogue' })}>
              New order
            </button>
          </Can>
        </div>
      </header>
      <ViewTabs current={filter.view} counts={counts} hrefOf={viewHref} onPick={() => (typing.current = false)} />
      <VirtualList<OrderListRow>
        name="orders"
        label={filter.view ? `Orders: ${VIEW_LABELS[filter.view]}` : 'Orders'}
        colsClass="orders-cols"
        rowHeight={58}
        columns={columns(sort, dir, sortBy)}
        rowHref={(o) => href({ name: 'order', id: o.id })}
        rowData={(o) => ['data-order', o.orderNumber]}
      />
    </div>
  )
}

function ViewTabs({
  current,
  counts,
  hrefOf,
  onPick
}: {
  current: OrderListView | undefined
  counts: OrderViewCounts | null
  hrefOf: (view: OrderListView | undefined) => string
  onPick: () => void
}): React.JSX.Element {
  const fmt = (n: number | undefined): string => (n === undefined ? '…' : n.toLocaleString('en-US'))
  return (
    <nav className="views" aria-label="Saved views">
      <a href={hrefOf(undefined)} aria-current={current === undefined ? 'page' : undefined} onClick={onPick}>
        All orders
      </a>
      {VIEWS.map((v) => (
        <a
          key={v}
          href={hrefOf(v)}
          aria-current={current === v ? 'page' : undefined}
          data-view={v}
          onClick={onPick}
          className={counts && counts[v] > 0 && v !== 'renewal_due' ? 'attention' : undefined}
        >
          {VIEW_LABELS[v]} <span className="count">{fmt(counts?.[v])}</span>
        </a>
      ))}
    </nav>
  )
}
