// Generated bad input for the reliability run: wrong types, missing fields, huge and deep JSON,
// invalid PEM, odd paths and methods, wrong Host headers, missing or wrong keys, and broken
// HTTP on raw sockets. Deterministic for a seed, so a failure can be replayed.

/** mulberry32: a small seeded PRNG. */
export function rng(seed) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n) => Math.floor(next() * n)
  const pick = (xs) => xs[int(xs.length)]
  return { next, int, pick }
}

const ODD_VALUES = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  2 ** 53,
  -(2 ** 63),
  1e308,
  '',
  ' ',
  '2',
  'NaN',
  'null',
  '0x10',
  '1e3',
  [],
  [1],
  {},
  { $gt: 0 },
  'a'.repeat(5000),
  '\u0000',
  '\ud800',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '../../etc/passwd',
  '%00',
  '*.*.example.com',
  'exa mple.com',
  '-bad-.com',
  'xn--',
  '例え.テスト',
  '.',
  'localhost',
  '127.0.0.1',
  'a'.repeat(64) + '.com',
  `${'a.'.repeat(130)}com`
]

const BAD_PEMS = [
  'not a pem',
  '-----BEGIN CERTIFICATE REQUEST-----\n-----END CERTIFICATE REQUEST-----',
  '-----BEGIN CERTIFICATE REQUEST-----\nMIIB!!!!notbase64@@@\n-----END CERTIFICATE REQUEST-----',
  '-----BEGIN CERTIFICATE REQUEST-----\nMIICWjCCAUICAQAwFTETMBEGA1UEAwwKZXhhbXBsZS5jb20wggEiMA0GCSqGSIb3\n-----END CERTIFICATE REQUEST-----',
  '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUJ3\n-----END CERTIFICATE-----',
  `-----BEGIN CERTIFICATE REQUEST-----\n${'QUFB'.repeat(200_000)}\n-----END CERTIFICATE REQUEST-----`,
  '-----BEGIN CERTIFICATE REQUEST-----\nMAA=\n-----END CERTIFICATE REQUEST-----',
  '\u0000\u0001\u0002binary',
  `-----BEGIN CERTIFICATE REQUEST-----\n${Buffer.from('30820000', 'hex').toString('base64')}\n-----END CERTIFICATE REQUEST-----`
]

const ODD_PATHS = [
  '/',
  '//orders',
  '/orders/',
  '/orders/abc',
  '/orders/-1',
  '/orders/0',
  '/orders/99999999999999999999999',
  '/orders/1e3',
  '/orders/1.5',
  '/orders/%00',
  '/orders/%2e%2e/%2e%2e/etc/passwd',
  '/../../etc/passwd',
  '/products/%ff',
  '/ORDERS',
  '/orders?limit=abc',
  '/orders?limit=-1',
  '/orders?offset=-5',
  '/orders?limit=1e9',
  '/orders?limit=0',
  '/orders?status=bogus',
  `/orders?domain=${'a'.repeat(300)}`,
  '/orders?domain=%25',
  '/orders?domain=%5C',
  '/orders?limit=50&limit=20',
  '/orders;jsessionid=1',
  '/orders/1/acme/extra',
  `/${'x'.repeat(8000)}`,
  '/%C3%B6rders',
  '/products?type=bogus',
  '/products?include=all',
  '/products?brand=' + 'b'.repeat(200),
  '/invoices?status=nope',
  '/invoices/abc',
  '/credits?limit=-3',
  '/ssl/abc',
  '/certificate/0/download',
  '/certificate/abc',
  '/san-pricing/0',
  '/products/999999',
  '/orders/1/',
  '/stats/',
  '/openapi.json/../account',
  '/account?x[y]=1',
  '/orders?domain[]=a',
  '/orders?__proto__[x]=1',
  '/orders?constructor=1'
]

const KNOWN_PATHS = [
  '/products',
  '/products/2',
  '/san-pricing/4',
  '/orders',
  '/orders/1',
  '/orders/1/acme',
  '/ssl/configure',
  '/ssl/resend-validation',
  '/ssl/change-dcv',
  '/ssl/reissue',
  '/csr/decode',
  '/ssl/1',
  '/invoices',
  '/invoices/1',
  '/credits',
  '/balance',
  '/certificate/1',
  '/certificate/1/download',
  '/account',
  '/stats'
]

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'PROPFIND', 'FOO', 'CONNECT']

const WRONG_HOSTS = [
  'evil.example',
  'localhost.evil.example',
  '127.0.0.1.nip.io',
  '',
  '[::1',
  'a'.repeat(300),
  '127.0.0.1:99999',
  '0x7f.0.0.1',
  '127.1',
  'LOCALHOST:1',
  'localhost:abc',
  '127.0.0.1 evil',
  'xn--localhost'
]

const RAW_REQUESTS = [
  'GARBAGE\r\n\r\n',
  'GET /products HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n',
  'GET\r\n\r\n',
  'GET /products\r\n\r\n',
  `GET /products HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
  'POST /orders HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
  'POST /orders HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n',
  'POST /orders HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n{}',
  'GET /products HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n',
  'GET /products HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: a\rb\r\n\r\n',
  'GET /pro ducts HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n',
  'GET /products HTTP/1.1\r\n\r\n'
]

const deep = (depth, kind) =>
  kind === 0 ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)

/**
 * The next generated case: { kind, method, path, headers, body, raw? }. `ctx` carries the
 * keys (good, revoked, disabled reseller) and an order id of the caller.
 */
export function nextCase(r, ctx) {
  const key = { 'x-api-key': ctx.key }
  const json = { ...key, 'content-type': 'application/json' }
  const kind = r.pick([
    'types',
    'types',
    'missing',
    'huge',
    'deep',
    'pem',
    'paths',
    'paths',
    'methods',
    'host',
    'keys',
    'keys',
    'content',
    'raw',
    'valid'
  ])
  switch (kind) {
    case 'types': {
      const body = { product_id: 2, domain: 'fuzz.example.com', period: 12 }
      const field = r.pick([
        'product_id',
        'domain',
        'period',
        'san_count',
        'san_wildcard_count',
        'contact_email',
        'perod',
        '__proto__'
      ])
      body[field] = r.pick(ODD_VALUES)
      const target = r.pick([
        ['POST', '/orders', body],
        ['POST', '/credits', { order_id: r.pick(ODD_VALUES) }],
        ['PUT', `/orders/${ctx.orderId}`, { action: r.pick(ODD_VALUES) }],
        [
          'POST',
          '/ssl/configure',
          { order_id: r.pick(ODD_VALUES), csr: r.pick(ODD_VALUES), dcv_method: r.pick(ODD_VALUES) }
        ],
        ['POST', '/csr/decode', { csr: r.pick(ODD_VALUES) }]
      ])
      return { kind, method: target[0], path: target[1], headers: json, body: JSON.stringify(target[2]) }
    }
    case 'missing': {
      const target = r.pick([
        ['POST', '/orders', r.pick([{}, { domain: 'a.example.com' }, { period: 12 }])],
        ['POST', '/credits', {}],
        ['PUT', `/orders/${ctx.orderId}`, {}],
        ['POST', '/ssl/configure', r.pick([{}, { csr: BAD_PEMS[0] }])],
        ['POST', '/ssl/reissue', {}],
        ['POST', '/csr/decode', {}]
      ])
      return {
        kind,
        method: target[0],
        path: target[1],
        headers: json,
        body: r.next() < 0.2 ? '' : JSON.stringify(target[2])
      }
    }
    case 'huge': {
      const size = r.pick([1024 * 1024 + 1, 2 * 1024 * 1024, 900 * 1024])
      const body =
        r.next() < 0.5
          ? JSON.stringify({ product_id: 2, domain: 'd'.repeat(size) })
          : JSON.stringify(Array.from({ length: Math.floor(size / 4) }, (_, i) => i % 10))
      // On a raw socket: the server answers 413 and closes while a client is still sending, and
      // node's client then reports EPIPE instead of the answer that did arrive.
      const path = r.pick(['/orders', '/csr/decode', '/credits'])
      return {
        kind,
        raw:
          `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${ctx.key}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`,
        rawBody: body
      }
    }
    case 'deep':
      return {
        kind,
        method: 'POST',
        path: r.pick(['/orders', '/csr/decode', '/ssl/configure', '/credits']),
        headers: json,
        body: deep(r.pick([100, 10_000, 100_000]), r.int(2))
      }
    case 'pem': {
      const csr = r.pick(BAD_PEMS)
      return r.next() < 0.5
        ? { kind, method: 'POST', path: '/csr/decode', headers: json, body: JSON.stringify({ csr }) }
        : {
            kind,
            method: 'POST',
            path: r.pick(['/ssl/configure', '/ssl/reissue']),
            headers: json,
            body: JSON.stringify({ order_id: ctx.orderId, csr, dcv_method: r.pick(['email', 'dns', 'http', 'ftp']) })
          }
    }
    case 'paths':
      return { kind, method: 'GET', path: r.pick(ODD_PATHS), headers: key }
    case 'methods': {
      // node's own client cannot send HEAD with a body; raw sockets cover odd framing instead
      const method = r.pick(METHODS)
      return {
        kind,
        method,
        path: r.pick(KNOWN_PATHS),
        headers: json,
        body: method !== 'HEAD' && r.next() < 0.5 ? '{}' : undefined
      }
    }
    case 'host':
      return { kind, method: 'GET', path: r.pick(KNOWN_PATHS), headers: { ...key, host: r.pick(WRONG_HOSTS) } }
    case 'keys': {
      const auth = r.pick([
        {},
        { 'x-api-key': ctx.wrongKey() },
        { 'x-api-key': ctx.revokedKey },
        { 'x-api-key': ctx.disabledKey },
        { authorization: `Bearer ${ctx.wrongKey()}` },
        { authorization: 'Bearer' },
        { authorization: 'Bearer    ' },
        { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
        { 'x-api-key': `${ctx.key} ` },
        { 'x-api-key': 'k'.repeat(10_000) },
        { 'x-api-key': '' },
        { 'x-api-key': ctx.wrongKey(), authorization: `Bearer ${ctx.key}` },
        { authorization: `bearer ${ctx.revokedKey}` }
      ])
      return {
        kind,
        method: r.pick(['GET', 'POST']),
        path: r.pick(KNOWN_PATHS),
        headers: { ...auth, 'content-type': 'application/json' },
        body: '{}'
      }
    }
    case 'content': {
      const [type, body] = r.pick([
        ['text/plain', '{"product_id":2,"domain":"a.example.com"}'],
        ['application/x-www-form-urlencoded', 'product_id=2&domain=a.example.com'],
        ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--'],
        ['application/json', '{'],
        ['application/json', 'nul'],
        ['application/json', '{"product_id":2,}'],
        ['application/json', '\ufeff{"product_id":2}'],
        ['application/json; charset=utf-16', '{"product_id":2}'],
        ['application/json', '"just a string"'],
        ['application/json', '123'],
        ['application/json', '[]'],
        ['application/json', '{"__proto__":{"isAdmin":true},"product_id":2,"domain":"a.example.com"}'],
        ['application/json', '{"constructor":{"prototype":{"x":1}}}'],
        [undefined, '{"product_id":2}']
      ])
      const headers = { ...key }
      if (type) headers['content-type'] = type
      return {
        kind,
        method: r.pick(['POST', 'PUT']),
        path: r.pick(['/orders', `/orders/${ctx.orderId}`, '/credits', '/csr/decode']),
        headers,
        body
      }
    }
    case 'raw':
      return { kind, raw: r.pick(RAW_REQUESTS) }
    default:
      return r.pick([
        { kind: 'valid', method: 'GET', path: '/orders?limit=5', headers: key },
        { kind: 'valid', method: 'GET', path: '/balance', headers: key },
        { kind: 'valid', method: 'GET', path: `/orders?api_key=${ctx.key}`, headers: key, carriesKeyInUrl: true },
        {
          kind: 'valid',
          method: 'POST',
          path: '/orders',
          headers: json,
          body: JSON.stringify({ product_id: 2, domain: `ok-${r.int(1e9)}.example.com` })
        }
      ])
  }
}
