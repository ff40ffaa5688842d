/**
 * Debian's Pebble (RFC 8555 test CA, 2.4: no renewalInfo, no dns-persist-01) on loopback with
 * EAB required, its HTTPS under a throw-away openssl CA, and its DNS lookups sent to `dnsServer`.
 * It runs under `timeout`, so it stops by itself should the test process die first.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, run } from './acme'

export const PEBBLE_EAB = {
  kid: 'certdesk-test',
  hmac: Buffer.from('a 32-byte key for the pebble EAB').toString('base64url')
}

export interface Pebble {
  directoryUrl: string
  /** The PEM file of the root Pebble's HTTPS listener chains to (the ACME issuer's ca_bundle). */
  caBundle: string
  close(): Promise<void>
}

async function tlsFiles(dir: string): Promise<void> {
  const o = (args: string[]) => run('openssl', args, { seconds: 30 })
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']
  await o([
    'req',
    '-x509',
    ...ec,
    '-days',
    '2',
    '-subj',
    '/CN=Pebble test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign',
    '-keyout',
    join(dir, 'ca.key'),
    '-out',
    join(dir, 'ca.pem')
  ])
  await o([
    'req',
    '-new',
    ...ec,
    '-subj',
    '/CN=localhost',
    '-keyout',
    join(dir, 'key.pem'),
    '-out',
    join(dir, 'req.pem')
  ])
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n')
  await o([
    'x509',
    '-req',
    '-in',
    join(dir, 'req.pem'),
    '-CA',
    join(dir, 'ca.pem'),
    '-CAkey',
    join(dir, 'ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    join(dir, 'ext.cnf'),
    '-out',
    join(dir, 'cert.pem')
  ])
}

function reachable(url: string, ca: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: new Agent({ ca }), timeout: 2000 }, (res) => {
      res.resume()
      res.on('end', () => resolve())
    })
    req.on('error', reject)
    req.end()
  })
}

/** `httpPort`: where Pebble sends its http-01 checks (a test web server); a closed port otherwise. */
export async function startPebble(opts: {
  dnsServer: string
  validityDays: number
  httpPort?: number
}): Promise<Pebble> {
  const work = mkdtempSync(join(tmpdir(), 'certdesk-pebble-'))
  await tlsFiles(work)
  const [port, mgmt, httpPort, tlsPort] = [await freePort(), await freePort(), await freePort(), await freePort()]
  writeFileSync(
    join(work, 'pebble.json'),
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${port}`,
        managementListenAddress: `127.0.0.1:${mgmt}`,
        certificate: join(work, 'cert.pem'),
        privateKey: join(work, 'key.pem'),
        httpPort: opts.httpPort ?? httpPort,
        tlsPort,
        ocspResponderURL: '',
        externalAccountBindingRequired: true,
        externalAccountMACKeys: { [PEBBLE_EAB.kid]: PEBBLE_EAB.hmac },
        certificateValidityPeriod: opts.validityDays * 86_400
      }
    })
  )
  const child = spawn(
    'timeout',
    ['-k', '5', '600', 'pebble', '-config', join(work, 'pebble.json'), '-dnsserver', opts.dnsServer],
    {
      env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' },
      stdio: ['ignore', 'pipe', 'pipe']
    }
  )
  let log = ''
  child.stdout?.on('data', (d) => (log += d))
  child.stderr?.on('data', (d) => (log += d))
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()))
  const ca = readFileSync(join(work, 'ca.pem'), 'utf8')
  const directoryUrl = `https://localhost:${port}/dir`
  for (let i = 0; ; i++) {
    try {
      await reachable(directoryUrl, ca)
      break
    } catch {
      if (i > 100 || child.exitCode !== null) throw new Error(`could not start pebble: ${log}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  return {
    directoryUrl,
    caBundle: join(work, 'ca.pem'),
    close: async () => {
      if (child.exitCode === null) child.kill('SIGTERM')
      await exited
      rmSync(work, { recursive: true, force: true })
    }
  }
}
