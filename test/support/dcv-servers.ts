/**
 * The real servers domain validation talks to, on loopback: pebble-challtestsrv (Debian's
 * pebble package) as the DNS server, a node:http(s) server as every domain's web server, and
 * smtp-server as the mail sink. Each stops in `close()`, and the DNS server also stops by
 * itself after 15 minutes (coreutils `timeout`) should a test process die first.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, normalize } from 'node:path'
import { SMTPServer } from 'smtp-server'
import type { Service } from '../../src-main/core/service'
import { opensslCsr, opensslCsrForKey } from './csr'

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo
      s.close(() => resolve(port))
    })
  })
}

export interface DnsServer {
  /** `127.0.0.1:PORT`, the value of the `dcv.dns_resolver` setting. */
  address: string
  setCname(host: string, target: string): Promise<void>
  setTxt(host: string, value: string): Promise<void>
  /** A and AAAA answers for `host` in place of the defaults. */
  setA(host: string, addresses: string[]): Promise<void>
  setAaaa(host: string, addresses: string[]): Promise<void>
  clear(host: string): Promise<void>
  close(): Promise<void>
}

/**
 * `defaults` are the A and AAAA answers for names without their own records (127.0.0.1 and ::1
 * unless given; '' answers none).
 */
export async function startDns(defaults: { ipv4?: string; ipv6?: string } = {}): Promise<DnsServer> {
  const dns = await freePort()
  const mgmt = await freePort()
  const child: ChildProcess = spawn(
    'timeout',
    [
      '900',
      'pebble-challtestsrv',
      '-dns01',
      `127.0.0.1:${dns}`,
      '-http01',
      '',
      '-https01',
      '',
      '-tlsalpn01',
      '',
      '-management',
      `127.0.0.1:${mgmt}`,
      '-defaultIPv4',
      defaults.ipv4 ?? '127.0.0.1',
      '-defaultIPv6',
      defaults.ipv6 ?? '::1'
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] }
  )
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const base = `http://127.0.0.1:${mgmt}`
  const post = async (path: string, body: unknown): Promise<void> => {
    const res = await fetch(base + path, {
      method: 'POST',
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(5000)
    })
    if (!res.ok) throw new Error(`pebble-challtestsrv ${path}: HTTP ${res.status}`)
  }
  // Ready once the management API answers.
  const deadline = Date.now() + 10_000
  for (;;) {
    try {
      await post('/clear-txt', { host: 'ready.invalid.' })
      break
    } catch (err) {
      if (Date.now() > deadline) {
        child.kill()
        throw new Error(`pebble-challtestsrv did not start: ${String(err)}`, { cause: err })
      }
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  const fqdn = (h: string): string => (h.endsWith('.') ? h : `${h}.`)
  return {
    address: `127.0.0.1:${dns}`,
    setCname: (host, target) => post('/set-cname', { host: fqdn(host), target: fqdn(target) }),
    setTxt: (host, value) => post('/set-txt', { host: fqdn(host), value }),
    setA: (host, addresses) => post('/add-a', { host: fqdn(host), addresses }),
    setAaaa: (host, addresses) => post('/add-aaaa', { host: fqdn(host), addresses }),
    clear: async (host) => {
      await post('/clear-txt', { host: fqdn(host) })
      await post('/clear-cname', { host: fqdn(host) })
    },
    close: async () => {
      child.kill('SIGTERM')
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))])
    }
  }
}

export interface WebServer {
  httpPort: number
  httpsPort: number
  /** Serve `body` at `path` for the Host `host` (both schemes). */
  put(host: string, path: string, body: string): void
  remove(host: string, path: string): void
  /** Answer `path` for the Host `host` with a 302 to `location`. */
  redirect(host: string, path: string, location: string): void
  /** Host headers seen, to show the check asked for the right domain. */
  hostsSeen: string[]
  close(): Promise<void>
}

/** A throwaway self-signed P-256 certificate for a loopback TLS server (openssl, valid two days). */
export function selfSignedTls(): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'certdesk-web-'))
  try {
    spawnSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=localhost',
        '-keyout',
        join(dir, 'k.pem'),
        '-out',
        join(dir, 'c.pem')
      ],
      { timeout: 30_000 }
    )
    return { key: readFileSync(join(dir, 'k.pem')), cert: readFileSync(join(dir, 'c.pem')) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export async function startWeb(): Promise<WebServer> {
  const files = new Map<string, string>()
  const redirects = new Map<string, string>()
  const hostsSeen: string[] = []
  const handler: http.RequestListener = (req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '')
    hostsSeen.push(host)
    const location = redirects.get(`${host}${req.url ?? ''}`)
    if (location !== undefined) {
      res.writeHead(302, { location }).end()
      return
    }
    const body = files.get(`${host}${req.url ?? ''}`)
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
      return
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end(body)
  }
  // A self-signed certificate for the https server: the check does not require a trusted one.
  const tls = selfSignedTls()
  const plain = http.createServer(handler)
  const secure = https.createServer(tls, handler)
  const listenOn = (s: http.Server): Promise<number> =>
    new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)))
  const httpPort = await listenOn(plain)
  const httpsPort = await listenOn(secure)
  const stop = (s: http.Server): Promise<void> =>
    new Promise((resolve) => {
      s.closeAllConnections()
      s.close(() => resolve())
    })
  return {
    httpPort,
    httpsPort,
    hostsSeen,
    put: (host, path, body) => files.set(`${host}${path}`, body),
    remove: (host, path) => files.delete(`${host}${path}`),
    redirect: (host, path, location) => redirects.set(`${host}${path}`, location),
    close: async () => {
      await Promise.all([stop(plain), stop(secure)])
    }
  }
}

export interface SmtpSink {
  url: string
  messages: { to: string[]; raw: string }[]
  close(): Promise<void>
}

export async function startSmtp(): Promise<SmtpSink> {
  const messages: SmtpSink['messages'] = []
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        messages.push({
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8')
        })
        callback()
      })
    }
  })
  const port = await new Promise<number>((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve((server.server.address() as AddressInfo).port))
  })
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}

/**
 * Configures `orderId` with an openssl CSR for `domain` and HTTP validation. The returned
 * `publish()` puts the validation file on `web`; the next status check then issues.
 */
export async function configureOverHttp(
  service: Service,
  web: WebServer,
  resellerId: number,
  orderId: number,
  domain: string,
  /** A key CertDesk keeps for the order (so folder deploys can write it): the CSR is made from it. */
  keptKeyPem?: string
): Promise<() => void> {
  if (keptKeyPem) await service.keyVault.store(resellerId, orderId, keptKeyPem)
  const conf = await service.certificates.configure(resellerId, {
    orderId,
    csr: keptKeyPem ? opensslCsrForKey([domain], keptKeyPem) : opensslCsr([domain]),
    dcvMethod: 'http'
  })
  const i = conf.validation[0].instructions
  if (i.method !== 'http') throw new Error('expected http instructions')
  return () => web.put(domain, new URL(i.url).pathname, i.fileContent)
}

/**
 * A static web server over `root` on a free loopback port, as a customer's server serves its web
 * root (a script writes the validation files there); 404 for anything missing or outside it.
 */
export async function serveFolder(root: string): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const file = join(root, normalize(decodeURIComponent((req.url ?? '/').split('?')[0])))
    if (!file.startsWith(root) || !existsSync(file)) return void res.writeHead(404).end('not found')
    res.writeHead(200, { 'content-type': 'text/plain' }).end(readFileSync(file))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return server
}
