/** The contact address check: the plain form mail systems and ACME clients take, nothing else. */
import { describe, expect, it } from 'vitest'
import { emailAddressProblem, normalizeEmailAddress } from '../../src-main/core/dcv/email-address'

describe('email addresses', () => {
  it('takes plain addresses and lower-cases only the domain', () => {
    for (const ok of [
      'ops@example.com',
      'first.last+acme@sub.example.co.uk',
      'A_b%c-d@xn--bcher-kva.example',
      'x@y.io'
    ])
      expect(emailAddressProblem(ok), ok).toBeNull()
    expect(normalizeEmailAddress('  Ops@Example.COM ', 'contact_email')).toBe('Ops@example.com')
  })

  it('refuses shell syntax, spaces, quotes, line breaks, Unicode and malformed parts, saying why', () => {
    const refused: [string, RegExp][] = [
      ['x@y.z;id>/tmp/pwned;#', /after the @ is not a domain name/],
      ['$(id)@example.com', /may hold only letters/],
      ['`id`@example.com', /may hold only letters/],
      ["o'brien@example.com", /may hold only letters/],
      ['"quoted"@example.com', /may hold only letters/],
      ['a|b@example.com', /may hold only letters/],
      ['a&b@example.com', /may hold only letters/],
      ['two words@example.com', /printable ASCII/],
      ['ops@example.com\nid', /printable ASCII/],
      ['ops@example.com\r\nBcc: x@evil.test', /printable ASCII/],
      ['bücher@example.com', /printable ASCII/],
      ['ops@exämple.com', /printable ASCII/],
      ['-oProxyCommand=id@example.com', /must not start with -/],
      ['.ops@example.com', /may hold only letters/],
      ['ops..x@example.com', /may hold only letters/],
      ['ops@', /after the @ is not a domain name/],
      ['@example.com', /nothing before the @/],
      ['ops', /no @/],
      ['a@b@example.com', /more than one @/],
      ['ops@localhost', /not a domain name/],
      ['ops@[127.0.0.1]', /not a domain name/],
      ['ops@127.0.0.1', /not a domain name/],
      ['ops@-bad.example', /not a domain name/],
      [`${'a'.repeat(65)}@example.com`, /longer than 64/],
      [`ops@${'a'.repeat(250)}.com`, /longer than 254/],
      ['', /empty/]
    ]
    for (const [address, why] of refused) expect(emailAddressProblem(address), JSON.stringify(address)).toMatch(why)
    expect(() => normalizeEmailAddress('x@y.z;id>/tmp/pwned;#', 'contact_email')).toThrow(
      'contact_email "x@y.z;id>/tmp/pwned;#" is not an email address: "y.z;id>/tmp/pwned;#" after the @ is not a domain name'
    )
  })
})
