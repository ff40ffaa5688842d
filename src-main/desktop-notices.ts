/**
 * What the Electron window's desktop notifications say: certificates ending within 30 days that
 * no automatic reissue replaces, and validations untouched for 3 days (the core's Watchlist
 * decides both). Each is told once: again only when its end date or its last change moves.
 */
import type { Watchlist } from './core/certificates/watchlist'

/** How often the window looks for expiring certificates and stuck validations. */
export const NOTICE_EVERY_MS = 6 * 60 * 60 * 1000

export interface DesktopNotice {
  title: string
  body: string
}

/** Returns a function that gives, on each call, the notices not given before. */
export function noticeFeed(watchlist: Watchlist): () => Promise<DesktopNotice[]> {
  const told = new Set<string>()
  const once = (key: string): boolean => {
    if (told.has(key)) return false
    told.add(key)
    return true
  }
  return async () => {
    const notices: DesktopNotice[] = []
    for (const o of await watchlist.expiringAll()) {
      if (!once(`exp:${o.id}:${o.certValidTill}`)) continue
      notices.push({
        title: 'Certificate expiring without renewal',
        body: `${o.domain} (${o.orderNumber}) ends on ${o.certValidTill}; its subscription does not renew it.`
      })
    }
    for (const o of await watchlist.stuckValidations()) {
      if (!once(`dcv:${o.id}:${o.updatedAt}`)) continue
      notices.push({
        title: 'Validation waiting',
        body: `${o.domain} (${o.orderNumber}) has waited for domain validation since ${o.updatedAt}.`
      })
    }
    return notices
  }
}
