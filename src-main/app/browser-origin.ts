/**
 * Browser mode takes changes only from its own page. Its session cookie is SameSite=Strict,
 * but a page on another port of 127.0.0.1 (any local dev server, a tool's web UI) is the same
 * *site*: sites are compared without the port (RFC 6265bis §5.2, "same-site"), so that page's
 * requests carry the cookie. What tells them apart is the origin, which includes the port
 * (RFC 6454 §4): browsers send it as `Origin` on every request that is not a GET or HEAD
 * (Fetch Standard §3.1, "origin header"), and as Fetch Metadata in `Sec-Fetch-Site`
 * (W3C Fetch Metadata Request Headers §2.4), neither of which a page can set itself.
 */
import type { IncomingHttpHeaders } from 'node:http'

/** Methods that change nothing on these routes; OPTIONS only ever gets the 405 table. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v)?.trim()

/** A header value as a refusal may quote it: bounded, and JSON-quoted so it cannot read as ours. */
const quoted = (v: string): string => JSON.stringify(v.slice(0, 100))

/**
 * Why a browser-mode request (UI files, the RPC, sign-out) is refused as coming from another
 * origin, or null when it may proceed. `host` is the Host header the listener already checked.
 *
 * - A state-changing request (every method but GET, HEAD, OPTIONS) must carry `Origin` equal to
 *   `<scheme>://<Host>`, the page the UI is served from (`https` on a TLS listener: a team
 *   server's own, or the public listener); a missing Origin is refused too, since
 *   every browser that runs the UI sends one on POST. When `Sec-Fetch-Site` is present it must
 *   be `same-origin` (`same-site` is exactly the other-port case).
 * - A GET from another site or port may only open the UI as a page of its own (a followed
 *   link: `Sec-Fetch-Mode: navigate`, destination `document`), never load it into its page as a
 *   frame, script or image.
 */
export function crossOriginRefusal(
  method: string,
  headers: IncomingHttpHeaders,
  /** The scheme the page was served over: a team server's UI may be on TLS. */
  protocol: 'http' | 'https' = 'http'
): string | null {
  const site = one(headers['sec-fetch-site'])?.toLowerCase()
  if (SAFE_METHODS.has(method)) {
    if (site !== 'same-site' && site !== 'cross-site') return null
    const mode = one(headers['sec-fetch-mode'])?.toLowerCase()
    const dest = one(headers['sec-fetch-dest'])?.toLowerCase()
    if (mode === 'navigate' && (dest === undefined || dest === 'document')) return null
    return 'request refused: another site may open the CertDesk UI only as a page of its own, not load it into its page'
  }
  if (site !== undefined && site !== 'same-origin') {
    return `request refused: it was sent from another site or port (Sec-Fetch-Site: ${quoted(site)}); CertDesk takes changes only from its own page`
  }
  const origin = one(headers.origin)
  const own = `${protocol}://${one(headers.host)?.toLowerCase() ?? ''}`
  if (!origin) {
    return 'request refused: it carries no Origin header; CertDesk takes changes only from its own page'
  }
  if (origin.toLowerCase() !== own) {
    return `request refused: it was sent from ${quoted(origin)}, not from the CertDesk page at ${own}`
  }
  return null
}
