/**
 * A domain as people type or paste it, reduced to what a certificate carries: a pasted URL to
 * its host (WHATWG URL parsing, as the address bar does), an internationalized name to its
 * A-label form (RFC 5891 §4, IDNA via the browser's own UTS #46 mapping), and the U-label form
 * back for display (RFC 3492 Punycode decoding), so the reseller sees both.
 */

export interface DomainInput {
  /** What goes into the order: lower-case A-labels, `*.` kept. Empty when nothing usable was typed. */
  ascii: string
  /** The same name in Unicode, for display; equal to `ascii` for an all-ASCII name. */
  unicode: string
  /** True when the text typed was a URL (scheme, path, port or user) and only its host was kept. */
  fromUrl: boolean
  wildcard: boolean
}

/** RFC 3492 §5 parameters of Punycode for IDNA. */
const BASE = 36
const TMIN = 1
const TMAX = 26
const SKEW = 38
const DAMP = 700
const INITIAL_BIAS = 72
const INITIAL_N = 128

function adapt(delta: number, points: number, first: boolean): number {
  let d = first ? Math.floor(delta / DAMP) : delta >> 1
  d += Math.floor(d / points)
  let k = 0
  while (d > ((BASE - TMIN) * TMAX) >> 1) {
    d = Math.floor(d / (BASE - TMIN))
    k += BASE
  }
  return k + Math.floor(((BASE - TMIN + 1) * d) / (d + SKEW))
}

/** RFC 3492 §5: a-z and A-Z are 0-25, 0-9 are 26-35; anything else is not a digit (BASE). */
const digitOf = (c: number): number =>
  c >= 48 && c <= 57 ? c - 22 : c >= 65 && c <= 90 ? c - 65 : c >= 97 && c <= 122 ? c - 97 : BASE

/** RFC 3492 §6.2 decoding of one label's Punycode (without `xn--`); null when it is not valid Punycode. */
export function punycodeDecode(input: string): string | null {
  const out: number[] = []
  const basic = input.lastIndexOf('-')
  for (let j = 0; j < Math.max(basic, 0); j++) {
    const c = input.charCodeAt(j)
    if (c >= 0x80) return null
    out.push(c)
  }
  let n = INITIAL_N
  let bias = INITIAL_BIAS
  let i = 0
  for (let idx = basic > 0 ? basic + 1 : 0; idx < input.length;) {
    const oldi = i
    for (let w = 1, k = BASE; ; k += BASE) {
      if (idx >= input.length) return null
      const digit = digitOf(input.charCodeAt(idx++))
      if (digit >= BASE) return null
      i += digit * w
      const t = k <= bias ? TMIN : k >= bias + TMAX ? TMAX : k - bias
      if (digit < t) break
      w *= BASE - t
      if (!Number.isSafeInteger(i) || !Number.isSafeInteger(w)) return null
    }
    bias = adapt(i - oldi, out.length + 1, oldi === 0)
    n += Math.floor(i / (out.length + 1))
    i %= out.length + 1
    if (n > 0x10ffff) return null
    out.splice(i++, 0, n)
  }
  return String.fromCodePoint(...out)
}

/** The Unicode form of an A-label name, label by label; a label that does not decode stays as it is. */
export function toUnicode(ascii: string): string {
  return ascii
    .split('.')
    .map((label) => (/^xn--/i.test(label) ? (punycodeDecode(label.slice(4).toLowerCase()) ?? label) : label))
    .join('.')
}

/** The A-label form of a host, as the browser's URL parser maps it; null when it is not a host. */
function toAscii(host: string): string | null {
  try {
    const u = new URL(`http://${host}/`)
    return u.hostname === '' ? null : u.hostname
  } catch {
    return null
  }
}

export function parseDomainInput(typed: string): DomainInput {
  let text = typed.trim()
  let fromUrl = false
  // "https://example.com/path", "example.com:8443", "user@example.com/…": keep the host only.
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text) || /[/?#:@]/.test(text)) {
    const host = toAscii(
      text
        .replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')
        .replace(/^[^/?#]*@/, '')
        .split(/[/?#:]/)[0] ?? ''
    )
    if (host !== null) {
      text = host
      fromUrl = true
    }
  }
  text = text.replace(/\.$/, '')
  const wildcard = text.startsWith('*.')
  const rest = wildcard ? text.slice(2) : text
  if (rest === '') return { ascii: '', unicode: '', fromUrl, wildcard }
  // A name the URL parser refuses goes to the core as typed, which then gives its reason.
  const name = toAscii(rest) ?? rest.toLowerCase()
  const full = wildcard ? `*.${name}` : name
  return { ascii: full, unicode: toUnicode(full), fromUrl, wildcard }
}
