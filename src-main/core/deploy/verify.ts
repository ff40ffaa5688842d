/**
 * Verify after reload: once an order's command target ran (the reload), CertDesk connects over
 * TLS to each host:port the target declares and checks that the new certificate is the one
 * served. A reload that exits 0 but leaves the old certificate in place (a server that did not
 * reload, a config that reads other files) is a failed deploy. The hosts are the admin's own
 * servers, so private addresses are fine here; every connection is bounded in time and the
 * server's chain is compared by fingerprint, never stored. The time-outs count real elapsed time
 * (a monotonic clock), not the business clock of the context.
 */
import { X509Certificate } from 'node:crypto'
import { isIP } from 'node:net'
import { performance } from 'node:perf_hooks'
import { connect } from 'node:tls'

export interface VerifyEndpoint {
  host: string
  port: number
}

/** A handful of servers per target; more is a typo or a paste accident. */
export const MAX_VERIFY_ENDPOINTS = 8
/** One TLS handshake may take this long (a dropped SYN, a server that never answers). */
export const VERIFY_CONNECT_MS = 5_000
/** A graceful reload finishes in well under this; the served certificate is polled until then. */
export const VERIFY_DEADLINE_MS = 15_000
const POLL_MS = 200
/** Answers in a row, POLL_MS apart, that must carry the new certificate. */
const STABLE_MATCHES = 3

/** RFC 1123 §2.1 host names (letters, digits, hyphens; labels of 1-63, at most 253 in all). */
const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i

/** Parses "host:port" or "[v6]:port"; null with the problem on bad input. */
export function parseEndpoint(text: string): VerifyEndpoint | string {
  const t = String(text ?? '').trim()
  const m = /^\[([0-9a-f:.]+)\]:(\d{1,5})$/i.exec(t) ?? /^([^:\s[\]]+):(\d{1,5})$/.exec(t)
  if (!m) return `"${t.slice(0, 80)}" is not host:port (an IPv6 address goes in brackets: [::1]:443)`
  const host = m[1].toLowerCase()
  const port = Number(m[2])
  if (!(isIP(host) || HOST_NAME.test(host))) return `"${host.slice(0, 80)}" is not a host name or IP address`
  if (!Number.isInteger(port) || port < 1 || port > 65535) return `port ${m[2]} is not 1 to 65535`
  return { host, port }
}

export const endpointText = (e: VerifyEndpoint): string =>
  isIP(e.host) === 6 ? `[${e.host}]:${e.port}` : `${e.host}:${e.port}`

/** The certificate served at an endpoint: its fingerprint and serial, or why none was read. */
export function servedCertificate(
  e: VerifyEndpoint,
  serverName: string,
  timeoutMs = VERIFY_CONNECT_MS
): Promise<{ fingerprint: string; serial: string } | { error: string }> {
  return new Promise((resolve) => {
    let done = false
    const finish = (r: { fingerprint: string; serial: string } | { error: string }): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resolve(r)
    }
    // Trust is not the question here (the served certificate is compared with the one just
    // deployed, byte for byte), so the chain is not checked against a trust store.
    const socket = connect({
      host: e.host,
      port: e.port,
      servername: isIP(serverName) ? undefined : serverName,
      rejectUnauthorized: false,
      ALPNProtocols: ['http/1.1']
    })
    const timer = setTimeout(() => finish({ error: `no TLS handshake within ${timeoutMs / 1000} s` }), timeoutMs)
    socket.once('secureConnect', () => {
      const raw = socket.getPeerCertificate()?.raw
      if (!raw) return finish({ error: 'the server sent no certificate' })
      const c = new X509Certificate(raw)
      finish({ fingerprint: c.fingerprint256, serial: c.serialNumber.toUpperCase() })
    })
    socket.once('error', (err) => finish({ error: (err as NodeJS.ErrnoException).code ?? err.message }))
  })
}

/**
 * Polls every endpoint until it serves `certificatePem` or the deadline passes; returns null
 * when all do, else the admin's account of the first that does not.
 */
export async function verifyServed(
  endpoints: VerifyEndpoint[],
  certificatePem: string,
  serverName: string,
  deadlineMs = VERIFY_DEADLINE_MS
): Promise<string | null> {
  const want = new X509Certificate(certificatePem)
  const serial = want.serialNumber.toUpperCase()
  const stopAt = performance.now() + deadlineMs
  for (const e of endpoints) {
    let matches = 0
    for (;;) {
      const left = stopAt - performance.now()
      const got = await servedCertificate(e, serverName, Math.max(500, Math.min(VERIFY_CONNECT_MS, left)))
      const match = 'fingerprint' in got && got.fingerprint === want.fingerprint256
      // During a graceful reload old and new workers both accept for a moment: one answer with
      // the new certificate is not yet "served", STABLE_MATCHES in a row are.
      matches = match ? matches + 1 : 0
      if (matches >= STABLE_MATCHES) break
      if (!match && performance.now() + POLL_MS >= stopAt) {
        return 'fingerprint' in got
          ? `${endpointText(e)} serves certificate ${got.serial}, not the deployed ${serial}`
          : `could not read the certificate served at ${endpointText(e)}: ${got.error}`
      }
      await new Promise((r) => setTimeout(r, POLL_MS))
    }
  }
  return null
}
