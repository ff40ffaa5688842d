/**
 * A small DER (ITU-T X.690 §10) writer and reader for the two hot paths of the CA: building a
 * leaf's TBSCertificate (RFC 5280 §4.1) and reading a PKCS #10 request (RFC 2986 §4). Only
 * definite lengths, only the universal and context tags those structures use; anything else is
 * left to @peculiar/x509 (x509.ts).
 */

// ---- writing ------------------------------------------------------------------------------

/** X.690 §8.1.3: short form below 128, else the long form with the fewest length octets. */
function lengthOctets(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n])
  const bytes: number[] = []
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff)
  return Buffer.from([0x80 | bytes.length, ...bytes])
}

/** One TLV: tag octet, length, contents. */
export function tlv(tag: number, ...contents: Buffer[]): Buffer {
  const body = contents.length === 1 ? contents[0] : Buffer.concat(contents)
  return Buffer.concat([Buffer.from([tag]), lengthOctets(body.length), body])
}

export const TAG = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  null: 0x05,
  oid: 0x06,
  utf8String: 0x0c,
  printableString: 0x13,
  ia5String: 0x16,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31
} as const

export const seq = (...items: Buffer[]): Buffer => tlv(TAG.sequence, ...items)

/** X.690 §8.19: an OBJECT IDENTIFIER from its dotted form. */
export function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number)
  const out: number[] = [arcs[0] * 40 + arcs[1]]
  for (const arc of arcs.slice(2)) {
    const groups: number[] = [arc & 0x7f]
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) groups.unshift((v & 0x7f) | 0x80)
    out.push(...groups)
  }
  return tlv(TAG.oid, Buffer.from(out))
}

/** X.690 §8.3: a non-negative INTEGER from its big-endian magnitude (minimal, sign octet added). */
export function unsignedInteger(magnitude: Buffer): Buffer {
  let i = 0
  while (i < magnitude.length - 1 && magnitude[i] === 0) i++
  const m = magnitude.subarray(i)
  return tlv(TAG.integer, m[0] & 0x80 ? Buffer.concat([Buffer.from([0]), m]) : m)
}

/** X.690 §8.6: a BIT STRING of whole octets (no unused bits). */
export const bitString = (bytes: Buffer): Buffer => tlv(TAG.bitString, Buffer.from([0]), bytes)

/** RFC 5280 §4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050; whole seconds, Zulu. */
export function time(d: Date): Buffer {
  const iso = d.toISOString() // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '')
  const year = d.getUTCFullYear()
  return year >= 1950 && year <= 2049
    ? tlv(TAG.utcTime, Buffer.from(`${digits.slice(2)}Z`, 'latin1'))
    : tlv(TAG.generalizedTime, Buffer.from(`${digits}Z`, 'latin1'))
}

// ---- reading ------------------------------------------------------------------------------

export interface Node {
  tag: number
  /** Offset of the tag octet in the buffer read. */
  start: number
  /** Offset of the first contents octet. */
  body: number
  /** Offset just past the contents. */
  end: number
}

/** Thrown for anything that is not the strict DER the reader expects. */
export class DerError extends Error {}

/** The TLV at `at`, within `limit`; refuses indefinite and non-minimal lengths (X.690 §10.1). */
export function readNode(buf: Buffer, at: number, limit = buf.length): Node {
  if (at + 2 > limit) throw new DerError('truncated')
  const tag = buf[at]
  if ((tag & 0x1f) === 0x1f) throw new DerError('high tag numbers are not used here')
  let len = buf[at + 1]
  let body = at + 2
  if (len & 0x80) {
    const n = len & 0x7f
    if (n === 0 || n > 4 || body + n > limit) throw new DerError('bad length')
    len = 0
    for (let i = 0; i < n; i++) len = len * 256 + buf[body + i]
    if (len < 0x80 || buf[body] === 0) throw new DerError('non-minimal length')
    body += n
  }
  const end = body + len
  if (end > limit) throw new DerError('truncated')
  return { tag, start: at, body, end }
}

/** The children of a constructed node, in order. */
export function children(buf: Buffer, n: Node): Node[] {
  const out: Node[] = []
  for (let at = n.body; at < n.end;) {
    const c = readNode(buf, at, n.end)
    out.push(c)
    at = c.end
  }
  return out
}

/** Expects `tag` at `n`; returns `n`. */
export function expect(n: Node | undefined, tag: number): Node {
  if (!n || n.tag !== tag) throw new DerError(`expected tag ${tag}`)
  return n
}

/** The dotted form of an OBJECT IDENTIFIER node. */
export function oidOf(buf: Buffer, n: Node): string {
  expect(n, TAG.oid)
  const arcs: number[] = []
  let v = 0
  for (let i = n.body; i < n.end; i++) {
    v = v * 128 + (buf[i] & 0x7f)
    if (!(buf[i] & 0x80)) {
      if (arcs.length === 0) arcs.push(v < 80 ? Math.floor(v / 40) : 2, v < 80 ? v % 40 : v - 80)
      else arcs.push(v)
      v = 0
    }
  }
  return arcs.join('.')
}

export const bytesOf = (buf: Buffer, n: Node): Buffer => buf.subarray(n.start, n.end)
export const contentsOf = (buf: Buffer, n: Node): Buffer => buf.subarray(n.body, n.end)
