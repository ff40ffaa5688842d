/**
 * The EAB HMAC key of an ACME subscription stays out of what the desktop app lists: the core
 * builds the set-up with the placeholder in the key's place, before any command is quoted.
 */
import { describe, expect, it } from 'vitest'
import { type AcmeDetails } from '../../src-main/core/acme-server/acme-subscriptions'
import {
  acmeSetup,
  acmeSubscriptionView,
  acmeUrls,
  maskedAcmeSetup
} from '../../src-main/core/acme-server/client-setup'
import { HMAC_KEY_PLACEHOLDER } from '../../src-shared/constants'

// A key with characters a shell or a split on the key would trip over.
const KEY = "k3y-with_'quote'-and-$HOME-and-<EAB_HMAC_KEY>"
const details: AcmeDetails = {
  id: 7,
  orderId: 42,
  resellerId: 1,
  category: 'caas',
  status: 'active',
  eabKid: 'kid-123',
  wildcard: false,
  beginDate: '2026-05-01',
  endDate: '2027-05-01',
  contactEmail: 'ops@example.test',
  domains: [{ id: 'd1', name: 'sub.example.test' }],
  accounts: [{ id: 3, status: 'valid', createdAt: '2026-05-01 10:00:00' }],
  eabHmacKey: KEY,
  nextRenewal: '2027-05-01',
  allowedIdentifiers: ['sub.example.test'],
  setupToken: null
}
const urls = acmeUrls(null, 'http://127.0.0.1:8443')

describe('masking the EAB HMAC key', () => {
  it('puts the placeholder where the key would be, in the account and every command', () => {
    const masked = maskedAcmeSetup(details, urls)
    expect(JSON.stringify(masked)).not.toContain('k3y-with')
    expect(masked.account.eab_hmac_key).toBe(HMAC_KEY_PLACEHOLDER)
    for (const command of [masked.commands.certbot, masked.commands.lego, masked.commands.acme_sh])
      expect(command).toContain(HMAC_KEY_PLACEHOLDER)
    // Everything else is the set-up as the reseller API shows it.
    const real = acmeSetup(details, urls)
    expect(real.account.eab_hmac_key).toBe(KEY)
    expect({ ...masked, account: { ...masked.account, eab_hmac_key: '' }, commands: null }).toEqual({
      ...real,
      account: { ...real.account, eab_hmac_key: '' },
      commands: null
    })
  })

  it('lists the subscription for the desktop app without the key', () => {
    const view = acmeSubscriptionView({ id: 42, orderNumber: 'ORD-2026-000042', productName: 'ACME DV' }, details, urls)
    expect(JSON.stringify(view)).not.toContain('k3y-with')
    expect(view.commands.certbot).toContain(HMAC_KEY_PLACEHOLDER)
    expect(view).toMatchObject({
      orderId: 42,
      eabKid: 'kid-123',
      domains: ['sub.example.test'],
      accountStatus: 'valid'
    })
  })
})
