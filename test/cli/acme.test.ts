/**
 * The README's "ACME subscription with curl" walk, for real: `certdesk serve` (reseller API and
 * the HTTPS ACME directory), an order over HTTP, GET /orders/{id}/acme, the root saved from
 * root_ca_url, and the printed certbot command pasted into a shell. Only the test's own
 * plumbing is added to it: the http-01 port (80 needs root) and certbot's state dirs.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, run, startChallTestSrv, type ChallTestSrv } from '../support/acme'
import { createServer } from 'node:net'
import { CLI, certdesk } from '../support/cli'
import { bookText, engineEnv } from '../support/engine'

let dir: string
let dns: ChallTestSrv
let stopServe: (() => Promise<number>) | null = null

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'certdesk-cli-acme-'))
  dns = await startChallTestSrv()
})
afterAll(async () => {
  await stopServe?.()
  await dns?.stop()
  rmSync(dir, { recursive: true, force: true })
})

function serve(dataDir: string): Promise<{ api: string; directory: string }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', dataDir, '--port', '0'], {
    env: engineEnv(dataDir),
    stdio: ['ignore', 'pipe', 'pipe']
  })
  // Stops by itself even if the test dies before it asks (SIGTERM is how we stop it: exit 0).
  const guard = setTimeout(() => child.kill('SIGKILL'), 300_000)
  guard.unref()
  const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)))
  stopServe = async () => {
    child.kill('SIGTERM')
    return exited
  }
  let out = ''
  let err = ''
  child.stderr.on('data', (d) => (err += d))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve printed no URLs in 30 s: ${err}`)), 30_000)
    child.stdout.on('data', (d) => {
      out += d
      const api = /listening on (http:\/\/\S+)/.exec(out)?.[1]
      const directory = /ACME directory at (https:\/\/\S+)/.exec(out)?.[1]
      if (api && directory) {
        clearTimeout(timer)
        resolve({ api, directory })
      }
    })
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${err}`)))
  })
}

describe('certdesk and the ACME subscription walk', () => {
  it('keeps the external ACME CA settings, with the HMAC key only in the keychain', () => {
    const data = join(dir, 'issuer')
    const hmacFile = join(dir, 'hmac.txt')
    writeFileSync(hmacFile, 'c2VjcmV0LWhtYWMta2V5LWZvci10ZXN0cw\n')
    const set = certdesk([
      'admin',
      '--data-dir',
      data,
      'acme-issuer',
      'set',
      '--directory',
      'https://ca.example.net/acme/directory',
      '--eab-kid',
      'kid-7',
      '--eab-hmac-file',
      hmacFile
    ])
    expect(set.code, set.stderr).toBe(0)
    expect(set.json).toEqual({
      success: true,
      acme_issuer: {
        enabled: true,
        directory_url: 'https://ca.example.net/acme/directory',
        eab_kid: 'kid-7',
        eab_hmac_key_in_keychain: true,
        account_url: null,
        reseller_accounts: []
      }
    })
    expect(JSON.stringify(set.json)).not.toContain('c2VjcmV0')
    const plain = certdesk([
      'admin',
      '--data-dir',
      data,
      'acme-issuer',
      'set',
      '--directory',
      'http://ca.example.net/dir'
    ])
    expect(plain.code).toBe(1)
    expect(plain.json.error).toBe(
      'could not configure the ACME issuer: the directory must be an https:// URL (RFC 8555 §6.1)'
    )
    const off = certdesk(['admin', '--data-dir', data, 'acme-issuer', 'off'])
    expect((off.json.acme_issuer as Record<string, unknown>).enabled).toBe(false)
    expect(bookText(data)).not.toContain('c2VjcmV0LWhtYWMta2V5')
  })

  it('orders a subscription with curl-like calls and gets a certificate with the pasted certbot command', async () => {
    const data = join(dir, 'walk')
    const httpPort = await freePort()
    // Where this machine's checks reach the customer's domain: loopback DNS and a high port.
    expect(certdesk(['admin', '--data-dir', data, 'settings', 'set', 'dcv.dns_resolver', dns.dns]).code).toBe(0)
    expect(certdesk(['admin', '--data-dir', data, 'settings', 'set', 'dcv.http_port', String(httpPort)]).code).toBe(0)
    // certbot answers on loopback, which validation refuses unless the admin says this is a lab.
    expect(certdesk(['admin', '--data-dir', data, 'settings', 'set', 'dcv.allow_private_addresses', 'true']).code).toBe(
      0
    )
    const reseller = certdesk([
      'admin',
      '--data-dir',
      data,
      'reseller',
      'add',
      '--name',
      'Walk',
      '--email',
      'walk@example.com'
    ])
    const id = String((reseller.json.reseller as { id: number }).id)
    certdesk(['admin', '--data-dir', data, 'credit', 'add', '--reseller', id, '--amount', '100'])
    const key = certdesk(['admin', '--data-dir', data, 'apikey', 'create', '--reseller', id]).json.api_key as string
    const { api, directory } = await serve(data)
    expect(directory).toMatch(/^https:\/\/localhost:\d+\/acme\/directory$/)

    const h = { 'x-api-key': key, 'content-type': 'application/json' }
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON read by the test
    type J = any
    const created: J = await (
      await fetch(`${api}/orders`, {
        method: 'POST',
        headers: h,
        body: JSON.stringify({ product_id: 12, domain: 'walk.example.com' })
      })
    ).json()
    expect(created).toMatchObject({ success: true, status: 'completed', fulfillment: 'acme_subscription' })
    const details: J = await (await fetch(`${api}${created.acme.details_endpoint}`, { headers: h })).json()
    expect(details.acme.account.server_url).toBe(directory)
    writeFileSync(join(dir, 'certdesk-root.pem'), await (await fetch(details.acme.root_ca_url)).text())

    const pasted = details.acme.commands.certbot as string
    expect(pasted.startsWith('REQUESTS_CA_BUNDLE=certdesk-root.pem certbot certonly --standalone')).toBe(true)
    const plumbing = `--http-01-port ${httpPort} --http-01-address 127.0.0.1 --config-dir cb/config --work-dir cb/work --logs-dir cb/logs`
    const r = await run('sh', ['-c', `${pasted} ${plumbing}`], { cwd: dir, seconds: 120 })
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(r.stdout + r.stderr).toContain('Successfully received certificate.')
    const verify = await run(
      'openssl',
      [
        'verify',
        '-CAfile',
        'certdesk-root.pem',
        '-untrusted',
        'cb/config/live/walk.example.com/chain.pem',
        'cb/config/live/walk.example.com/cert.pem'
      ],
      { cwd: dir }
    )
    expect(verify.stdout).toContain('cert.pem: OK')

    const after: J = await (await fetch(`${api}/orders/${created.order_id}/acme`, { headers: h })).json()
    expect(after.acme.account.status).toBe('valid')
    expect(after.acme.account.accounts).toHaveLength(1)
    expect(await stopServe?.()).toBe(0)
    stopServe = null
  })

  it('keeps serving the reseller API when the ACME port is taken, and says why', async () => {
    const blocker = createServer()
    const port = await new Promise<number>((resolve) =>
      blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as { port: number }).port))
    )
    try {
      const child = spawn(
        process.execPath,
        [CLI, 'serve', '--data-dir', join(dir, 'busy'), '--port', '0', '--acme-port', String(port)],
        {
          env: engineEnv(join(dir, 'busy')),
          stdio: ['ignore', 'pipe', 'pipe']
        }
      )
      const guard = setTimeout(() => child.kill('SIGKILL'), 120_000)
      guard.unref()
      const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)))
      let out = ''
      child.stdout.on('data', (d) => (out += d))
      child.stderr.on('data', (d) => (out += d))
      for (let i = 0; i < 300 && !/listening on (http:\/\/\S+)/.test(out); i++)
        await new Promise((r) => setTimeout(r, 100))
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1] as string
      const res = await fetch(`${url}/acme/root-ca.pem`)
      expect(res.status).toBe(200)
      expect(await res.text()).toContain('-----BEGIN CERTIFICATE-----')
      expect(out).toMatch(new RegExp(`could not start the ACME server on port ${port}: .*EADDRINUSE`))
      expect(out).not.toContain('ACME directory at')
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
    } finally {
      blocker.close()
    }
  })
})
