/**
 * Every screen's address. The app routes on the URL's fragment (`#/orders/42`) with wouter's
 * hash location, in the browser and in the Electron window alike: the desktop window loads a
 * file:// page where there is no server to answer a deep path, and browser mode serves files
 * under /ui/ only (docs/decisions.md, "Addresses in the UI").
 */
import { navigate } from 'wouter/use-hash-location'

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

/** An `href` for a link to a screen: the fragment form, so the browser's own link handling works. */
export const href = (screen: Screen): string => `#${pathOf(screen)}`

export const go = (screen: Screen): void => navigate(pathOf(screen))

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
