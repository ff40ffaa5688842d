/**
 * CertDesk's authoritative responder for the delegated zone, attacked over real UDP and TCP on
 * loopback: it answers TXT for `<label>.<zone>` only, refuses every other name without
 * recursing, survives malformed, oversized and hostile queries, and bounds its TCP state.
 */
import { createSocket } from 'node:dgram'
import { Resolver } from 'node:dns/promises'
import { connect, type Socket } from 'node:net'
import dnsPacket, { type Packet } from 'dns-packet'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  MAX_QUERY_BYTES,
  MAX_TCP_CONNECTIONS,
  startDelegatedDns,
  type RunningDelegatedDns
} from '../../src-main/core/dcv/delegated-dns-server'

const ZONE = 'acme.reseller.test'
const records = new Map<string, string[]>([['dabc123', ['digest-one', 'digest-two']]])
const asked: string[] = []
let dns: RunningDelegatedDns

beforeAll(async () => {
  dns = await startDelegatedDns({
    host: '127.0.0.1',
    port: 0,
    zone: ZONE,
    values: async (label) => {
      asked.push(label)
      return records.get(label) ?? []
    }
  })
})
afterAll(async () => {
  await dns?.close()
})

function udp(msg: Buffer, waitMs = 1000): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const s = createSocket('udp4')
    const timer = setTimeout(() => {
      s.close()
      resolve(null)
    }, waitMs)
    s.on('message', (m) => {
      clearTimeout(timer)
      s.close()
      resolve(m)
    })
    s.send(msg, dns.port, '127.0.0.1')
  })
}

const query = (name: string, type: string = 'TXT', flags = dnsPacket.RECURSION_DESIRED): Buffer =>
  dnsPacket.encode({ type: 'query', id: 4242, flags, questions: [{ type: type as 'TXT', name, class: 'IN' }] })

async function ask(
  name: string,
  type = 'TXT'
): Promise<Packet & { rcode?: string; flag_aa?: boolean; flag_ra?: boolean }> {
  const res = await udp(query(name, type))
  expect(res).not.toBeNull()
  return dnsPacket.decode(res as Buffer) as never
}

/** A query whose single question name is given as raw wire labels. */
function rawQuery(labels: Buffer[]): Buffer {
  const head = Buffer.from([0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0])
  const name = Buffer.concat([...labels.flatMap((l) => [Buffer.from([l.length]), l]), Buffer.from([0])])
  return Buffer.concat([head, name, Buffer.from([0, 16, 0, 1])])
}

describe('the delegated-zone responder', () => {
  it('answers TXT for a label of its zone, authoritatively, and never offers recursion', async () => {
    const r = await ask(`dabc123.${ZONE}`)
    expect(r.rcode).toBe('NOERROR')
    expect(r.flag_aa).toBe(true)
    expect(r.flag_ra).toBe(false)
    expect(r.answers?.map((a) => (a as { data: Buffer[] }).data.map(String).join(''))).toEqual([
      'digest-one',
      'digest-two'
    ])
    // A real stub resolver gets the same answer.
    const resolver = new Resolver({ timeout: 1000, tries: 1 })
    resolver.setServers([`127.0.0.1:${dns.port}`])
    expect(await resolver.resolveTxt(`DABC123.${ZONE.toUpperCase()}`)).toEqual([['digest-one'], ['digest-two']])
  })

  it('refuses names outside its zone, asking for recursion or not, and reads no record for them', async () => {
    asked.length = 0
    for (const name of ['_acme-challenge.shop.example', 'example.com', `x${ZONE}`, 'reseller.test', 'test']) {
      const r = await ask(name)
      expect(r.rcode, name).toBe('REFUSED')
      expect(r.answers ?? [], name).toEqual([])
      expect(r.flag_ra, name).toBe(false)
    }
    expect(asked).toEqual([])
  })

  it('answers the apex with its SOA and unknown or deeper names with NXDOMAIN', async () => {
    const apex = await ask(ZONE, 'SOA')
    expect(apex.rcode).toBe('NOERROR')
    expect(apex.answers?.[0]?.type).toBe('SOA')
    expect((await ask(`dunknown.${ZONE}`)).rcode).toBe('NXDOMAIN')
    asked.length = 0
    expect((await ask(`a.dabc123.${ZONE}`)).rcode).toBe('NXDOMAIN')
    expect(asked).toEqual([])
    // Another type at a known label: no data, not the TXT values.
    const a = await ask(`dabc123.${ZONE}`, 'A')
    expect(a.rcode).toBe('NOERROR')
    expect(a.answers ?? []).toEqual([])
  })

  it('refuses a label that carries a dot or hostile bytes, so it cannot pose as a name in the zone', async () => {
    asked.length = 0
    // One wire label "dabc123.acme" followed by the zone's labels: joined naively it would read
    // as dabc123.acme.reseller.test... and a one-label "dabc123.acme.reseller.test" likewise.
    const hostile = [
      [Buffer.from('dabc123.acme'), Buffer.from('reseller'), Buffer.from('test')],
      [Buffer.from(`dabc123.${ZONE}`)],
      [Buffer.from('dabc123\0'), ...ZONE.split('.').map((l) => Buffer.from(l))],
      [Buffer.from('dabc 123;rm -rf'), ...ZONE.split('.').map((l) => Buffer.from(l))],
      [Buffer.from('d\u00e9f', 'utf8'), ...ZONE.split('.').map((l) => Buffer.from(l))]
    ]
    for (const labels of hostile) {
      const res = await udp(rawQuery(labels))
      expect(res).not.toBeNull()
      const r = dnsPacket.decode(res as Buffer) as { rcode?: string; answers?: unknown[] }
      expect(r.rcode).toBe('REFUSED')
      expect(r.answers ?? []).toEqual([])
    }
    expect(asked).toEqual([])
  })

  it('survives malformed and oversized queries and keeps answering', async () => {
    const junk = [
      Buffer.alloc(0),
      Buffer.from([1, 2, 3]),
      Buffer.from('not a dns message at all, just text'),
      // A name pointer in the question (nothing before it to point to).
      Buffer.concat([Buffer.from([0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 0x0c, 0, 16, 0, 1])]),
      // A label length running past the end.
      Buffer.concat([Buffer.from([0, 2, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 60, 0x61])])
    ]
    for (const j of junk) await udp(j, 200)
    // Two questions: FORMERR.
    const two = query(`dabc123.${ZONE}`)
    two.writeUInt16BE(2, 4)
    const formerr = await udp(two)
    expect((dnsPacket.decode(formerr as Buffer) as { rcode?: string }).rcode).toBe('FORMERR')
    // Larger than any query: FORMERR, and nothing is read.
    const big = Buffer.concat([query(`dabc123.${ZONE}`), Buffer.alloc(MAX_QUERY_BYTES)])
    const tooBig = await udp(big)
    expect((dnsPacket.decode(tooBig as Buffer) as { rcode?: string }).rcode).toBe('FORMERR')
    // A response sent to it is dropped: no reflection.
    const resp = dnsPacket.encode({ type: 'response', id: 1, questions: [{ type: 'TXT', name: `dabc123.${ZONE}` }] })
    expect(await udp(resp, 300)).toBeNull()
    // Still serving.
    expect((await ask(`dabc123.${ZONE}`)).rcode).toBe('NOERROR')
  })

  it('answers over TCP, closes a connection that announces an oversized frame, and bounds connections', async () => {
    const tcp = (): Promise<Socket> =>
      new Promise((resolve, reject) => {
        const s = connect(dns.port, '127.0.0.1', () => resolve(s))
        s.on('error', reject)
      })
    const q = query(`dabc123.${ZONE}`)
    const s = await tcp()
    const head = Buffer.alloc(2)
    head.writeUInt16BE(q.length)
    const got = await new Promise<Buffer>((resolve) => {
      let buf = Buffer.alloc(0)
      s.on('data', (d: Buffer) => {
        buf = Buffer.concat([buf, d])
        if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) resolve(buf.subarray(2, 2 + buf.readUInt16BE(0)))
      })
      s.write(Buffer.concat([head, q]))
    })
    expect((dnsPacket.decode(got) as { answers?: unknown[] }).answers).toHaveLength(2)
    s.destroy()

    const big = await tcp()
    const closed = new Promise<void>((resolve) => big.on('close', () => resolve()))
    big.write(Buffer.from([0xff, 0xff, 0, 0, 0, 0]))
    await closed

    // More connections than allowed: the extra ones are closed at once, the server keeps serving.
    const many = await Promise.all(Array.from({ length: MAX_TCP_CONNECTIONS + 8 }, () => tcp().catch(() => null)))
    await new Promise((r) => setTimeout(r, 200))
    const open = many.filter((c) => c && !c.destroyed && c.readyState === 'open')
    expect(open.length).toBeLessThanOrEqual(MAX_TCP_CONNECTIONS)
    for (const c of many) c?.destroy()
    expect((await ask(`dabc123.${ZONE}`)).rcode).toBe('NOERROR')
  })
})
