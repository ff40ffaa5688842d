/** Hand-made SVG charts for the dashboard: no chart library, no inline styles (strict CSP). */
import { usd } from './lib/format'

export function BarChart({
  data,
  label
}: {
  data: { date: string; orders: number; revenue: number }[]
  label: string
}): React.JSX.Element {
  const w = 560
  const h = 160
  const max = Math.max(1, ...data.map((d) => d.revenue))
  const bw = w / data.length
  return (
    <svg className="chart" viewBox={`0 0 ${w} ${h + 22}`} role="img" aria-label={label}>
      <line x1={0} y1={h} x2={w} y2={h} className="axis" />
      {data.map((d, i) => {
        const bh = Math.round((d.revenue / max) * (h - 10))
        return (
          <g key={d.date}>
            <rect x={i * bw + 2} y={h - bh} width={bw - 4} height={Math.max(bh, d.orders > 0 ? 2 : 0)} className="bar">
              <title>{`${d.date}: ${d.orders.toLocaleString('en-US')} order(s), ${usd(d.revenue)}`}</title>
            </rect>
            {i % 7 === 0 && i < data.length - 4 ? (
              <text
                x={i === 0 ? 0 : i * bw + bw / 2}
                y={h + 16}
                className="tick"
                textAnchor={i === 0 ? 'start' : 'middle'}
              >
                {d.date.slice(5)}
              </text>
            ) : null}
          </g>
        )
      })}
      <text x={w - 2} y={h + 16} className="tick" textAnchor="end">
        today
      </text>
      <text x={4} y={12} className="tick">
        {usd(max)}
      </text>
    </svg>
  )
}

/**
 * The ring's hole is 88 units wide: a longer total gets a smaller type so "1,000,000" stays
 * inside it (a class, not a style attribute: the CSP allows no inline styles).
 */
export const totalSize = (text: string): string =>
  text.length <= 5 ? '' : text.length <= 7 ? 'donut-total-m' : text.length <= 9 ? 'donut-total-s' : 'donut-total-xs'

const PALETTE = ['#2563eb', '#16a34a', '#d97706', '#dc2626', '#7c3aed', '#0891b2', '#db2777', '#65a30d']

export function Donut({
  parts,
  label
}: {
  parts: { name: string; value: number }[]
  label: string
}): React.JSX.Element {
  const total = parts.reduce((a, p) => a + p.value, 0)
  const r = 54
  const c = 2 * Math.PI * r
  let offset = 0
  const totalText = total.toLocaleString('en-US')
  return (
    <div className="donut">
      <svg viewBox="0 0 140 140" role="img" aria-label={label}>
        <circle cx={70} cy={70} r={r} className="donut-track" />
        {total > 0
          ? parts.map((p, i) => {
              const len = (p.value / total) * c
              const el = (
                <circle
                  key={p.name}
                  cx={70}
                  cy={70}
                  r={r}
                  fill="none"
                  stroke={PALETTE[i % PALETTE.length]}
                  strokeWidth={20}
                  strokeDasharray={`${len} ${c - len}`}
                  strokeDashoffset={-offset}
                  transform="rotate(-90 70 70)"
                />
              )
              offset += len
              return el
            })
          : null}
        <text x={70} y={76} textAnchor="middle" className={`donut-total ${totalSize(totalText)}`}>
          {totalText}
        </text>
      </svg>
      <ul className="legend">
        {parts.map((p, i) => (
          <li key={p.name}>
            <svg width={10} height={10} aria-hidden="true">
              <rect width={10} height={10} rx={2} fill={PALETTE[i % PALETTE.length]} />
            </svg>
            {p.name} <b>{p.value.toLocaleString('en-US')}</b>
          </li>
        ))}
      </ul>
    </div>
  )
}
