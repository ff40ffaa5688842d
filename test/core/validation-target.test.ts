/**
 * Which targets domain validation refuses before it connects: the special-purpose address
 * registries, hostile spellings of names, and every address a name resolves to (through a real
 * DNS server, pebble-challtestsrv, on loopback). Nothing here opens a connection: resolveTarget
 * only resolves and checks, so the public addresses below are DNS answers, never contacted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { specialPurpose } from '../../src-main/core/special-addresses'
import { resolveTarget, TargetRefused, type TargetLookup } from '../../src-main/core/dcv/validation-target'
import { startDns, type DnsServer } from '../support/dcv-servers'

let dns: DnsServer
beforeAll(async () => {
  // No default answers: a name resolves only to what a test gives it.
  dns = await startDns({ ipv4: '', ipv6: '' })
})
afterAll(async () => {
  await dns?.close()
})

const strict = (): TargetLookup => ({ resolver: dns.address, allowPrivateAddresses: false })
const lab = (): TargetLookup => ({ ...strict(), allowPrivateAddresses: true })

describe('specialPurpose: the IANA special-purpose registries (RFC 6890)', () => {
  it.each([
    ['127.0.0.1', /loopback/],
    ['127.255.255.254', /loopback/],
    ['10.0.0.1', /private-use .*RFC 1918/],
    ['172.16.0.0', /private-use/],
    ['172.31.255.255', /private-use/],
    ['192.168.1.1', /private-use/],
    ['169.254.169.254', /link-local .*RFC 3927/],
    ['100.64.0.0', /carrier-grade NAT.*RFC 6598/],
    ['100.127.255.255', /carrier-grade NAT/],
    ['0.0.0.0', /unspecified/],
    ['0.1.2.3', /this network/],
    ['192.0.0.170', /IETF protocol assignment/],
    ['192.0.2.1', /documentation/],
    ['198.18.0.1', /benchmarking/],
    ['198.51.100.7', /documentation/],
    ['203.0.113.9', /documentation/],
    ['224.0.0.1', /multicast/],
    ['240.0.0.1', /reserved/],
    ['255.255.255.255', /limited broadcast/],
    ['::', /unspecified/],
    ['::1', /loopback .*RFC 4291/],
    ['0:0:0:0:0:0:0:1', /loopback/],
    ['fd00::1', /unique-local .*RFC 4193/],
    ['fc00::', /unique-local/],
    ['fe80::1', /link-local/],
    ['fe80::1%eth0', /link-local/],
    ['fec0::1', /site-local/],
    ['ff02::1', /multicast/],
    ['::ffff:127.0.0.1', /IPv4-mapped .* of 127\.0\.0\.1, a loopback address/],
    ['::ffff:7f00:1', /IPv4-mapped .* of 127\.0\.0\.1, a loopback address/],
    ['::ffff:10.1.2.3', /IPv4-mapped .* of 10\.1\.2\.3, a private-use address/],
    ['::ffff:9.9.9.9', /IPv4-mapped .* of 9\.9\.9\.9$/],
    ['::127.0.0.1', /IPv4-compatible/],
    ['64:ff9b::a00:1', /IPv4\/IPv6 translation/],
    ['100::1', /discard-only/],
    ['2001:db8::1', /documentation/],
    ['2001::1', /IETF protocol assignment/],
    ['2002:a00:1::1', /6to4/],
    ['3fff::1', /documentation/],
    ['1::1', /outside IPv6 global unicast/],
    ['not-an-address', /not an IP address/]
  ])('%s is not public: %s', (address, why) => {
    expect(specialPurpose(address)).toMatch(why)
  })

  it.each(['9.9.9.9', '100.63.255.255', '100.128.0.0', '172.15.255.255', '172.32.0.0', '2620:fe::fe', '2a00:1450::1'])(
    '%s is public',
    (address) => {
      expect(specialPurpose(address)).toBeNull()
    }
  )
})

describe('resolveTarget refuses before it connects', () => {
  it.each([
    ['127.0.0.1', /is an IP address, not a domain name/],
    ['[::1]', /is an IP address/],
    ['::ffff:127.0.0.1', /is an IP address/],
    ['10.0.0.1.', /is an IP address/],
    ['2130706433', /reads as a numeric IPv4 address/],
    ['0x7f000001', /reads as a numeric IPv4 address/],
    ['127.1', /reads as a numeric IPv4 address/],
    ['0177.0.0.1', /reads as a numeric IPv4 address/],
    ['shop.0x7f', /reads as a numeric IPv4 address/],
    ['shop.example.123', /reads as a numeric IPv4 address/],
    ['exa mple.test', /is not a domain name/],
    ['evil.test/@attacker.test', /is not a domain name/],
    ['a..test', /is not a domain name/]
  ])('%s, whatever the lab setting says (%s)', async (name, why) => {
    for (const how of [strict(), lab()]) {
      const err = await resolveTarget(name, how).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(TargetRefused)
      expect((err as Error).message).toMatch(why)
    }
  })

  it.each(['localhost', 'LOCALHOST.', 'shop.localhost', 'shop.localhost.'])(
    'refuses %s as this machine (RFC 6761 §6.3), naming the setting as the Settings screen does',
    async (name) => {
      const err = await resolveTarget(name, strict()).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(TargetRefused)
      expect((err as Error).message).toMatch(
        /localhost name, which always means this machine.*turn on lab use in Settings/
      )
    }
  )

  it('refuses localhost names and numeric spellings with the system resolver too', async () => {
    const system = { ...strict(), resolver: null }
    await expect(resolveTarget('localhost', system)).rejects.toThrow(/localhost name/)
    await expect(resolveTarget('2130706433', system)).rejects.toThrow(/numeric IPv4 address/)
  })
})

describe('resolveTarget checks every address the name resolves to', () => {
  it('refuses when any A or AAAA answer is special-purpose, and says which and why', async () => {
    await dns.setA('mixed.example.test', ['9.9.9.9', '10.0.0.7'])
    await dns.setA('dual.example.test', ['9.9.9.9'])
    await dns.setAaaa('dual.example.test', ['fd00::7'])
    await dns.setAaaa('six.example.test', ['::1'])
    await expect(resolveTarget('mixed.example.test', strict())).rejects.toThrow(
      /^mixed\.example\.test resolves to 10\.0\.0\.7, a private-use address \(RFC 1918\); domain validation never connects to loopback, private or other special-purpose addresses, as public CAs do not \(for a lab, turn on lab use in Settings, under Domain validation\)$/
    )
    await expect(resolveTarget('dual.example.test', strict())).rejects.toThrow(/resolves to fd00::7, a unique-local/)
    // A trailing dot is the same name.
    await expect(resolveTarget('dual.example.test.', strict())).rejects.toThrow(/resolves to fd00::7/)
    await expect(resolveTarget('six.example.test', strict())).rejects.toThrow(/resolves to ::1, the loopback address/)
  })

  it('returns the checked addresses, IPv4 first, for a public name; the lab setting lets private ones through', async () => {
    await dns.setA('public.example.test', ['9.9.9.9'])
    await dns.setAaaa('public.example.test', ['2620:fe::fe'])
    expect(await resolveTarget('public.example.test', strict())).toEqual(['9.9.9.9', '2620:fe::fe'])
    expect(await resolveTarget('mixed.example.test', lab())).toEqual(['9.9.9.9', '10.0.0.7'])
  })

  it('reports a name without records as a DNS failure, not as a refusal', async () => {
    const err = await resolveTarget('nothing.example.test', strict()).catch((e: unknown) => e)
    expect(err).not.toBeInstanceOf(TargetRefused)
    expect((err as NodeJS.ErrnoException).code).toMatch(/ENODATA|ENOTFOUND/)
  })
})
