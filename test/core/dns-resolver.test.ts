/**
 * The one DNS helper every domain check uses (src-main/core/dcv/dns-resolver.ts): one resolver per
 * configured server, reused, and one documented time-out, so the DCV dns check and the ACME
 * dns-01 check give up on a DNS server that never answers alike. The silent server is a real
 * UDP socket on loopback that counts the questions it gets and answers none.
 */
import { createSocket, type Socket } from 'node:dgram'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkDns01 } from '../../src-main/core/dcv/acme-challenges'
import { checkDns } from '../../src-main/core/dcv/dcv'
import { DNS_TIMEOUT_MS, DNS_TRIES, dnsResolver } from '../../src-main/core/dcv/dns-resolver'

let silent: Socket
let silentAddress: string
/** Questions received, as `name type`, one entry per datagram. */
const asked: string[] = []

/** The question of a DNS query (RFC 1035 §4.1.2): labels from offset 12, then QTYPE. */
function question(msg: Buffer): string {
  const labels: string[] = []
  let i = 12
  while (i < msg.length && msg[i] !== 0) {
    labels.push(msg.subarray(i + 1, i + 1 + msg[i]).toString('latin1'))
    i += msg[i] + 1
  }
  return `${labels.join('.').toLowerCase()} ${msg.readUInt16BE(i + 1)}`
}

beforeAll(async () => {
  silent = createSocket('udp4')
  silent.on('message', (msg) => asked.push(question(msg)))
  await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve))
  silentAddress = `127.0.0.1:${silent.address().port}`
})

afterAll(() => silent?.close())

const timed = async (work: () => Promise<unknown>): Promise<{ ms: number; outcome: unknown }> => {
  const start = performance.now()
  const outcome = await work().catch((err: Error) => err)
  return { ms: performance.now() - start, outcome }
}

describe('DNS resolver helper', () => {
  it('keeps one resolver per DNS server setting and reuses it for every check', () => {
    expect(dnsResolver('127.0.0.1:5353')).toBe(dnsResolver('127.0.0.1:5353'))
    expect(dnsResolver('127.0.0.1:5354')).not.toBe(dnsResolver('127.0.0.1:5353'))
    expect(dnsResolver(null)).toBe(dnsResolver(null))
    // An empty setting means "the system's servers", as unset does.
    expect(dnsResolver('')).toBe(dnsResolver(null))
    expect(dnsResolver('127.0.0.1:5353').getServers()).toEqual(['127.0.0.1:5353'])
  })

  it('gives up on a silent DNS server after the one documented time-out, in DCV and ACME checks alike', async () => {
    const token = { md5: 'A'.repeat(32), sha256: 'B'.repeat(64), unique: 'u1' }
    const [dcv, acme] = await Promise.all([
      timed(() =>
        checkDns('dcv.example.com', token, {
          resolver: silentAddress,
          httpPort: 80,
          httpsPort: 443,
          allowPrivateAddresses: false
        })
      ),
      timed(() =>
        checkDns01('acme.example.com', 'token.thumbprint', {
          resolver: silentAddress,
          http01Port: 80,
          allowPrivateAddresses: false,
          timeoutMs: 10_000
        })
      )
    ])
    expect(dcv.outcome).toMatchObject({
      ok: false,
      detail: `no CNAME or TXT record at _${'a'.repeat(32)}.dcv.example.com`
    })
    expect(String(acme.outcome)).toMatch(
      /could not validate acme\.example\.com: no TXT record at _acme-challenge\.acme\.example\.com \(ETIMEOUT\)/
    )
    for (const { ms } of [dcv, acme]) {
      expect(ms).toBeGreaterThanOrEqual(DNS_TIMEOUT_MS)
      // c-ares waits longer on the retry: about three times the time-out in all.
      expect(ms).toBeLessThan(4 * DNS_TIMEOUT_MS)
    }
    // Every question was asked DNS_TRIES times, no more, no less (CNAME 5, TXT 16).
    const count = (q: string) => asked.filter((a) => a === q).length
    expect(count(`_${'a'.repeat(32)}.dcv.example.com 5`)).toBe(DNS_TRIES)
    expect(count(`_${'a'.repeat(32)}.dcv.example.com 16`)).toBe(DNS_TRIES)
    expect(count('_acme-challenge.acme.example.com 16')).toBe(DNS_TRIES)
  })
})
