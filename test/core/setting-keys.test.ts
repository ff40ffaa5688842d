/**
 * The settings rules (settings.ts) and the checks (dcv.ts) both need the setting names when they
 * load. Whichever of the two a program loads first (the CLI's admin commands load settings.ts
 * first), every editable setting has its real name: none is missing or called "undefined".
 */
import { beforeEach, describe, expect, it, vi } from 'vitest'

const NAMES = [
  'dcv.dns_resolver',
  'dcv.http_port',
  'dcv.https_port',
  'smtp.url',
  'smtp.from',
  'dcv.allow_private_addresses'
]
/** Delegated DNS validation's settings, editable too (setting-keys.ts). */
const DELEGATION = ['dns.delegated_zone', 'dns.listen', 'acme_server.issuer_domain']
/** Alerts' switch for webhook receivers on private addresses (setting-keys.ts). */
const ALERTS = ['alerts.allow_private_addresses']
/** The installation checks' time-out, parallelism and interval (setting-keys.ts). */
const INSTALLATIONS = [
  'installations.check_interval_hours',
  'installations.concurrency',
  'installations.timeout_seconds'
]
/** The seller block printed on invoices (setting-keys.ts). */
const INVOICE = ['invoice.seller_name', 'invoice.seller_address']
/** Where the local CA's certificates say their CRL is (setting-keys.ts). */
const LOCAL_CA = ['local_ca.crl_url']

/** The public base URL every shown address is built from (public-url.ts). */
const PUBLIC = ['public.base_url']

beforeEach(() => {
  vi.resetModules()
})

describe('setting names', () => {
  it('are all there when settings.ts loads first', async () => {
    const settings = await import('../../src-main/core/settings/settings')
    const dcv = await import('../../src-main/core/dcv/dcv')
    expect([...settings.EDITABLE_SETTINGS].sort()).toEqual(
      [...NAMES, ...DELEGATION, ...ALERTS, ...INSTALLATIONS, ...INVOICE, ...LOCAL_CA, ...PUBLIC].sort()
    )
    expect(Object.values(dcv.DCV_SETTINGS).sort()).toEqual([...NAMES].sort())
  })

  it('are all there when dcv.ts loads first', async () => {
    const dcv = await import('../../src-main/core/dcv/dcv')
    const settings = await import('../../src-main/core/settings/settings')
    expect(Object.values(dcv.DCV_SETTINGS).sort()).toEqual([...NAMES].sort())
    expect([...settings.EDITABLE_SETTINGS].sort()).toEqual(
      [...NAMES, ...DELEGATION, ...ALERTS, ...INSTALLATIONS, ...INVOICE, ...LOCAL_CA, ...PUBLIC].sort()
    )
  })
})
