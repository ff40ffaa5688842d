/**
 * One TLS handshake with a server, as a browser or a mail client makes it: SNI set to the name
 * checked (RFC 6066 §3), and for mail servers TLS started inside the protocol first (SMTP
 * STARTTLS, RFC 3207; IMAP STARTTLS, RFC 9051 §6.2.1; POP3 STLS, RFC 2595 §4). The answer is
 * what the server sent: its leaf and the certificates it sent with it. Nothing is trusted or
 * refused here; the verdict (verdict.ts) compares what was served with what was issued.
 *
 * Every probe ends within its time-out, reads at most a few kilobytes before the handshake, and
 * always destroys its socket, so a scan of hundreds of endpoints leaves no socket behind.
 */
import { X509Certificate } from 'node:crypto'
import { connect as netConnect, type Socket } from 'node:net'
import { connect as tlsConnect, type DetailedPeerCertificate, type PeerCertificate, type TLSSocket } from 'node:tls'

import type { StartTls } from '../../../src-shared/records'

export type { StartTls }

export interface ProbeTarget {
  /** The name sent as SNI and matched against the certificate. */
  host: string
  /** Where to connect: an IP address. */
  address: string
  port: number
  starttls?: StartTls | null
}

export type ProbeResult =
  | { reachable: true; leaf: X509Certificate; sent: X509Certificate[]; protocol: string | null }
  | { reachable: false; reason: string }

/** How long one endpoint may take, from connect to the end of the handshake. */
export const PROBE_TIMEOUT_MS = 5000
/** A greeting or reply line longer than this is not a mail server talking. */
const MAX_DIALOG_BYTES = 8192
/** Certificates kept from one server; a real chain has 2 to 4. */
const MAX_CHAIN = 10

/** The steps of each STARTTLS dialog: what to send, and what the reply must start with. */
const DIALOGS: Record<StartTls, { greeting: RegExp; steps: { send: string; expect: RegExp }[] }> = {
  // RFC 5321 §4.2: the last line of a multi-line reply has a space after the code.
  smtp: {
    greeting: /^220 /m,
    steps: [
      { send: 'EHLO certdesk.invalid\r\n', expect: /^250 /m },
      { send: 'STARTTLS\r\n', expect: /^220 /m }
    ]
  },
  imap: { greeting: /^\* OK/m, steps: [{ send: 'a1 STARTTLS\r\n', expect: /^a1 OK/m }] },
  pop3: { greeting: /^\+OK/m, steps: [{ send: 'STLS\r\n', expect: /^\+OK/m }] }
}

/** Refusals a mail server can give in its own protocol: shown as they came, cut short. */
const REFUSAL = /^(?:[45]\d\d[ -]|a1 (?:NO|BAD)|-ERR)/m

export function probe(target: ProbeTarget, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let plain: Socket | null = null
    let tls: TLSSocket | null = null
    let settled = false
    const finish = (r: ProbeResult): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      tls?.destroy()
      plain?.destroy()
      resolve(r)
    }
    const fail = (reason: string): void => finish({ reachable: false, reason })
    const timer = setTimeout(() => fail(`no answer within ${timeoutMs / 1000} s`), timeoutMs)

    const handshake = (socket?: Socket): void => {
      tls = tlsConnect({
        ...(socket ? { socket } : { host: target.address, port: target.port }),
        servername: isIpLiteral(target.host) ? undefined : target.host,
        // What is served is compared, not trusted: a wrong or expired certificate is a verdict.
        rejectUnauthorized: false,
        // No trust store: the chain below is then only what the server sent (Node completes a
        // chain from its store when it can, which would hide a missing intermediate).
        ca: []
      })
      tls.once('secureConnect', () => {
        const t = tls as TLSSocket
        try {
          const peer = t.getPeerCertificate(true)
          if (!peer || !peer.raw) return fail('the server sent no certificate')
          const sent = chainOf(peer)
          finish({ reachable: true, leaf: sent[0], sent, protocol: t.getProtocol() })
        } catch (err) {
          fail(`could not read the certificate it sent: ${(err as Error).message}`)
        }
      })
      tls.once('error', (err) => fail(describe(err)))
    }

    if (!target.starttls) {
      handshake()
      return
    }
    const dialog = DIALOGS[target.starttls]
    plain = netConnect({ host: target.address, port: target.port })
    plain.once('error', (err) => fail(describe(err)))
    let buffered = ''
    let step = -1
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString('latin1')
      if (buffered.length > MAX_DIALOG_BYTES) return fail(`${target.starttls} server sent too much before TLS`)
      const expect = step < 0 ? dialog.greeting : dialog.steps[step].expect
      if (REFUSAL.test(buffered) && !expect.test(buffered)) {
        return fail(`${target.starttls} server refused: ${printable(buffered)}`)
      }
      if (!expect.test(buffered)) return
      buffered = ''
      step++
      if (step < dialog.steps.length) {
        plain?.write(dialog.steps[step].send)
        return
      }
      plain?.off('data', onData)
      handshake(plain as Socket)
    }
    plain.on('data', onData)
    plain.once('end', () => fail(`${target.starttls} server closed the connection before TLS`))
  })
}

/** The leaf first, then each certificate the server sent that issued the one before. */
function chainOf(peer: DetailedPeerCertificate): X509Certificate[] {
  const out: X509Certificate[] = []
  const seen = new Set<string>()
  let c: PeerCertificate | DetailedPeerCertificate | undefined = peer
  while (c?.raw && out.length < MAX_CHAIN && !seen.has(c.fingerprint256)) {
    seen.add(c.fingerprint256)
    out.push(new X509Certificate(c.raw))
    c = (c as DetailedPeerCertificate).issuerCertificate
  }
  return out
}

function isIpLiteral(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(':')
}

function describe(err: Error & { code?: string }): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused'
    case 'ECONNRESET':
      return 'connection reset'
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'no route to the address'
    default:
      return err.code ? `${err.code}: ${err.message}` : err.message
  }
}

/** A server's line as a log or a badge may show it: printable ASCII only, cut short. */
function printable(s: string): string {
  const clean = s.replace(/[^\x20-\x7e]+/g, ' ').trim()
  return clean.length > 120 ? `${clean.slice(0, 120)}…` : clean
}
