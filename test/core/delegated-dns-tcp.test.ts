/**
 * The delegated-zone responder over TCP (RFC 7766) against clients that try to keep it busy,
 * with real sockets on loopback: 10,000 queries pipelined on one connection get at most the
 * per-connection bound answered (each answer is a store read on the API's event loop), a client
 * that trickles its query is cut at the connection's total deadline, and connections beyond the
 * caps (per client address and in all) are refused while UDP and fresh TCP connections keep
 * working. Bounds asserted are generous upper limits, never speed targets.
 */
import { createSocket } from 'node:dgram'
import { connect, type Socket } from 'node:net'
import dnsPacket from 'dns-packet'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  MAX_QUERIES_PER_CONNECTION,
  MAX_TCP_CONNECTIONS,
  MAX_TCP_PER_ADDRESS,
  startDelegatedDns,
  TCP_CONNECTION_MS,
  type RunningDelegatedDns
} from '../../src-main/core/dcv/delegated-dns-server'
import { within } from '../support/slow-peers'

const ZONE = 'acme.reseller.test'
const NAME = `dabc123.${ZONE}`
let dns: RunningDelegatedDns
let reads = 0

beforeAll(async () => {
  dns = await startDelegatedDns({
    host: '127.0.0.1',
    port: 0,
    zone: ZONE,
    values: async (label) => {
      reads++
      return label === 'dabc123' ? ['digest-one'] : []
    }
  })
})
afterAll(async () => {
  await dns?.close()
})

const query = (id = 7): Buffer =>
  dnsPacket.encode({ type: 'query', id, flags: 0, questions: [{ type: 'TXT', name: NAME, class: 'IN' }] })
/** RFC 1035 §4.2.2: each message over TCP behind a two-byte length. */
const framed = (msg: Buffer): Buffer => {
  const head = Buffer.alloc(2)
  head.writeUInt16BE(msg.length)
  return Buffer.concat([head, msg])
}

/** A TCP client that counts the answers it gets and knows when the server closed it. */
interface Client {
  socket: Socket
  answers: number
  closed: Promise<void>
  isClosed(): boolean
  /** Resolves with true at the next answer, false if the connection closes first. */
  nextAnswer(): Promise<boolean>
}

function client(localAddress = '127.0.0.1'): Promise<Client> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port: dns.port, host: '127.0.0.1', localAddress })
    let buf = Buffer.alloc(0)
    let isClosed = false
    let waiters: ((got: boolean) => void)[] = []
    const c: Client = {
      socket,
      answers: 0,
      closed: new Promise((r) =>
        socket.once('close', () => {
          isClosed = true
          for (const w of waiters) w(false)
          waiters = []
          r()
        })
      ),
      isClosed: () => isClosed,
      nextAnswer: () => (isClosed ? Promise.resolve(false) : new Promise((r) => waiters.push(r)))
    }
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d])
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        buf = buf.subarray(2 + buf.readUInt16BE(0))
        c.answers++
        for (const w of waiters) w(true)
        waiters = []
      }
    })
    socket.on('error', () => undefined)
    socket.once('connect', () => resolve(c))
    socket.once('error', reject)
  })
}

/** One query over TCP on a new connection: true when it was answered. */
async function tcpAnswers(localAddress = '127.0.0.1'): Promise<boolean> {
  const c = await client(localAddress)
  const got = c.nextAnswer()
  c.socket.write(framed(query()))
  const answered = await got
  c.socket.destroy()
  return answered
}

/**
 * A query over TCP is answered once the server has seen the closes the client just made (it
 * counts a connection until its own side closes, a moment after the client's): tried for up to 5 s.
 */
async function tcpAnswersSoon(localAddress: string): Promise<boolean> {
  const stopAt = Date.now() + 5000
  while (!(await tcpAnswers(localAddress))) {
    if (Date.now() > stopAt) return false
    await new Promise((r) => setTimeout(r, 100))
  }
  return true
}

function udpAnswers(): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createSocket('udp4')
    const timer = setTimeout(() => {
      s.close()
      resolve(false)
    }, 5000)
    s.on('message', () => {
      clearTimeout(timer)
      s.close()
      resolve(true)
    })
    s.send(query(), dns.port, '127.0.0.1')
  })
}

/**
 * Opens a connection that the server has counted (it answered one query), then keeps it busy
 * with a query sent one byte a second, so neither side's idle time-out ends it.
 */
async function held(localAddress: string): Promise<Client & { release(): void }> {
  let c = await client(localAddress)
  // Connections an earlier test closed may be counted for a moment more, until the server sees them close.
  for (let attempt = 1; ; attempt++) {
    const got = c.nextAnswer()
    c.socket.write(framed(query()))
    if (await got) break
    if (attempt === 20) throw new Error(`the server refused a connection from ${localAddress} below its caps`)
    await new Promise((r) => setTimeout(r, 100))
    c = await client(localAddress)
  }
  const next = framed(query(8))
  let i = 0
  const timer = setInterval(() => {
    if (i < next.length && !c.isClosed()) c.socket.write(next.subarray(i, ++i))
  }, 1000)
  return {
    ...c,
    release: () => {
      clearInterval(timer)
      c.socket.destroy()
    }
  }
}

describe('the DNS responder over TCP', () => {
  it('answers at most its bound of 10,000 queries pipelined on one connection, then closes it', async () => {
    const c = await client()
    reads = 0
    const all = Buffer.concat(Array.from({ length: 10_000 }, (_, i) => framed(query(i))))
    c.socket.write(all)
    await within(c.closed, 60_000, 'the server to close the pipelining connection')
    expect(c.answers).toBeGreaterThanOrEqual(1)
    expect(c.answers).toBeLessThanOrEqual(MAX_QUERIES_PER_CONNECTION)
    expect(reads).toBeLessThanOrEqual(MAX_QUERIES_PER_CONNECTION)
    // The responder is still there for everyone else.
    expect(await udpAnswers()).toBe(true)
    expect(await tcpAnswers()).toBe(true)
  })

  it('cuts a client that trickles its query at the connection deadline, unanswered', async () => {
    const c = await client()
    const msg = framed(query())
    let i = 0
    // One byte every two seconds: never idle long enough for an idle time-out, and the whole
    // query would take about 90 s to arrive.
    const timer = setInterval(() => {
      if (i < msg.length && !c.isClosed()) c.socket.write(msg.subarray(i, ++i))
    }, 2000)
    c.socket.write(msg.subarray(0, ++i))
    try {
      await within(c.closed, TCP_CONNECTION_MS + 30_000, 'the server to cut the trickling client')
    } finally {
      clearInterval(timer)
    }
    expect(i).toBeLessThan(msg.length)
    expect(c.answers).toBe(0)
  }, 120_000)

  it('refuses connections beyond the cap of one client address; others, UDP and later connections still work', async () => {
    const hold = await Promise.all(Array.from({ length: MAX_TCP_PER_ADDRESS }, () => held('127.0.0.1')))
    try {
      expect(await tcpAnswers('127.0.0.1')).toBe(false)
      expect(await tcpAnswers('127.0.0.2')).toBe(true)
      expect(await udpAnswers()).toBe(true)
    } finally {
      for (const h of hold) h.release()
    }
    await Promise.all(hold.map((h) => h.closed))
    expect(await tcpAnswersSoon('127.0.0.1')).toBe(true)
  }, 60_000)

  it('refuses connections beyond the cap in all; UDP and connections after the others close still work', async () => {
    // Spread over as many client addresses as the per-address cap needs.
    const addresses = Array.from(
      { length: MAX_TCP_CONNECTIONS },
      (_, i) => `127.0.1.${Math.floor(i / MAX_TCP_PER_ADDRESS) + 1}`
    )
    const hold = await Promise.all(addresses.map((a) => held(a)))
    try {
      expect(await tcpAnswers('127.0.2.1')).toBe(false)
      expect(await udpAnswers()).toBe(true)
    } finally {
      for (const h of hold) h.release()
    }
    await Promise.all(hold.map((h) => h.closed))
    expect(await tcpAnswersSoon('127.0.2.1')).toBe(true)
  }, 60_000)
})
