/**
 * Peers that never finish an answer, on loopback, for the tests that every connection CertDesk
 * opens ends by a total deadline. Each is a real socket server written at the byte level, so it
 * can misbehave where a framework would not let it:
 *
 * - a web server (plain or TLS) that picks its behaviour by the request's Host header: a good
 *   answer from its files, an answer trickled one byte every TRICKLE_MS (in the status line and
 *   headers, or in the body), silence (reads the request, never answers), or an endless body sent
 *   as fast as the client reads it;
 * - an SMTP server that greets at once, then trickles its EHLO reply one byte at a time;
 * - a STARTTLS server that trickles its greeting.
 *
 * Each counts its connections: how many came, how many are open now, and the most open at once.
 */
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { createServer as createTlsServer } from 'node:tls'
import { selfSignedTls } from './dcv-servers'

/** Under every idle time-out CertDesk had (5 s), so an idle limit alone never ends the exchange. */
export const TRICKLE_MS = 2000

export type Behaviour = 'good' | 'trickle-head' | 'trickle-body' | 'silent' | 'flood'

export interface PeerStats {
  connections: number
  open: number
  maxOpen: number
  /** Bytes written by `flood` answers. */
  flooded: number
}

const newStats = (): PeerStats => ({ connections: 0, open: 0, maxOpen: 0, flooded: 0 })

/** Counts a connection for `stats` while it is open. */
function track(sock: Socket, ...all: PeerStats[]): void {
  for (const s of all) {
    s.connections++
    s.open++
    s.maxOpen = Math.max(s.maxOpen, s.open)
  }
  sock.once('close', () => {
    for (const s of all) s.open--
  })
}

/** Writes `next()` one byte every TRICKLE_MS until the socket closes (or `forMs` passes). */
function trickle(sock: Socket, bytes: () => string, forMs = 10 * 60_000): void {
  const stopAt = Date.now() + forMs
  const timer = setInterval(() => {
    if (sock.destroyed || Date.now() > stopAt) {
      clearInterval(timer)
      sock.destroy()
      return
    }
    sock.write(bytes())
  }, TRICKLE_MS)
  sock.once('close', () => clearInterval(timer))
}

/** The bytes of `text`, one per call, then those of `filler` over and over. */
function byteByByte(text: string, filler: string): () => string {
  let i = 0
  return () => (i < text.length ? text[i++] : filler[(i++ - text.length) % filler.length])
}

export interface SlowWeb {
  port: number
  /** How requests for `host` are answered (unknown hosts get 404). */
  behave(host: string, b: Behaviour): void
  /** The body `good` serves at `path` for `host`. */
  put(host: string, path: string, body: string): void
  stats(host: string): PeerStats
  /** All hosts together. */
  total: PeerStats
  /** All hosts that do not answer `good`, together. */
  slow: PeerStats
  close(): Promise<void>
}

/** A web server for many hosts on one port, as the DCV port settings need (one port for every domain). */
export async function startSlowWeb(opts: { tls?: boolean } = {}): Promise<SlowWeb> {
  const behaviours = new Map<string, Behaviour>()
  const files = new Map<string, string>()
  const perHost = new Map<string, PeerStats>()
  const total = newStats()
  const slow = newStats()
  const statsOf = (host: string): PeerStats => {
    let s = perHost.get(host)
    if (!s) perHost.set(host, (s = newStats()))
    return s
  }
  const sockets = new Set<Socket>()
  const onConnection = (sock: Socket): void => {
    sockets.add(sock)
    sock.once('close', () => sockets.delete(sock))
    sock.on('error', () => undefined)
    let head = ''
    const onData = (chunk: Buffer): void => {
      head += chunk.toString('latin1')
      if (!head.includes('\r\n\r\n')) {
        if (head.length > 16_384) sock.destroy()
        return
      }
      sock.off('data', onData)
      const [requestLine, ...lines] = head.split('\r\n')
      const path = requestLine.split(' ')[1] ?? '/'
      const hostLine = lines.find((l) => /^host:/i.test(l)) ?? ''
      const host = hostLine.slice(5).trim().replace(/:\d+$/, '').toLowerCase()
      const b = behaviours.get(host)
      track(sock, statsOf(host), total, ...(b && b !== 'good' ? [slow] : []))
      answer(sock, host, path)
    }
    sock.on('data', onData)
  }
  const answer = (sock: Socket, host: string, path: string): void => {
    const b = behaviours.get(host)
    if (b === 'silent') return
    if (b === 'trickle-head') return trickle(sock, byteByByte('HTTP/1.1 200 OK\r\nX-Slow: ', 'a'))
    if (b === 'trickle-body') {
      sock.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 1000000\r\n\r\n')
      return trickle(sock, () => 'a')
    }
    if (b === 'flood') {
      // No length: the body ends when the connection does, which is never unless the client hangs up.
      sock.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n')
      const block = Buffer.alloc(64 * 1024, 'x')
      const pump = (): void => {
        while (!sock.destroyed && sock.write(block)) statsOf(host).flooded += block.length
        if (!sock.destroyed) statsOf(host).flooded += block.length
      }
      sock.on('drain', pump)
      pump()
      return
    }
    const body = b === 'good' ? files.get(`${host}${path}`) : undefined
    const status = body === undefined ? '404 Not Found' : '200 OK'
    const text = body ?? 'not found'
    sock.end(
      `HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`
    )
  }
  const server: Server = opts.tls ? createTlsServer(selfSignedTls(), onConnection) : createTcpServer(onConnection)
  // A TLS server's 'secureConnection' carries the decrypted socket; a handshake never finished
  // (the client gave up) is no connection of interest.
  server.on('tlsClientError', () => undefined)
  const port = await listen(server)
  return {
    port,
    behave: (host, b) => behaviours.set(host.toLowerCase(), b),
    put: (host, path, body) => files.set(`${host.toLowerCase()}${path}`, body),
    stats: statsOf,
    total,
    slow,
    close: () => stop(server, sockets)
  }
}

export interface SlowSmtp {
  /** `smtp://127.0.0.1:PORT`. */
  url: string
  port: number
  stats: PeerStats
  close(): Promise<void>
}

/**
 * Greets at once (a greeting time-out does not fire), then answers EHLO with an endless
 * multi-line reply, one byte every TRICKLE_MS, so the client waits for a last line that never comes.
 */
export async function startSlowSmtp(): Promise<SlowSmtp> {
  const peer = await tcpPeer((sock) => {
    sock.write('220 slow.test ESMTP\r\n')
    let said = ''
    const onData = (chunk: Buffer): void => {
      said += chunk.toString('latin1')
      if (!/^(EHLO|HELO) /im.test(said)) return
      sock.off('data', onData)
      trickle(sock, byteByByte('', '250-slow.test\r\n'))
    }
    sock.on('data', onData)
  })
  return { ...peer, url: `smtp://127.0.0.1:${peer.port}` }
}

/** A mail server that trickles its SMTP greeting, for STARTTLS probes: "220-" lines that never end. */
export function startTricklingGreeting(): Promise<{ port: number; stats: PeerStats; close(): Promise<void> }> {
  return tcpPeer((sock) => trickle(sock, byteByByte('', '220-slow.test\r\n')))
}

/** A plain TCP server that counts its connections and hands each to `talk`. */
async function tcpPeer(
  talk: (sock: Socket) => void
): Promise<{ port: number; stats: PeerStats; close(): Promise<void> }> {
  const stats = newStats()
  const sockets = new Set<Socket>()
  const server = createTcpServer((sock) => {
    sockets.add(sock)
    sock.once('close', () => sockets.delete(sock))
    sock.on('error', () => undefined)
    track(sock, stats)
    talk(sock)
  })
  const port = await listen(server)
  return { port, stats, close: () => stop(server, sockets) }
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port))
  })
}

function stop(server: Server, sockets: Set<Socket>): Promise<void> {
  for (const s of sockets) s.destroy()
  return new Promise((resolve) => server.close(() => resolve()))
}

/** Settles with `p`, or fails once `ms` have passed (a generous bound, never a speed target). */
export async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: still running after ${ms / 1000} s`)), ms)
      })
    ])
  } finally {
    clearTimeout(timer)
  }
}

/** Waits until `test()` holds, checking every 50 ms; fails after `ms` (a generous bound). */
export async function until(test: () => boolean, ms: number, what: string): Promise<void> {
  const stopAt = Date.now() + ms
  while (!test()) {
    if (Date.now() > stopAt) throw new Error(`gave up waiting for ${what} after ${ms / 1000} s`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
