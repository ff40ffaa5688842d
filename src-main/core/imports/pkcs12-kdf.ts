/**
 * The PKCS#12 key derivation (RFC 7292 Appendix B.2) run in a worker thread. A PFX file names
 * its own iteration count, so one derivation can be seconds of hashing; on the thread that
 * answers the API that would stop every request until it ends. Node offers no asynchronous form
 * of this derivation (only of PBKDF2), so it runs in a short-lived worker, one per derivation.
 *
 * The worker is plain JavaScript given as source text: it must run the same from the bundled
 * main process, the CLI and the tests, none of which can load a TypeScript file in a worker.
 */
import { Worker } from 'node:worker_threads'

/** RFC 7292 Appendix B.3: ID 1 derives an encryption key, 2 an IV, 3 a MAC key. */
export const PKCS12_MAC_ID = 3

/** Output size u and block size v (bytes) of each hash RFC 7292 Appendix B.2 is used with. */
const HASHES: Record<string, { node: string; u: number; v: number }> = {
  'SHA-1': { node: 'sha1', u: 20, v: 64 },
  'SHA-256': { node: 'sha256', u: 32, v: 64 },
  'SHA-384': { node: 'sha384', u: 48, v: 128 },
  'SHA-512': { node: 'sha512', u: 64, v: 128 }
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const { createHash } = require('node:crypto')
const { hash, u, v, id, iterations, length } = workerData
const password = Buffer.from(workerData.password)
const salt = Buffer.from(workerData.salt)
const repeat = (src, len) => {
  const out = Buffer.alloc(len)
  for (let i = 0; i < len; i++) out[i] = src[i % src.length]
  return out
}
const D = Buffer.alloc(v, id)
const I = Buffer.concat([
  salt.length ? repeat(salt, v * Math.ceil(salt.length / v)) : Buffer.alloc(0),
  password.length ? repeat(password, v * Math.ceil(password.length / v)) : Buffer.alloc(0)
])
const parts = []
for (let n = 0; n < Math.ceil(length / u); n++) {
  let A = createHash(hash).update(D).update(I).digest()
  for (let r = 1; r < iterations; r++) A = createHash(hash).update(A).digest()
  parts.push(A)
  const B = repeat(A, v)
  for (let j = 0; j < I.length; j += v) {
    let carry = 1
    for (let k = v - 1; k >= 0; k--) {
      const x = I[j + k] + B[k] + carry
      I[j + k] = x & 0xff
      carry = x >> 8
    }
  }
}
parentPort.postMessage(Buffer.concat(parts).subarray(0, length))
`

/** The hash's output size in bytes, or null for a hash RFC 7292 is not used with here. */
export function pkcs12HashSize(hash: string): number | null {
  return HASHES[hash.toUpperCase()]?.u ?? null
}

/**
 * The password as RFC 7292 Appendix B.1 wants it: a BMPString (UTF-16 big-endian) with two zero
 * bytes at the end, from the UTF-8 text the user typed, as OpenSSL 3 and pkijs make it.
 */
export function bmpPassword(utf8: ArrayBuffer | Uint8Array): Buffer {
  const text = Buffer.from(utf8 instanceof Uint8Array ? utf8 : new Uint8Array(utf8)).toString('utf8')
  return Buffer.from(`${text}\0`, 'utf16le').swap16()
}

/** Derives `length` bytes with RFC 7292 Appendix B.2 in a worker thread. */
export function pkcs12Derive(opts: {
  hash: string
  id: number
  password: Buffer
  salt: Uint8Array
  iterations: number
  length: number
}): Promise<Buffer> {
  const h = HASHES[opts.hash.toUpperCase()]
  if (!h) return Promise.reject(new Error(`unsupported hash ${opts.hash}`))
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        hash: h.node,
        u: h.u,
        v: h.v,
        id: opts.id,
        iterations: opts.iterations,
        length: opts.length,
        password: opts.password,
        salt: opts.salt
      },
      // Hashing needs no more than a few megabytes; a bound keeps a fault from growing the app.
      resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 8 }
    })
    let done = false
    worker.once('message', (key: Uint8Array) => {
      done = true
      resolve(Buffer.from(key))
      void worker.terminate()
    })
    worker.once('error', (err) => {
      done = true
      reject(err)
    })
    worker.once('exit', (code) => {
      if (!done) reject(new Error(`the key derivation stopped (exit ${code})`))
    })
  })
}
