import type { Cents } from '../../src-preload/contract'

export const usd = (cents: Cents): string =>
  `${cents < 0 ? '−' : ''}$${(Math.abs(cents) / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`

export const years = (months: number): string => `${months / 12} year${months === 12 ? '' : 's'}`

export const statusLabel = (s: string): string => s.replace(/_/g, ' ')

/** Whole days from today (UTC) to `day`; negative once past. */
export function daysUntil(day: string, now = new Date()): number {
  const t = Date.parse(`${day.slice(0, 10)}T00:00:00Z`)
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())
  return Math.round((t - today) / 86_400_000)
}

export function download(name: string, content: BlobPart, type = 'application/octet-stream'): void {
  const url = URL.createObjectURL(new Blob([content], { type }))
  const a = document.createElement('a')
  a.href = url
  a.download = name
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

/** RFC 4180 CSV: quotes every field that needs it. */
export function toCsv(rows: (string | number | null)[][]): string {
  const cell = (v: string | number | null): string => {
    const s = v === null ? '' : String(v)
    return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
  }
  return rows.map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n'
}

export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err))
