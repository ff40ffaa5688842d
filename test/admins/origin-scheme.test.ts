/**
 * A team server's admin UI may be served over TLS: its own page's Origin then starts with
 * `https://`, and a change is taken only from that origin, scheme included (RFC 6454 §4: the
 * scheme is part of the origin). A page on plain http with the same host is another origin.
 */
import { expect, it } from 'vitest'
import { crossOriginRefusal } from '../../src-main/app/browser-origin'

const host = 'certs.reseller.example:8443'

it('takes a change from the TLS page itself, and refuses the same host over plain http', () => {
  expect(
    crossOriginRefusal('POST', { host, origin: `https://${host}`, 'sec-fetch-site': 'same-origin' }, 'https')
  ).toBeNull()
  expect(crossOriginRefusal('POST', { host, origin: `http://${host}` }, 'https')).toMatch(
    /sent from "http:\/\/certs\.reseller\.example:8443", not from the CertDesk page at https:\/\/certs\.reseller\.example:8443/
  )
  // The desktop's browser mode stays on http, as before.
  expect(crossOriginRefusal('POST', { host: '127.0.0.1:7780', origin: 'http://127.0.0.1:7780' })).toBeNull()
  expect(crossOriginRefusal('POST', { host, origin: `https://${host}` })).toMatch(/not from the CertDesk page at http:/)
})
