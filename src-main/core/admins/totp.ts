/**
 * Time-based one-time passwords, RFC 6238 over HOTP (RFC 4226), with the parameters every
 * authenticator app reads from an otpauth:// URI without asking: HMAC-SHA-1, 6 digits, 30-second
 * steps (RFC 6238 §4 and §5.2; Google Authenticator's Key Uri Format ignores other values on
 * several apps).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/** RFC 6238 §5.2: 30 seconds is the recommended time step. */
export const TOTP_STEP_SECONDS = 30
export const TOTP_DIGITS = 6
/**
 * RFC 6238 §5.2 allows at most one step of clock drift or network delay either way; a wider
 * window gives a guessed code more steps to hit.
 */
export const TOTP_WINDOW_STEPS = 1
/** RFC 4226 §4 (R6): a shared secret of 160 bits, the length of an HMAC-SHA-1 output. */
export const TOTP_SECRET_BYTES = 20

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

/** RFC 4648 §6 base32 without padding, as otpauth:// URIs carry it. */
export function base32Encode(bytes: Buffer): string {
  let out = ''
  let bits = 0
  let value = 0
  for (const b of bytes) {
    value = (value << 8) | b
    bits += 8
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31]
  return out
}

/** Base32 as people type it: case and spaces ignored, padding allowed; null when it is not base32. */
export function base32Decode(text: string): Buffer | null {
  const clean = text.replace(/[\s=]/g, '').toUpperCase()
  const out: number[] = []
  let bits = 0
  let value = 0
  for (const ch of clean) {
    const i = BASE32.indexOf(ch)
    if (i < 0) return null
    value = ((value << 5) | i) & 0xffff
    bits += 5
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff)
      bits -= 8
    }
  }
  return Buffer.from(out)
}

/** RFC 4226 §5.3: HMAC-SHA-1 of the 8-byte counter, dynamically truncated to `digits`. */
export function hotp(key: Buffer, counter: number, digits = TOTP_DIGITS): string {
  const msg = Buffer.alloc(8)
  msg.writeBigUInt64BE(BigInt(counter))
  const mac = createHmac('sha1', key).update(msg).digest()
  const offset = mac[mac.length - 1] & 0x0f
  const code = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits
  return String(code).padStart(digits, '0')
}

/** RFC 6238 §4.2: T = floor((Unix time - T0) / X), T0 = 0. */
export const totpStep = (at: Date): number => Math.floor(at.getTime() / 1000 / TOTP_STEP_SECONDS)

/** The code of `key` for the step holding `at`. */
export const totpCode = (key: Buffer, at: Date, digits = TOTP_DIGITS): string => hotp(key, totpStep(at), digits)

/**
 * The step whose code `typed` is, within one step of `at`, or null. Spaces between digits are
 * allowed (apps show "123 456"); every step in the window is compared in constant time.
 */
export function matchTotp(key: Buffer, typed: string, at: Date): number | null {
  const code = typed.replace(/\s/g, '')
  if (!new RegExp(`^\\d{${TOTP_DIGITS}}$`).test(code)) return null
  const now = totpStep(at)
  let found: number | null = null
  for (let step = now - TOTP_WINDOW_STEPS; step <= now + TOTP_WINDOW_STEPS; step++) {
    if (timingSafeEqual(Buffer.from(hotp(key, step)), Buffer.from(code)) && found === null) found = step
  }
  return found
}

export const newTotpSecret = (): Buffer => randomBytes(TOTP_SECRET_BYTES)

/**
 * The otpauth:// URI an authenticator app takes (Key Uri Format): the label `issuer:account`,
 * the secret, and the parameters written out even though they are the defaults.
 */
export function otpauthUri(issuer: string, account: string, secret: Buffer): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`
  const q = new URLSearchParams({
    secret: base32Encode(secret),
    issuer,
    algorithm: 'SHA1',
    digits: String(TOTP_DIGITS),
    period: String(TOTP_STEP_SECONDS)
  })
  return `otpauth://totp/${label}?${q.toString()}`
}
