/**
 * Every screen's address. The app routes on the URL's fragment (`#/orders/42`), in the browser
 * and in the Electron window alike: the desktop window loads a file:// page where there is no
 * server to answer a deep path, and browser mode serves files under /ui/ only (docs/decisions.md,
 * "Addresses in the UI"). What a screen is showing (a list's view, filters, sort and search, a
 * tab, a report's window) is the fragment's query (`#/orders?view=unpaid&sort=expiry`), so a
 * reload, Back and a pasted link show the same thing.
 */
import { useSyncExternalStore } from 'react'

export type Screen =
  | { name: 'dashboard' }
  | { name: 'catalogue' }
  | { name: 'new-order' }
  | { name: 'orders' }
  | { name: 'order'; id: number }
  | { name: 'billing' }
  | { name: 'invoice'; id: number }
  | { name: 'events' }
  | { name: 'api' }
  | { name: 'acme' }
  | { name: 'acme-subscription'; id: number }
  | { name: 'settings' }
  | { name: 'imports' }
  | { name: 'expiring' }
  | { name: 'alerts' }
  | { name: 'team' }
  | { name: 'admins' }
  | { name: 'audit' }
  | { name: 'account' }

const STATIC: Record<Exclude<Screen, { id: number }>['name'], string> = {
  dashboard: '/',
  catalogue: '/catalogue',
  'new-order': '/catalogue/new-order',
  orders: '/orders',
  billing: '/billing',
  events: '/events',
  api: '/api',
  acme: '/acme',
  settings: '/settings',
  imports: '/imports',
  expiring: '/reports/expiring',
  alerts: '/alerts',
  team: '/team',
  admins: '/admins',
  audit: '/audit',
  account: '/account'
}

/** The path of a screen inside the app (what follows `#`). */
export function pathOf(screen: Screen): string {
  switch (screen.name) {
    case 'order':
      return `/orders/${screen.id}`
    case 'invoice':
      return `/invoices/${screen.id}`
    case 'acme-subscription':
      return `/acme/${screen.id}`
    default:
      return STATIC[screen.name]
  }
}

/** What a screen shows beyond its path: names and values; empty and undefined values are left out. */
export type Query = Record<string, string | number | boolean | undefined | null>

export function queryString(q: Query | undefined): string {
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(q ?? {}))
    if (v !== undefined && v !== null && v !== '' && v !== false) params.set(k, String(v))
  const s = params.toString()
  return s ? `?${s}` : ''
}

/** An `href` for a link to a screen: the fragment form, so the browser's own link handling works. */
export const href = (screen: Screen, q?: Query): string => `#${pathOf(screen)}${queryString(q)}`

// ---- the fragment as a location: wouter's hash location, with the query kept apart

/** The fragment without its `#`: `/orders?view=unpaid`. */
const fragment = (): string => `/${location.hash.replace(/^#?\/?/, '')}`
const pathPart = (): string => fragment().split('?')[0]
const searchPart = (): string => {
  const f = fragment()
  const at = f.indexOf('?')
  return at < 0 ? '' : f.slice(at + 1)
}

/** The query of the address on show now (not as of some earlier render). */
export const currentSearch = (): string => searchPart()

let listeners: (() => void)[] = []
const onChange = (): void => listeners.forEach((l) => l())
function subscribe(listener: () => void): () => void {
  if (listeners.push(listener) === 1) addEventListener('hashchange', onChange)
  return () => {
    listeners = listeners.filter((l) => l !== listener)
    if (listeners.length === 0) removeEventListener('hashchange', onChange)
  }
}

/**
 * Moves to `to` (a path with an optional query) as a new history entry, or in place of the
 * current one. pushState fires no hashchange, so one is sent for the listeners.
 */
export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  const oldURL = location.href
  const url = new URL(oldURL)
  url.hash = to.startsWith('/') ? to : `/${to}`
  if (url.href === oldURL) return
  history[opts.replace ? 'replaceState' : 'pushState'](null, '', url.href)
  dispatchEvent(new HashChangeEvent('hashchange', { oldURL, newURL: url.href }))
}

/** wouter's location hook over the fragment's path; its search hook answers the fragment's query. */
export const useHashPath = (): [string, typeof navigate] => [useSyncExternalStore(subscribe, pathPart), navigate]
export const useHashSearch = (): string => useSyncExternalStore(subscribe, searchPart)
useHashPath.hrefs = (to: string): string => `#${to}`
useHashPath.searchHook = useHashSearch

export const go = (screen: Screen, q?: Query): void => navigate(`${pathOf(screen)}${queryString(q)}`)

/** The query of the screen on show, to change: a filter or a tab is a new history entry, so Back undoes it. */
export function setQuery(q: Query, opts: { replace?: boolean } = {}): void {
  navigate(`${pathPart()}${queryString(q)}`, opts)
}

/**
 * A record id from an address: digits only, no sign, no leading zero, within SQLite's integer
 * range that JavaScript holds exactly; anything else (`..`, `-1`, `1e3`, `0x10`, 40 digits) is
 * not an address of this app and shows "not found" without asking the store.
 */
export function idFrom(segment: string | undefined): number | null {
  if (segment === undefined || !/^[1-9][0-9]{0,15}$/.test(segment)) return null
  const n = Number(segment)
  return Number.isSafeInteger(n) ? n : null
}
