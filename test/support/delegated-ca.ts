/**
 * CertDesk with a zone delegated to its DNS responder and Debian's Pebble as the external CA, on
 * loopback: the customer's DNS is pebble-challtestsrv, Pebble's lookups go through a stand-in
 * recursive resolver that follows CNAMEs into the delegated zone (dns-recursor.ts), and with
 * `web` a node:http server is every customer's web server for http-01. The test clock starts at
 * the real time: Pebble dates its certificates by the real clock.
 */
import { startConfiguredResponder, type RunningDelegatedDns } from '../../src-main/core/dcv/delegated-dns-server'
import { DCV_SETTINGS, DELEGATED_DNS_SETTINGS } from '../../src-main/core/settings/setting-keys'
import { freePort } from './acme'
import { manualClock, type ManualClock } from './clock'
import { startDns, startWeb, type DnsServer, type WebServer } from './dcv-servers'
import { startRecursor, type Recursor } from './dns-recursor'
import { PEBBLE_EAB, startPebble, type Pebble } from './pebble'
import { startServer, type TestServer } from './server'

export interface DelegatedCa {
  clock: ManualClock
  s: TestServer
  customerDns: DnsServer
  /** Set with `web: true`. */
  web: WebServer | null
  responder: RunningDelegatedDns
  recursor: Recursor
  pebble: Pebble
  close(): Promise<void>
}

export async function startDelegatedCa(opts: {
  zone: string
  /** A web server for http-01 (and DNS with A records only: it listens on 127.0.0.1, Pebble tries ::1 first). */
  web?: boolean
  validityDays?: number
  /** Open this data dir (a store built by the test) instead of a fresh one. */
  dataDir?: string
  /** Leave the ACME issuer unset (the test sets it as an older store had it). */
  noIssuer?: boolean
}): Promise<DelegatedCa> {
  const clock = manualClock(new Date())
  const s = await startServer({ clock: clock.clock, dataDir: opts.dataDir })
  const customerDns = await startDns(opts.web ? { ipv6: '' } : {})
  const web = opts.web ? await startWeb() : null
  await s.service.settings.update({
    [DELEGATED_DNS_SETTINGS.zone]: opts.zone,
    [DELEGATED_DNS_SETTINGS.listen]: `127.0.0.1:${await freePort()}`,
    [DCV_SETTINGS.resolver]: customerDns.address,
    ...(web ? { [DCV_SETTINGS.httpPort]: String(web.httpPort), [DCV_SETTINGS.allowPrivateAddresses]: 'true' } : {})
  })
  const responder = (await startConfiguredResponder(
    await s.service.settings.get(DELEGATED_DNS_SETTINGS.listen),
    s.service.acmeIssuer.delegation
  )) as RunningDelegatedDns
  const recursor = await startRecursor({
    customer: customerDns.address,
    delegated: `127.0.0.1:${responder.port}`,
    zone: opts.zone
  })
  const pebble = await startPebble({
    dnsServer: recursor.address,
    validityDays: opts.validityDays ?? 30,
    httpPort: web?.httpPort
  })
  if (!opts.noIssuer)
    await s.service.acmeIssuer.configure(pebble.directoryUrl, PEBBLE_EAB.kid, PEBBLE_EAB.hmac, pebble.caBundle)
  return {
    clock,
    s,
    customerDns,
    web,
    responder,
    recursor,
    pebble,
    close: async () => {
      await pebble.close()
      await recursor.close()
      await responder.close()
      await web?.close()
      await customerDns.close()
      await s.close()
    }
  }
}
