/**
 * Authorization Domain Names (BR §1.6.1) from the Public Suffix List's ICANN section: a name and
 * its parents up to the registrable domain, never a public suffix, never a private-section
 * suffix taken for one (BR §3.2.2.6).
 */
import { describe, expect, it } from 'vitest'
import { approverChoices, authorizationDomains } from '../../src-main/core/dcv/authorization-domains'

describe('authorization domain names', () => {
  it('prunes labels up to the registrable domain, never to the public suffix', () => {
    expect(authorizationDomains('a.b.shop.co.uk')).toEqual(['a.b.shop.co.uk', 'b.shop.co.uk', 'shop.co.uk'])
    expect(authorizationDomains('*.b.shop.co.uk')).toEqual(['b.shop.co.uk', 'shop.co.uk'])
    expect(authorizationDomains('www.example.com')).toEqual(['www.example.com', 'example.com'])
    expect(authorizationDomains('EXAMPLE.com')).toEqual(['example.com'])
  })

  it('has none for a public suffix or an address', () => {
    expect(authorizationDomains('co.uk')).toEqual([])
    expect(authorizationDomains('uk')).toEqual([])
    expect(authorizationDomains('192.0.2.1')).toEqual([])
  })

  it('reads the ICANN section only: a private-section suffix is a parent like any other', () => {
    // github.io is in the PSL's PRIVATE DOMAINS section; BR §3.2.2.6 says not to consult it.
    expect(authorizationDomains('shop.github.io')).toEqual(['shop.github.io', 'github.io'])
  })

  it('takes an IDN in its A-label form and a name under a TLD the list does not know', () => {
    expect(authorizationDomains('www.xn--bcher-kva.example')).toEqual([
      'www.xn--bcher-kva.example',
      'xn--bcher-kva.example'
    ])
    expect(authorizationDomains('names.example.test')).toEqual(['names.example.test', 'example.test'])
  })

  it('offers the five constructed mailboxes at each domain, the name first', () => {
    const choices = approverChoices('a.shop.co.uk')
    expect(choices).toHaveLength(10)
    expect(choices.slice(0, 5)).toEqual([
      'admin@a.shop.co.uk',
      'administrator@a.shop.co.uk',
      'webmaster@a.shop.co.uk',
      'hostmaster@a.shop.co.uk',
      'postmaster@a.shop.co.uk'
    ])
    expect(choices.slice(5).every((a) => a.endsWith('@shop.co.uk'))).toBe(true)
  })
})
