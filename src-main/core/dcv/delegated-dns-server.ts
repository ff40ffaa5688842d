/**
 * CertDesk's authoritative DNS responder for the zone delegated to it (delegated-dns.ts), over
 * UDP and TCP (RFC 1035 §4.2, RFC 7766), built on dns-packet. It answers TXT queries for
 * `<label>.<zone>` from the published dns-01 values and nothing else:
 *
 * - names outside the zone get REFUSED, and it never recurses (RA is never set, RFC 1035 §4.1.1);
 * - the question name is read label by label from the wire first: a label holding a dot, a
 *   control or any byte outside letters, digits, `-` and `_` is refused, so a crafted label can
 *   never pass for a name in the zone (dns-packet joins labels with dots without escaping them);
 * - a query is one question of at most MAX_QUERY_BYTES, else FORMERR; a datagram that is itself
 *   a response is dropped (no reflection loops);
 * - memory and work are bounded: no state per UDP query; over TCP at most MAX_TCP_CONNECTIONS
 *   connections (MAX_TCP_PER_ADDRESS from one client), each holding at most one frame, answering
 *   at most MAX_QUERIES_PER_CONNECTION queries, and closed after TCP_IDLE_MS of silence or
 *   TCP_CONNECTION_MS in all, whatever the client sends.
 */
import { createSocket, type Socket } from 'node:dgram'
import { createServer, type Server, type Socket as TcpSocket } from 'node:net'
import dnsPacket, { type Answer, type Packet } from 'dns-packet'

/** A DNS query is one short name: 512 bytes is the classic UDP limit (RFC 1035 §2.3.4). */
export const MAX_QUERY_BYTES = 512
/** Answers over UDP without EDNS stay within 512 bytes; larger ones set TC (RFC 1035 §4.2.1). */
const UDP_ANSWER_BYTES = 512
/** EDNS(0) clients may take more (RFC 6891 §6.2.5); 1232 is the DNS Flag Day 2020 size. */
const EDNS_ANSWER_BYTES = 1232
/**
 * TCP connections open at once. A CA's resolvers come to TCP only after a truncated UDP answer
 * (RFC 7766 §5), a few at a time; 64 is far above that and keeps file descriptors in check.
 */
export const MAX_TCP_CONNECTIONS = 64
/**
 * TCP connections open at once from one client address (IPv6: one /64, what one host is given,
 * RFC 4291 §2.5.1), so a single client cannot take every place and shut CAs out of TCP.
 */
export const MAX_TCP_PER_ADDRESS = 8
/** Silence after which a TCP connection is closed (RFC 7766 §6.2.3 asks for seconds, not minutes). */
export const TCP_IDLE_MS = 5000
/**
 * How long one TCP connection may stay open in all. A client that sends a byte every few
 * seconds is never silent for TCP_IDLE_MS; this ends it anyway. A resolver sends its query
 * right after connecting and reads the answer at once: 10 s is ample even over a slow path.
 */
export const TCP_CONNECTION_MS = 10_000
/**
 * Queries answered on one TCP connection before it is closed. RFC 7766 §6.2.1 asks servers to
 * answer pipelined queries, and a resolver sends one or a few; each answer reads the store on the
 * event loop that also serves the API, so 10,000 pipelined queries must not mean 10,000 reads.
 */
export const MAX_QUERIES_PER_CONNECTION = 8
/** Short TTLs: a new dns-01 value must be seen at once, and a negative answer not kept long. */
const TTL = 60

const RCODE = { NOERROR: 0, FORMERR: 1, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const
const QR = 0x8000
const OPCODE_MASK = 0x7800
const SAFE_LABEL = /^[A-Za-z0-9_-]{1,63}$/

export interface DelegatedDnsOptions {
  host: string
  port: number
  /** The delegated zone, lower case without trailing dot. */
  zone: string
  /** The TXT values of `<label>.<zone>` (read per query: the store is the only state). */
  values(label: string): Promise<string[]>
}

export interface RunningDelegatedDns {
  host: string
  port: number
  close(): Promise<void>
}

/** The question's name from the wire, or null when a label is unsafe or compressed. */
function questionName(buf: Buffer): { name: string; end: number } | null {
  const labels: string[] = []
  let off = 12
  let total = 0
  for (;;) {
    if (off >= buf.length) return null
    const len = buf[off++]
    if (len === 0) break
    // A pointer (or a reserved label type) in a query's only name has nothing to point back to.
    if ((len & 0xc0) !== 0) return null
    if (off + len > buf.length) return null
    total += len + 1
    if (total > 254) return null
    const label = buf.toString('latin1', off, off + len)
    if (!SAFE_LABEL.test(label)) return null
    labels.push(label.toLowerCase())
    off += len
  }
  return { name: labels.join('.'), end: off }
}

/** A header-only answer, for queries too broken to decode (the id and RD come from the query). */
function bare(query: Buffer, rcode: number): Buffer {
  const out = Buffer.alloc(12)
  out.writeUInt16BE(query.readUInt16BE(0), 0)
  const flags = query.readUInt16BE(2)
  out.writeUInt16BE(QR | (flags & OPCODE_MASK) | (flags & dnsPacket.RECURSION_DESIRED) | rcode, 2)
  return out
}

/**
 * The answer to one query, or null to stay silent (a response, or too short to carry an id).
 * `maxBytes` is the transport's limit; UDP answers above it are truncated (TC set).
 */
export async function answer(
  query: Buffer,
  opts: DelegatedDnsOptions,
  transport: 'udp' | 'tcp'
): Promise<Buffer | null> {
  if (query.length < 12) return null
  const flags = query.readUInt16BE(2)
  if (flags & QR) return null
  if (query.length > MAX_QUERY_BYTES) return bare(query, RCODE.FORMERR)
  if ((flags & OPCODE_MASK) !== 0) return bare(query, RCODE.NOTIMP)
  const [qd, an, ns, ar] = [4, 6, 8, 10].map((o) => query.readUInt16BE(o))
  if (qd !== 1 || an !== 0 || ns !== 0 || ar > 1) return bare(query, RCODE.FORMERR)
  const q = questionName(query)
  if (!q) return bare(query, RCODE.REFUSED)
  let packet: Packet
  try {
    packet = dnsPacket.decode(query)
  } catch {
    return bare(query, RCODE.FORMERR)
  }
  const question = packet.questions?.[0] as { name: string; type: string; class?: string } | undefined
  if (!question) return bare(query, RCODE.FORMERR)
  const zone = opts.zone
  const name = q.name
  const inZone = name === zone || name.endsWith(`.${zone}`)
  const base = { id: packet.id, type: 'response' as const, questions: [{ ...question, name }] as Packet['questions'] }
  const rd = flags & dnsPacket.RECURSION_DESIRED
  if (!inZone || (question.class ?? 'IN') !== 'IN') return encode({ ...base, flags: rd | RCODE.REFUSED }, transport, 0)

  const soa: Answer = {
    type: 'SOA',
    name: zone,
    ttl: TTL,
    data: {
      mname: zone,
      rname: `hostmaster.${zone}`,
      serial: 1,
      refresh: 3600,
      retry: 600,
      expire: 86400,
      minimum: TTL
    }
  }
  const aa = dnsPacket.AUTHORITATIVE_ANSWER | rd
  const edns = packet.additionals?.find((a) => a.type === 'OPT') as { udpPayloadSize?: number } | undefined
  const limit = edns ? Math.min(Math.max(edns.udpPayloadSize ?? 512, 512), EDNS_ANSWER_BYTES) : UDP_ANSWER_BYTES
  if (name === zone) {
    const answers = question.type === 'SOA' || question.type === 'ANY' ? [soa] : []
    return encode({ ...base, flags: aa, answers, authorities: answers.length ? [] : [soa] }, transport, limit)
  }
  const label = name.slice(0, -zone.length - 1)
  const values = label.includes('.') ? [] : await opts.values(label)
  if (values.length === 0) return encode({ ...base, flags: aa | RCODE.NXDOMAIN, authorities: [soa] }, transport, limit)
  if (question.type !== 'TXT' && question.type !== 'ANY')
    return encode({ ...base, flags: aa, authorities: [soa] }, transport, limit)
  const answers: Answer[] = values.map((v) => ({ type: 'TXT', name, ttl: TTL, data: [v] }))
  return encode({ ...base, flags: aa, answers }, transport, limit)
}

function encode(p: Packet, transport: 'udp' | 'tcp', limit: number): Buffer {
  const out = dnsPacket.encode(p)
  if (transport === 'tcp' || limit === 0 || out.length <= limit) return out
  // RFC 1035 §4.2.1 / RFC 7766 §5: too big for UDP, the client retries over TCP.
  return dnsPacket.encode({ ...p, flags: (p.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE, answers: [], authorities: [] })
}

/** Whose share of the TCP connections a peer uses: its IPv4 address, or its IPv6 /64. */
function clientKey(address: string): string {
  const v4 = /^(?:::ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (v4) return v4[1]
  const [head, tail = ''] = address.toLowerCase().split('::')
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const groups = address.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left
  return groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')
}

/** Starts the responder on UDP and TCP at the same address and port. */
export async function startDelegatedDns(opts: DelegatedDnsOptions): Promise<RunningDelegatedDns> {
  const udp: Socket = createSocket({ type: opts.host.includes(':') ? 'udp6' : 'udp4' })
  udp.on('message', (msg, rinfo) => {
    void answer(msg, opts, 'udp')
      // SERVFAIL: the store could not be read
      .catch(() => (msg.length >= 12 ? bare(msg, 2) : null))
      .then((out) => {
        if (out) udp.send(out, rinfo.port, rinfo.address)
      })
  })
  udp.on('error', () => undefined)
  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject)
    udp.bind(opts.port, opts.host, () => {
      udp.off('error', reject)
      resolve()
    })
  })
  const port = udp.address().port
  const sockets = new Set<TcpSocket>()
  const perClient = new Map<string, number>()
  const tcp: Server = createServer((sock) => {
    const client = clientKey(sock.remoteAddress ?? '')
    const fromClient = perClient.get(client) ?? 0
    if (sockets.size >= MAX_TCP_CONNECTIONS || fromClient >= MAX_TCP_PER_ADDRESS) {
      sock.destroy()
      return
    }
    sockets.add(sock)
    perClient.set(client, fromClient + 1)
    const deadline = setTimeout(() => sock.destroy(), TCP_CONNECTION_MS)
    sock.on('close', () => {
      clearTimeout(deadline)
      sockets.delete(sock)
      const left = (perClient.get(client) ?? 1) - 1
      if (left > 0) perClient.set(client, left)
      else perClient.delete(client)
    })
    sock.on('error', () => undefined)
    sock.setTimeout(TCP_IDLE_MS, () => sock.destroy())
    let buf = Buffer.alloc(0)
    let queued = 0
    // Answers go out in the order of the queries, one store read at a time per connection.
    let replies = Promise.resolve()
    const reply = async (msg: Buffer, last: boolean): Promise<void> => {
      if (sock.destroyed) return
      const out = await answer(msg, opts, 'tcp').catch(() => (msg.length >= 12 ? bare(msg, 2) : null))
      if (!out) {
        sock.destroy()
        return
      }
      const head = Buffer.alloc(2)
      head.writeUInt16BE(out.length)
      // The last answer, then the connection ends.
      if (last) sock.end(Buffer.concat([head, out]))
      else sock.write(Buffer.concat([head, out]))
    }
    const onData = (chunk: Buffer): void => {
      buf = Buffer.concat([buf, chunk])
      // RFC 1035 §4.2.2: each message behind a two-byte length.
      while (buf.length >= 2) {
        const len = buf.readUInt16BE(0)
        if (len > MAX_QUERY_BYTES) {
          sock.destroy()
          return
        }
        if (buf.length < 2 + len) break
        const msg = buf.subarray(2, 2 + len)
        buf = buf.subarray(2 + len)
        queued++
        const last = queued >= MAX_QUERIES_PER_CONNECTION
        replies = replies.then(async () => await reply(msg, last))
        if (last) {
          // What else the client sent is not read.
          sock.off('data', onData)
          return
        }
      }
      if (buf.length > 2 + MAX_QUERY_BYTES) sock.destroy()
    }
    sock.on('data', onData)
  })
  tcp.maxConnections = MAX_TCP_CONNECTIONS
  await new Promise<void>((resolve, reject) => {
    tcp.once('error', reject)
    tcp.listen(port, opts.host, () => {
      tcp.off('error', reject)
      resolve()
    })
  }).catch((err: unknown) => {
    udp.close()
    throw err
  })
  return {
    host: opts.host,
    port,
    close: async () => {
      for (const s of sockets) s.destroy()
      await Promise.all([
        new Promise<void>((r) => udp.close(() => r())),
        new Promise<void>((r) => tcp.close(() => r()))
      ])
    }
  }
}

/**
 * The responder as the settings ask for it (`dns.delegated_zone` and `dns.listen`), or null
 * when delegation is not configured.
 */
export async function startConfiguredResponder(
  listen: string | null,
  dns: { zone(): Promise<string | null>; values(label: string): Promise<string[]> }
): Promise<RunningDelegatedDns | null> {
  const zone = await dns.zone()
  if (!zone || !listen) return null
  const m = /^(?:\[([0-9a-f:.]+)\]|([0-9.]+)):(\d+)$/i.exec(listen)
  if (!m) throw new Error(`could not start the DNS responder: ${listen} is not address:port`)
  return await startDelegatedDns({
    host: m[1] ?? m[2],
    port: Number(m[3]),
    zone,
    values: (label) => dns.values(label)
  })
}
