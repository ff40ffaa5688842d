/**
 * Revocation of local-CA certificates through the reseller API: every leaf names CertDesk's CRL
 * in its CRL Distribution Points (RFC 5280 §4.2.1.13), the CRL is served over HTTP without an
 * API key and signed by the issuing CA (openssl crl checks the signature), POST /ssl/revoke puts
 * the certificate on it with its RFC 5280 reason (openssl verify -crl_check, with the CRL given
 * and downloaded from the address in the certificate, then says "certificate revoked"), the
 * scheduler signs a new CRL once a day, and a revoked certificate is never deployed again.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { CRL_PATH } from '../../src-main/core/certificates/local-ca-crl'
import { run } from '../support/acme'
import { manualClock } from '../support/clock'
import { opensslCsr, opensslText } from '../support/csr'
import { startDns, startWeb, type DnsServer, type WebServer } from '../support/dcv-servers'
import { startServer, type TestReseller, type TestServer } from '../support/server'

type Body = Record<string, unknown>

const clock = manualClock('2026-11-21T10:00:00Z')
let s: TestServer
let dns: DnsServer
let web: WebServer
let r: TestReseller
let work: string

beforeAll(async () => {
  ;[s, dns, web] = await Promise.all([startServer({ clock: clock.clock }), startDns(), startWeb()])
  await s.service.settings.set(DCV_SETTINGS.resolver, dns.address)
  await s.service.settings.set(DCV_SETTINGS.httpPort, String(web.httpPort))
  await s.service.settings.set(DCV_SETTINGS.allowPrivateAddresses, 'true')
  r = await s.reseller({ credit: 1000 })
  work = mkdtempSync(join(tmpdir(), 'certdesk-crl-'))
})
afterAll(async () => {
  await Promise.all([web?.close(), dns?.close()])
  await s?.close()
  if (work) rmSync(work, { recursive: true, force: true })
})

const post = (path: string, body: Body, key = r.key) => s.request<Body>('POST', path, { key, body })
const get = (path: string, key = r.key) => s.request<Body>('GET', path, { key })

function openssl(args: string[]): { ok: boolean; out: string } {
  const res = spawnSync('openssl', args, { encoding: 'utf8', timeout: 30_000 })
  return { ok: res.status === 0, out: `${res.stdout}${res.stderr}` }
}

/** An order issued over HTTP validation on the loopback web server; its id. */
async function issued(domain: string): Promise<number> {
  const created = await post('/orders', { product_id: 2, domain })
  const id = created.body.order_id as number
  const conf = await post('/ssl/configure', { order_id: id, csr: opensslCsr([domain], 'ec:P-256'), dcv_method: 'http' })
  const [v] = conf.body.validation as { instructions: { url: string; file_content: string } }[]
  web.put(domain, new URL(v.instructions.url).pathname, v.instructions.file_content)
  const done = await get(`/ssl/${id}`)
  expect(done.body.status, JSON.stringify(done.body)).toBe('completed')
  return id
}

/** The CRL as a relying party fetches it: no API key. */
async function fetchCrl(): Promise<{ status: number; type: string | null; der: Buffer }> {
  const res = await fetch(`${s.url}${CRL_PATH}`)
  return { status: res.status, type: res.headers.get('content-type'), der: Buffer.from(await res.arrayBuffer()) }
}

/** `openssl crl -text` of a DER CRL, its signature checked against `caFile`. */
const crlText = (der: string, caFile: string) =>
  openssl(['crl', '-inform', 'DER', '-in', der, '-CAfile', caFile, '-noout', '-text'])

/** `openssl verify -crl_check` of the leaf at `at` with the CRL given as a file. */
const verifyWithCrl = (f: { root: string; chain: string; leaf: string }, pemCrl: string, at: string) =>
  openssl(['verify', '-attime', at, '-crl_check', '-CRLfile', pemCrl, '-CAfile', f.root, '-untrusted', f.chain, f.leaf])

function files(leaf: string): { root: string; chain: string; leaf: string; crl: string } {
  const f = {
    root: join(work, 'root.pem'),
    chain: join(work, 'chain.pem'),
    leaf: join(work, 'leaf.pem'),
    crl: join(work, 'crl.der')
  }
  writeFileSync(f.leaf, leaf)
  return f
}

describe('revocation by the local CA', () => {
  it('lists a revoked certificate on the CRL its certificates point to, which openssl checks', async () => {
    const id = await issued('revoke.example.test')
    const dl = (await get(`/certificate/${id}/download`)).body.certificate as Body
    const leafPem = dl.certificate_pem as string
    // The CRL Distribution Point is this listener's CRL address (RFC 5280 §4.2.1.13).
    expect(opensslText(leafPem)).toMatch(
      new RegExp(
        `X509v3 CRL Distribution Points:\\s+Full Name:\\s+URI:${s.url.replace(/[.]/g, '\\.')}/ca/local-ca\\.crl`
      )
    )
    const f = files(leafPem)
    writeFileSync(f.root, await s.service.localCa.rootPem())
    writeFileSync(f.chain, dl.ca_bundle as string)
    writeFileSync(join(work, 'ca-all.pem'), `${await s.service.localCa.rootPem()}${dl.ca_bundle as string}`)
    const at = String(Math.floor(clock.now().getTime() / 1000))

    const before = await fetchCrl()
    expect(before.status).toBe(200)
    expect(before.type).toBe('application/pkix-crl')
    writeFileSync(f.crl, before.der)
    // Signed by the issuing CA: openssl checks the signature against the intermediate.
    const read = crlText(f.crl, join(work, 'ca-all.pem'))
    expect(read.out).toContain('verify OK')
    expect(read.out).toContain('Issuer: CN = CertDesk Local Issuing CA, O = CertDesk Local CA')
    expect(read.out).toContain('No Revoked Certificates')
    expect(read.out).toMatch(/X509v3 CRL Number:\s+\d+/)
    const pemCrl = join(work, 'crl.pem')
    expect(openssl(['crl', '-inform', 'DER', '-in', f.crl, '-out', pemCrl]).ok).toBe(true)
    const good = verifyWithCrl(f, pemCrl, at)
    expect(good.out).toContain(': OK')

    const revoked = await post('/ssl/revoke', { order_id: id, reason: 'keyCompromise' })
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200)
    expect(revoked.body.certificate).toMatchObject({
      revoked: true,
      revocation_reason: 'keyCompromise',
      serial_number: dl.serial_number,
      revoked_at: '2026-11-21 10:00:00'
    })

    const after = await fetchCrl()
    writeFileSync(f.crl, after.der)
    const listed = crlText(f.crl, join(work, 'ca-all.pem'))
    expect(listed.out).toContain('verify OK')
    expect(listed.out).toContain(`Serial Number: ${dl.serial_number as string}`)
    expect(listed.out).toMatch(/CRL Reason Code:\s+Key Compromise/)
    expect(openssl(['crl', '-inform', 'DER', '-in', f.crl, '-out', pemCrl]).ok).toBe(true)
    const bad = verifyWithCrl(f, pemCrl, at)
    expect(bad.ok).toBe(false)
    expect(bad.out).toContain('certificate revoked')
    // The same, with the CRL fetched from the address the certificate names.
    // (Run beside the listener, not blocking it: openssl fetches from this very process.)
    const fetched = await run(
      'openssl',
      ['verify', '-attime', at, '-crl_check', '-crl_download', '-CAfile', f.root, '-untrusted', f.chain, f.leaf],
      { seconds: 60 }
    ).then((x) => ({ ok: x.code === 0, out: `${x.stdout}${x.stderr}` }))
    expect(fetched.ok).toBe(false)
    expect(fetched.out).toContain('certificate revoked')

    // Every status says so.
    expect((await get(`/certificate/${id}`)).body.certificate).toMatchObject({
      revoked: true,
      revocation_reason: 'keyCompromise'
    })
    expect((await get(`/ssl/${id}`)).body).toMatchObject({
      certificate_revoked: true,
      status: 'completed',
      next_reissue_at: null
    })
    expect((await get(`/certificate/${id}/download`)).body.certificate).toMatchObject({ revoked: true })
    const events = await get(`/events?order_id=${id}&type=certificate.revoked`)
    expect(JSON.stringify(events.body)).toContain('keyCompromise')

    // Once is enough; the reasons are the BR subset; another reseller's order is not found.
    const twice = await post('/ssl/revoke', { order_id: id, reason: 'superseded' })
    expect(twice.status).toBe(409)
    expect(twice.body.error).toMatch(/was revoked on 2026-11-21 10:00:00 \(keyCompromise\)/)
    for (const reason of ['certificateHold', 'removeFromCRL', 'cACompromise', "keyCompromise'; --", '']) {
      expect((await post('/ssl/revoke', { order_id: id, reason })).status, reason).toBe(400)
    }
    expect((await post('/ssl/revoke', { order_id: id, reason: 'superseded', serial_number: 'ABCDEF' })).status).toBe(
      404
    )
    const stranger = await s.reseller({ credit: 10 })
    expect((await post('/ssl/revoke', { order_id: id, reason: 'superseded' }, stranger.key)).status).toBe(404)

    // A reissue replaces it; the new certificate is not revoked, the old one stays listed.
    const re = await post('/ssl/reissue', { order_id: id, csr: opensslCsr(['revoke.example.test'], 'ec:P-256') })
    expect(re.status, JSON.stringify(re.body)).toBe(200)
    expect(re.body).toMatchObject({ status: 'completed', certificate_revoked: false })
    const text = openssl([
      'crl',
      '-inform',
      'DER',
      '-noout',
      '-text',
      '-in',
      (writeFileSync(f.crl, (await fetchCrl()).der), f.crl)
    ])
    expect(text.out).toContain(`Serial Number: ${dl.serial_number as string}`)
  })

  it('puts the CRL address the admin sets into new certificates, and refuses one a certificate cannot carry', async () => {
    for (const [value, reason] of [
      ['https://crl.example.net/local-ca.crl', /must start with http:\/\//],
      ['ldap://crl.example.net/cn=CRL', /must start with http:\/\//],
      ['http://crl.example.net/ local.crl', /printable ASCII/],
      ['http://user:pw@crl.example.net/local-ca.crl', /user or password/],
      ['http://crl.ex\u00e4mple.net/local-ca.crl', /printable ASCII/],
      [`http://crl.example.net/${'a'.repeat(1100)}`, /at most 1024/],
      ['not a url', /must be an http:\/\/ address/]
    ] as const) {
      await expect(s.service.settings.update({ 'local_ca.crl_url': value }), value.slice(0, 60)).rejects.toThrow(reason)
    }
    await s.service.settings.update({ 'local_ca.crl_url': 'http://crl.example.net/certdesk/local-ca.crl' })
    try {
      const id = await issued('published-crl.example.test')
      const dl = (await get(`/certificate/${id}/download`)).body.certificate as Body
      expect(opensslText(dl.certificate_pem as string)).toMatch(
        /X509v3 CRL Distribution Points:\s+Full Name:\s+URI:http:\/\/crl\.example\.net\/certdesk\/local-ca\.crl/
      )
    } finally {
      await s.service.settings.update({ 'local_ca.crl_url': '' })
    }
  })

  it('names the CRL by the public base URL when one is set, so relying parties off this machine reach it', async () => {
    await s.service.settings.update({ 'public.base_url': 'https://certs.reseller.example' })
    try {
      const id = await issued('public-crl.example.test')
      const dl = (await get(`/certificate/${id}/download`)).body.certificate as Body
      expect(opensslText(dl.certificate_pem as string)).toMatch(
        /X509v3 CRL Distribution Points:\s+Full Name:\s+URI:https:\/\/certs\.reseller\.example\/ca\/local-ca\.crl/
      )
    } finally {
      await s.service.settings.update({ 'public.base_url': '' })
    }
  })

  it('signs a new CRL on the daily scheduler pass, and stops every deploy of a revoked certificate', async () => {
    const id = await issued('deploy-revoked.example.test')
    const first = await fetchCrl()
    const number = (der: Buffer): number => {
      writeFileSync(join(work, 'n.der'), der)
      return Number(
        /X509v3 CRL Number:\s+(\d+)/.exec(
          openssl(['crl', '-inform', 'DER', '-in', join(work, 'n.der'), '-noout', '-text']).out
        )?.[1]
      )
    }
    const n1 = number(first.der)
    // Asked again the same hour: the same list.
    expect(number((await fetchCrl()).der)).toBe(n1)
    clock.set('2026-11-22T10:30:00Z')
    await s.service.scheduler.run()
    const next = await fetchCrl()
    expect(number(next.der)).toBe(n1 + 1)
    writeFileSync(join(work, 'next.der'), next.der)
    const text = openssl(['crl', '-inform', 'DER', '-in', join(work, 'next.der'), '-noout', '-text']).out
    expect(text).toContain('Last Update: Nov 22 10:30:00 2026 GMT')
    // BR §4.9.7: nextUpdate no more than ten days after thisUpdate (seven here).
    expect(text).toContain('Next Update: Nov 29 10:30:00 2026 GMT')

    // A folder target; a reissue's deploys wait out the quiet period, and the certificate is
    // revoked meanwhile: nothing is written, and "deploy now" refuses it.
    const dir = join(work, 'site')
    await s.service.deploys.addTarget(id, { kind: 'folder', path: dir })
    const re = await post('/ssl/reissue', {
      order_id: id,
      csr: opensslCsr(['deploy-revoked.example.test'], 'ec:P-256')
    })
    expect(re.body.status).toBe('completed')
    const rev = await post('/ssl/revoke', { order_id: id, reason: 'superseded' })
    expect(rev.status, JSON.stringify(rev.body)).toBe(200)
    await s.service.deploys.idle()
    expect(existsSync(join(dir, 'cert.pem'))).toBe(false)
    const runs = (await s.service.ctx.store.all(
      'SELECT status, last_error FROM deploy_runs WHERE order_id = ?',
      id
    )) as {
      status: string
      last_error: string
    }[]
    expect(runs.length).toBeGreaterThan(0)
    for (const run of runs) {
      expect(run.status).toBe('superseded')
      expect(run.last_error).toMatch(
        /^not deployed: certificate [0-9A-F]+ was revoked on 2026-11-22 10:30:00 \(superseded\)$/
      )
    }
    await expect(s.service.deploys.runOrder(id)).rejects.toThrow(
      /its certificate [0-9A-F]+ was revoked on .* \(superseded\); reissue it first/
    )
    expect(existsSync(join(dir, 'cert.pem'))).toBe(false)
  })
})
