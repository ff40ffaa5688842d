/**
 * The public listener as a customer meets it: from another machine (a network namespace joined
 * by a veth pair, resolving names through a test DNS server), by the public name, over TLS whose
 * name check is real. certbot fetches the root with the pinned command the set-up shows, reaches
 * the directory, binds with EAB and gets a certificate whose chain openssl verifies; the admin UI,
 * the RPC and the loopback listeners are not reachable there; a nonce is taken once, whichever
 * listener sees it; a wrong Host is refused; bodies and
 * request rates are bounded; and the listener's certificate is replaced without a restart, issued
 * anew on SIGHUP or read again when given files change.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { request as httpsRequest } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect as netConnect } from 'node:net'
import { connect } from 'node:tls'
import { exportJWK, FlattenedSign } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { certbotCertonly, freePort, run, setA, startChallTestSrv, type ChallTestSrv } from './support/acme'
import { https } from './support/acme-jws'
import { clientNetwork, type ClientNetwork } from './support/client-network'
import { certdeskIn, serverEnv, startServeNode, type ServeNode } from './support/serve-node'
import { createTestCa, type TestCa } from './support/test-ca'

const NAME = 'certs.reseller.example'
const PUBLIC_LINE = /CertDesk public listener \(TLS\) on \S+/

type Acme = {
  account: { eab_kid: string; eab_hmac_key: string; server_url: string; accounts: { url: string }[] }
  root_ca_url: string
  commands: { root_ca: string; certbot: string; acme_sh: string; lego: string }
}

let net: ClientNetwork
let dns: ChallTestSrv
let work: string
let env: NodeJS.ProcessEnv
let secrets: string
let httpPort: number

/** One `certdesk serve` node with its own data dir, reseller and key, listening publicly on `port`. */
interface Node {
  serve: ServeNode
  port: number
  base: string
  dataDir: string
  apiKey: string
  rootPem: string
}
const nodes: Node[] = []

async function startNode(extra: string[] = []): Promise<Node> {
  const dataDir = mkdtempSync(join(work, 'data-'))
  const admin = (...args: string[]) => {
    const r = certdeskIn(env, ['admin', '--data-dir', dataDir, '--secrets', `file:${secrets}`, ...args])
    expect(r.code, r.stderr).toBe(0)
    return r.json
  }
  admin('settings', 'set', 'dcv.dns_resolver', dns.dns)
  admin('settings', 'set', 'dcv.http_port', String(httpPort))
  // The customer's http-01 responder is on a private (or loopback) address: a lab.
  admin('settings', 'set', 'dcv.allow_private_addresses', 'true')
  const id = String(
    (
      admin('reseller', 'add', '--name', 'Reseller', '--email', 'ops@example.com', '--group', '1').reseller as {
        id: number
      }
    ).id
  )
  admin('credit', 'add', '--reseller', id, '--amount', '500')
  const apiKey = admin('apikey', 'create', '--reseller', id).api_key as string
  const port = await freePort()
  const base = `https://${NAME}:${port}`
  const serve = await startServeNode(
    env,
    [
      '--data-dir',
      dataDir,
      '--secrets',
      `file:${secrets}`,
      '--ui',
      '--public-url',
      base,
      '--public-listen',
      `${net.serverAddress}:${port}`,
      '--public-api',
      ...extra
    ],
    PUBLIC_LINE
  )
  // The reseller hands the root over out of band, as `certdesk admin ca root` prints it.
  const rootPem = (admin('ca', 'root').root_pem as string | undefined) ?? ''
  const node = { serve, port, base, dataDir, apiKey, rootPem }
  nodes.push(node)
  return node
}

/** A request to the public listener from this side, by the public name (SNI, Host and the name check). */
function publicRequest(
  node: Node,
  method: string,
  path: string,
  opts: { body?: string | Buffer; headers?: Record<string, string>; ca?: string } = {}
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: net.serverAddress,
        port: node.port,
        servername: NAME,
        method,
        path,
        ca: opts.ca ?? node.rootPem,
        headers: { host: `${NAME}:${node.port}`, ...opts.headers }
      },
      (res) => {
        let text = ''
        res.on('data', (d) => (text += d))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }))
      }
    )
    req.on('error', reject)
    req.end(opts.body)
  })
}

/** The serial of the certificate a new TLS connection to the public listener gets. */
function presentedSerial(node: Node, ca = node.rootPem): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: net.serverAddress, port: node.port, servername: NAME, ca }, () => {
      const serial = socket.getPeerX509Certificate()?.serialNumber ?? ''
      socket.end()
      resolve(serial.toUpperCase())
    })
    socket.on('error', reject)
  })
}

/** Polls until a new connection sees a serial other than `old`; generous, as the machine is shared. */
async function serialAfter(node: Node, old: string, ca?: string): Promise<string> {
  for (let i = 0; i < 150; i++) {
    const now = await presentedSerial(node, ca).catch(() => old)
    if (now !== old) return now
    await new Promise((r) => setTimeout(r, 200))
  }
  return old
}

/** Runs `cmd` on the customer's machine. */
const onClient = (
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; seconds?: number } = {}
) => {
  const argv = net.argv(cmd, args)
  return run(argv[0], argv.slice(1), { seconds: 120, ...opts })
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'certdesk-public-'))
  net = clientNetwork(NAME)
  // One DNS server for the customer's resolver and CertDesk's checks: the customer's domains are
  // the customer's machine, the public name is this one.
  dns = await startChallTestSrv({ dns: net.dnsAt ?? undefined, defaultIPv4: net.clientAddress })
  if (net.kind === 'netns') await setA(dns, NAME, net.serverAddress)
  httpPort = await freePort()
  env = serverEnv(mkdtempSync(join(work, 'home-')))
  secrets = join(mkdtempSync(join(work, 'etc-')), 'secrets')
  expect(certdeskIn(env, ['admin', 'secrets', 'init', '--out', secrets]).code).toBe(0)
}, 120_000)

afterAll(async () => {
  for (const n of nodes) await n.serve.stop()
  await dns?.stop()
  net?.close()
  if (work) rmSync(work, { recursive: true, force: true })
})

describe('a customer on another machine', () => {
  let node: Node
  beforeAll(async () => {
    node = await startNode()
  }, 120_000)

  it('orders through the public API, then certbot gets a certificate by the public name with EAB', async () => {
    const client = mkdtempSync(join(work, 'client-'))
    const curl = (...args: string[]) => onClient('curl', ['-s', '--cacert', join(client, 'root.pem'), ...args])
    writeFileSync(join(client, 'root.pem'), node.rootPem)
    const ordered = await curl(
      '-H',
      `x-api-key: ${node.apiKey}`,
      '-H',
      'content-type: application/json',
      '--data',
      JSON.stringify({ product_id: 12, domain: 'shop.example.com' }),
      `${node.base}/orders`
    )
    const orderId = (JSON.parse(ordered.stdout) as { order_id: number }).order_id
    expect(orderId, ordered.stdout + ordered.stderr).toBeGreaterThan(0)
    const details = await curl('-H', `x-api-key: ${node.apiKey}`, `${node.base}/orders/${orderId}/acme`)
    const acme = (JSON.parse(details.stdout) as { acme: Acme }).acme
    const directory = `${node.base}/acme/directory`
    expect(acme.account.server_url).toBe(directory)
    expect(acme.commands.certbot).toContain(`REQUESTS_CA_BUNDLE=certdesk-root.pem certbot certonly`)
    expect(acme.commands.certbot).toContain(`--server ${directory} --eab-kid ${acme.account.eab_kid}`)
    expect(JSON.stringify(acme)).not.toMatch(/localhost|127\.0\.0\.1/)

    // The root as the set-up tells the customer to fetch it: over the public TLS, checked by its SHA-256.
    const pinned = await onClient('sh', ['-c', acme.commands.root_ca], { cwd: client })
    expect(pinned.code, pinned.stdout + pinned.stderr).toBe(0)
    expect(pinned.stdout).toContain('certdesk-root.pem: OK')
    expect(readFileSync(join(client, 'certdesk-root.pem'), 'utf8')).toBe(node.rootPem)

    const dir = join(client, 'certbot')
    const certbot = await onClient(
      'certbot',
      certbotCertonly({
        server: acme.account.server_url,
        kid: acme.account.eab_kid,
        hmac: acme.account.eab_hmac_key,
        httpPort,
        address: net.clientAddress,
        dir,
        names: ['shop.example.com', 'www.shop.example.com']
      }),
      { env: { REQUESTS_CA_BUNDLE: join(client, 'certdesk-root.pem') }, seconds: 180 }
    )
    expect(certbot.code, certbot.stdout + certbot.stderr).toBe(0)
    const live = join(dir, 'config', 'live', 'shop.example.com')
    const verified = await run('openssl', [
      'verify',
      '-purpose',
      'sslserver',
      '-CAfile',
      join(client, 'certdesk-root.pem'),
      '-untrusted',
      join(live, 'chain.pem'),
      join(live, 'cert.pem')
    ])
    expect(verified.stdout + verified.stderr).toContain(': OK')
    // The account certbot keeps is named by the public URL, as the set-up shows it.
    const after = await curl('-H', `x-api-key: ${node.apiKey}`, `${node.base}/orders/${orderId}/acme`)
    const accountUrl = (JSON.parse(after.stdout) as { acme: Acme }).acme.account.accounts[0]?.url
    expect(accountUrl).toMatch(new RegExp(`^${node.base}/acme/acct/\\d+$`))
    const regr = await run('find', [join(dir, 'config', 'accounts'), '-name', 'regr.json', '-exec', 'cat', '{}', ';'])
    expect(regr.stdout).toContain(accountUrl)
  }, 300_000)

  it('takes each nonce once across the loopback and public listeners, whichever sees it first', async () => {
    const loopback = /CertDesk ACME directory at (https:\/\/\S+)\/acme\/directory/.exec(node.serve.stdout())?.[1]
    expect(loopback, node.serve.stdout()).toBeTruthy()
    const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
    const jwk = await exportJWK(key)
    delete jwk.d
    /** A new-account request without EAB, signed with `nonce`: refused either way; the problem says why. */
    const newAccount = async (base: string, nonce: string): Promise<{ status: number; type: string }> => {
      const url = `${base}/acme/new-account`
      const jws = await new FlattenedSign(new TextEncoder().encode(JSON.stringify({ termsOfServiceAgreed: true })))
        .setProtectedHeader({ alg: 'ES256', nonce, url, jwk })
        .sign(key)
      if (base === loopback) {
        const r = await https(node.rootPem, 'POST', url, jws)
        return { status: r.status, type: String(r.body.type) }
      }
      const r = await publicRequest(node, 'POST', '/acme/new-account', {
        body: JSON.stringify(jws),
        headers: { 'content-type': 'application/jose+json' }
      })
      return { status: r.status, type: String((JSON.parse(r.text) as { type?: string }).type) }
    }
    const fromLoopback = async (): Promise<string> =>
      (await https(node.rootPem, 'HEAD', `${loopback}/acme/new-nonce`)).headers['replay-nonce'] as string
    const fromPublic = async (): Promise<string> =>
      (await publicRequest(node, 'HEAD', '/acme/new-nonce')).headers['replay-nonce'] as string

    for (const [issuedBy, first, second] of [
      [fromLoopback, node.base, loopback as string],
      [fromPublic, loopback as string, node.base]
    ] as const) {
      const nonce = await issuedBy()
      expect(nonce).toMatch(/^[A-Za-z0-9_-]{16,}$/)
      // Taken on the other listener: past the nonce check, refused for the missing binding (RFC 8555 §7.3.4).
      expect(await newAccount(first, nonce)).toEqual({
        status: 400,
        type: 'urn:ietf:params:acme:error:externalAccountRequired'
      })
      // Used once: refused on either listener (§6.5).
      for (const base of [second, first])
        expect(await newAccount(base, nonce)).toEqual({ status: 400, type: 'urn:ietf:params:acme:error:badNonce' })
    }
  })

  it('checks the name for real: by address, or without the CertDesk root, TLS fails', async () => {
    const client = mkdtempSync(join(work, 'client-'))
    writeFileSync(join(client, 'root.pem'), node.rootPem)
    const byName = await onClient('curl', ['-s', '--cacert', join(client, 'root.pem'), `${node.base}/acme/directory`])
    expect(byName.code).toBe(0)
    expect(JSON.parse(byName.stdout).newAccount).toBe(`${node.base}/acme/new-account`)
    // The address is not the name the certificate carries: curl's name check refuses (exit 60).
    const byAddress = await onClient('curl', [
      '-s',
      '--cacert',
      join(client, 'root.pem'),
      `https://${net.serverAddress}:${node.port}/acme/directory`
    ])
    expect(byAddress.code).toBe(60)
    // Without the root, the system store does not trust the CertDesk CA.
    const untrusted = await onClient('curl', ['-s', `${node.base}/acme/directory`])
    expect(untrusted.code).toBe(60)
  })

  it('opens the auto-install set-up page by its link there, without a key', async () => {
    const ordered = await publicRequest(node, 'POST', '/orders', {
      body: JSON.stringify({ product_id: 14, domain: 'auto.example.com', contact_email: 'ops@example.com' }),
      headers: { 'content-type': 'application/json', 'x-api-key': node.apiKey }
    })
    expect(ordered.status, ordered.text).toBe(200)
    const id = (JSON.parse(ordered.text) as { order_id: number }).order_id
    const acme = JSON.parse(
      (await publicRequest(node, 'GET', `/orders/${id}/acme`, { headers: { 'x-api-key': node.apiKey } })).text
    ).acme as { autoinstall: { login_url: string } }
    const link = acme.autoinstall.login_url
    expect(link).toMatch(new RegExp(`^${node.base}/acme/setup/[A-Za-z0-9_-]{32}$`))
    const client = mkdtempSync(join(work, 'client-'))
    writeFileSync(join(client, 'root.pem'), node.rootPem)
    const page = await onClient('curl', ['-s', '-w', '\\n%{http_code}', '--cacert', join(client, 'root.pem'), link])
    expect(page.stdout.trim().split('\n').pop()).toBe('200')
    expect(page.stdout).toContain(`<code>${node.base}/acme/directory</code>`)
    // A wrong token is a plain 404.
    const wrong = await publicRequest(node, 'GET', '/acme/setup/not-a-token')
    expect(wrong.status).toBe(404)
  })

  it('finds no admin UI, no RPC and no loopback listener there', async () => {
    for (const [method, path] of [
      ['GET', '/ui/'],
      ['GET', '/ui/login?token=anything'],
      ['POST', '/rpc/settings'],
      ['POST', '/ui/logout']
    ]) {
      const res = await publicRequest(node, method, path, {
        body: method === 'POST' ? '{"args":[]}' : undefined,
        headers: method === 'POST' ? { 'content-type': 'application/json' } : {}
      })
      expect(res.status, `${method} ${path}`).toBe(404)
      expect(res.text).not.toMatch(/session|sign in/i)
    }
    // The loopback reseller API serves the UI (it was started with --ui), only on loopback.
    const loopbackUi = await fetch(`${node.serve.api}/ui/`)
    expect(loopbackUi.status).toBe(401)
    if (net.kind === 'netns') {
      const apiPort = new URL(node.serve.api).port
      // Neither the client's own loopback nor this machine's address has the loopback listeners.
      for (const target of [
        `http://127.0.0.1:${apiPort}/products`,
        `http://${net.serverAddress}:${apiPort}/products`
      ]) {
        const r = await onClient('curl', ['-s', '-m', '5', target])
        expect(r.code, target).toBe(7)
      }
    }
  })

  it('refuses a Host other than the public name, loopback names included', async () => {
    for (const host of ['evil.example', 'localhost', '127.0.0.1', `${net.serverAddress}:${node.port}`]) {
      const acme = await publicRequest(node, 'GET', '/acme/directory', { headers: { host } })
      expect(acme.status, host).toBe(403)
      expect(acme.headers['content-type']).toMatch(/application\/problem\+json/)
      expect(JSON.parse(acme.text)).toMatchObject({
        type: 'urn:ietf:params:acme:error:unauthorized',
        detail: `request refused: the Host header is not ${NAME}`
      })
      const api = await publicRequest(node, 'GET', '/products', { headers: { host, 'x-api-key': node.apiKey } })
      expect(api.status, host).toBe(403)
      expect(JSON.parse(api.text)).toEqual({ success: false, error: `request refused: the Host header is not ${NAME}` })
    }
  })

  it('refuses a request without a Host header the same way', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const s = connect({ host: net.serverAddress, port: node.port, servername: NAME, ca: node.rootPem }, () => {
        s.end('GET /products HTTP/1.1\r\nConnection: close\r\n\r\n')
      })
      let text = ''
      s.on('data', (d) => (text += d))
      s.on('close', () => resolve(text))
      s.on('error', reject)
    })
    expect(answer).toMatch(/^HTTP\/1\.1 403 /)
    expect(answer).toContain(`{"success":false,"error":"request refused: the Host header is not ${NAME}"}`)
  })

  it('bounds bodies as on loopback: 64 KiB for ACME, 1 MiB for the reseller API', async () => {
    const jws = await publicRequest(node, 'POST', '/acme/new-account', {
      body: JSON.stringify({ protected: 'x'.repeat(70 * 1024), payload: '', signature: '' }),
      headers: { 'content-type': 'application/jose+json' }
    })
    expect(jws.status).toBe(413)
    expect(jws.headers['content-type']).toMatch(/application\/problem\+json/)
    const order = await publicRequest(node, 'POST', '/orders', {
      body: JSON.stringify({ product_id: 12, domain: 'x'.repeat(1024 * 1024 + 10) }),
      headers: { 'content-type': 'application/json', 'x-api-key': node.apiKey }
    })
    expect(order.status).toBe(413)
    expect(JSON.parse(order.text)).toEqual({ success: false, error: 'request body is larger than 1 MiB' })
  })

  it('lets go of a peer that never starts TLS, and of one that sends its headers a byte every few seconds', async () => {
    const started = Date.now()
    // A TCP connection that says nothing: cut at the handshake deadline (10 s).
    const silent = await new Promise<number>((resolve, reject) => {
      const s = netConnect({ host: net.serverAddress, port: node.port })
      s.on('error', reject)
      s.on('close', () => resolve(Date.now() - started))
    })
    expect(silent).toBeGreaterThanOrEqual(9_000)
    expect(silent).toBeLessThan(60_000)

    // TLS done, then a request line and headers trickling in: cut at the header deadline (20 s).
    const trickleStart = Date.now()
    const trickled = await new Promise<{ ms: number; bytes: number }>((resolve, reject) => {
      const s = connect({ host: net.serverAddress, port: node.port, servername: NAME, ca: node.rootPem }, () => {
        s.write(`GET /acme/directory HTTP/1.1\r\nHost: ${NAME}\r\n`)
        // Read what comes (a 408), so the socket can reach its end and close.
        s.resume()
        let sent = 0
        const drip = setInterval(() => {
          sent += 1
          if (!s.destroyed) s.write('X')
        }, 3000)
        s.on('close', () => {
          clearInterval(drip)
          resolve({ ms: Date.now() - trickleStart, bytes: sent })
        })
      })
      s.on('error', () => undefined)
      s.on('timeout', reject)
    })
    expect(trickled.ms).toBeGreaterThanOrEqual(19_000)
    expect(trickled.ms).toBeLessThan(60_000)
    // The listener still answers everyone else.
    expect((await publicRequest(node, 'GET', '/acme/directory')).status).toBe(200)
  }, 150_000)

  it('keeps at most 64 connections of one address open', async () => {
    const sockets = await Promise.all(
      Array.from(
        { length: 70 },
        () =>
          new Promise<{ closed: Promise<void> }>((resolve) => {
            const s = netConnect({ host: net.serverAddress, port: node.port })
            const closed = new Promise<void>((r) => s.on('close', () => r()))
            s.on('error', () => undefined)
            s.on('connect', () => resolve({ closed }))
            s.on('close', () => resolve({ closed }))
          })
      )
    )
    // Those over the limit are closed at once, long before any deadline.
    const outcome = await Promise.all(
      sockets.map((s) =>
        Promise.race([s.closed.then(() => 'closed'), new Promise((r) => setTimeout(() => r('open'), 3000))])
      )
    )
    expect(outcome.filter((o) => o === 'closed').length).toBeGreaterThanOrEqual(6)
    expect(outcome.filter((o) => o === 'open').length).toBeLessThanOrEqual(64)
    // Once they are gone, the address is served again.
    await new Promise((r) => setTimeout(r, 11_000))
    expect((await publicRequest(node, 'GET', '/acme/directory')).status).toBe(200)
  }, 60_000)

  it('issues its certificate anew on SIGHUP: a new connection sees a new serial, the process stays', async () => {
    const before = await presentedSerial(node)
    expect(before).toMatch(/^[0-9A-F]+$/)
    const pid = node.serve.child.pid
    node.serve.child.kill('SIGHUP')
    const after = await serialAfter(node, before)
    expect(after).not.toBe(before)
    expect(node.serve.child.exitCode).toBeNull()
    expect(node.serve.child.pid).toBe(pid)
    // Still the public name, still the CertDesk root, and still serving.
    const dir = await publicRequest(node, 'GET', '/acme/directory')
    expect(dir.status).toBe(200)
  })
})

describe('a listener given certificate files', () => {
  let ca: TestCa
  let node: Node
  let certFile: string
  let keyFile: string

  /** Replaces both files the way a renewal does: each written beside and renamed over. */
  const install = (certPem: string, keyPem: string): void => {
    for (const [file, pem] of [
      [certFile, certPem],
      [keyFile, keyPem]
    ]) {
      const temp = `${file}.${randomBytes(4).toString('hex')}`
      writeFileSync(temp, pem, { mode: 0o600 })
      renameSync(temp, file)
    }
  }

  /** Waits (generously) until serve has said `line` on stderr. */
  const logged = async (line: string): Promise<void> => {
    for (let i = 0; i < 150 && !node.serve.stderr().includes(line); i++) await new Promise((r) => setTimeout(r, 200))
  }

  beforeAll(async () => {
    ca = await createTestCa()
    const tls = mkdtempSync(join(work, 'tls-'))
    certFile = join(tls, 'fullchain.pem')
    keyFile = join(tls, 'privkey.pem')
    const leaf = await ca.issue(NAME, new Date(Date.now() - 3600_000), 30)
    install(`${leaf.certificatePem}${leaf.chainPem}`, leaf.privateKeyPem)
    node = await startNode(['--tls-cert', certFile, '--tls-key', keyFile, '--public-rate-limit', '3', '--public-ui'])
  }, 120_000)

  it('tells clients to trust their system, not the CertDesk root, in the set-up commands', async () => {
    const ordered = await publicRequest(node, 'POST', '/orders', {
      ca: ca.rootPem,
      body: JSON.stringify({ product_id: 12, domain: 'files.example.com' }),
      headers: { 'content-type': 'application/json', 'x-api-key': node.apiKey }
    })
    expect(ordered.status, ordered.text).toBe(200)
    const id = (JSON.parse(ordered.text) as { order_id: number }).order_id
    const acme = (
      JSON.parse(
        (
          await publicRequest(node, 'GET', `/orders/${id}/acme`, {
            ca: ca.rootPem,
            headers: { 'x-api-key': node.apiKey }
          })
        ).text
      ) as { acme: Acme }
    ).acme
    expect(acme.account.server_url).toBe(`${node.base}/acme/directory`)
    expect(acme.commands.certbot).toMatch(/^certbot certonly /)
    expect(acme.commands.lego).toMatch(/^lego --server /)
    expect(acme.commands.acme_sh).not.toContain('--ca-bundle')
    expect(acme.commands.root_ca).toBe(`curl -so certdesk-root.pem ${node.base}/acme/root-ca.pem`)
  })

  it('serves the desktop UI there only when asked, behind the one-time link and a Secure session cookie', async () => {
    const link = /desktop UI by the public name \(same one-time link\): (\S+)/.exec(node.serve.stdout())?.[1] as string
    expect(link).toMatch(new RegExp(`^${node.base}/ui/login\\?token=[A-Za-z0-9_-]{43}$`))
    // Without a session: the sign-in page and the RPC say so, and give nothing.
    const page = await publicRequest(node, 'GET', '/ui/', { ca: ca.rootPem })
    expect(page.status).toBe(401)
    const origin = node.base
    const rpc = await publicRequest(node, 'POST', '/rpc/settings', {
      ca: ca.rootPem,
      body: '{"args":[]}',
      headers: { 'content-type': 'application/json', origin }
    })
    expect(rpc.status).toBe(401)
    // The page's origin there is https://NAME:PORT; the same name over http is another origin.
    const plain = await publicRequest(node, 'POST', '/rpc/settings', {
      ca: ca.rootPem,
      body: '{"args":[]}',
      headers: { 'content-type': 'application/json', origin: origin.replace('https:', 'http:') }
    })
    expect(plain.status).toBe(403)
    expect(JSON.parse(plain.text).error).toContain(`not from the CertDesk page at ${origin}`)
    // The link signs in once; the cookie is Secure over TLS.
    const url = new URL(link)
    const signIn = await publicRequest(node, 'GET', `${url.pathname}${url.search}`, { ca: ca.rootPem })
    expect(signIn.status).toBe(303)
    const cookie = String(signIn.headers['set-cookie'])
    expect(cookie).toMatch(/^certdesk_session=[^;]+; HttpOnly; SameSite=Strict; Path=\/; Secure$/)
    const session = cookie.split(';')[0]
    const settings = await publicRequest(node, 'POST', '/rpc/settings', {
      ca: ca.rootPem,
      body: '{"args":[]}',
      headers: { 'content-type': 'application/json', cookie: session, origin }
    })
    expect(settings.status).toBe(200)
    expect(JSON.parse(settings.text).success).toBe(true)
    // The link worked once. A sign-out makes a new one, printed by both names.
    const again = await publicRequest(node, 'GET', `${url.pathname}${url.search}`, { ca: ca.rootPem })
    expect(again.status).toBe(401)
    const out = await publicRequest(node, 'POST', '/ui/logout', {
      ca: ca.rootPem,
      headers: { cookie: session, origin }
    })
    expect(out.status).toBe(200)
    const fresh = new RegExp(
      `sign in again, open once: ${node.base.replace(/\./g, '\\.')}/ui/login\\?token=[A-Za-z0-9_-]{43}`
    )
    for (let i = 0; i < 50 && !fresh.test(node.serve.stdout()); i++) await new Promise((r) => setTimeout(r, 100))
    expect(node.serve.stdout()).toMatch(fresh)
    expect(node.serve.stdout()).toMatch(/sign in again, open once: http:\/\/127\.0\.0\.1:\d+\/ui\/login\?token=/)
  })

  it('reads renewed files without a restart, and keeps the old pair when the new one does not match', async () => {
    const first = await presentedSerial(node, ca.rootPem)
    const renewed = await ca.issue(NAME, new Date(Date.now() - 60_000), 30)
    install(`${renewed.certificatePem}${renewed.chainPem}`, renewed.privateKeyPem)
    const second = await serialAfter(node, first, ca.rootPem)
    expect(second).toBe(renewed.serial.toUpperCase())
    expect(node.serve.child.exitCode).toBeNull()

    // A certificate with another certificate's key (a renewal caught half-way) is refused; the pair in force stays.
    const other = await ca.issue(NAME, new Date(Date.now() - 60_000), 30)
    install(`${other.certificatePem}${other.chainPem}`, renewed.privateKeyPem)
    const mismatch = `kept the TLS certificate in force (serial ${second}): the new one of ${certFile} is refused: the private key does not belong to the certificate`
    await logged(mismatch)
    expect(node.serve.stderr()).toContain(mismatch)
    expect(await presentedSerial(node, ca.rootPem)).toBe(second)
    // A certificate for another name is refused too.
    const wrong = await ca.issue('other.example', new Date(Date.now() - 60_000), 30)
    install(`${wrong.certificatePem}${wrong.chainPem}`, wrong.privateKeyPem)
    const misnamed = `kept the TLS certificate in force (serial ${second}): the new one of ${certFile} is refused: the certificate does not name ${NAME}`
    await logged(misnamed)
    expect(node.serve.stderr()).toContain(misnamed)
    expect(await presentedSerial(node, ca.rootPem)).toBe(second)
  }, 120_000)

  it('limits requests per client address, with Retry-After, also for answers kept for repeated reads', async () => {
    // A polling script's repeated GET is answered from kept bytes before fastify (fast-reads.ts): counted all the same.
    const reads = []
    for (let i = 0; i < 24; i++)
      reads.push(
        await publicRequest(node, 'GET', '/products', { ca: ca.rootPem, headers: { 'x-api-key': node.apiKey } })
      )
    const readsLimited = reads.filter((a) => a.status === 429)
    expect(readsLimited.length).toBeGreaterThan(0)
    expect(readsLimited[0].headers['retry-after']).toMatch(/^\d+$/)
    expect(JSON.parse(readsLimited[0].text)).toEqual({
      success: false,
      error: expect.stringMatching(/^too many requests from this address: at most 3 a second; try again in \d+ s$/)
    })
    // The bucket fills again (12 at 3 a second); then an ACME client gets the limit as an RFC 8555 problem.
    await new Promise((r) => setTimeout(r, 4500))
    const answers = []
    for (let i = 0; i < 24; i++) answers.push(await publicRequest(node, 'GET', '/acme/directory', { ca: ca.rootPem }))
    expect(answers[0].status).toBe(200)
    const limited = answers.filter((a) => a.status === 429)
    expect(limited.length).toBeGreaterThan(0)
    expect(limited[0].headers['retry-after']).toMatch(/^\d+$/)
    expect(JSON.parse(limited[0].text)).toMatchObject({ type: 'urn:ietf:params:acme:error:rateLimited', status: 429 })
  })
})
