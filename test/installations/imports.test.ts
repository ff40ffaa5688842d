/**
 * Certificates bought elsewhere come in from a folder (PEM, DER, PFX with a password, junk
 * beside them), from live endpoints, once each; keys found beside them stay where they are unless
 * imported on purpose; each is offered as a replacement order at this reseller's price, and the
 * expiry report lists them with who to contact. Scans of many endpoints stay within their bound.
 */
import { X509Certificate } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer as netServer, type AddressInfo, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer as tlsServer } from 'node:tls'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expandSpec } from '../../src-main/core/imports'
import { expiringCsv } from '../../src-main/core/certificates/reports'
import { opensslPfx } from '../support/import-files'
import { startServer, type TestServer } from '../support/server'
import { createTestCa, type TestLeaf } from '../support/test-ca'

let s: TestServer
let dir: string
let outside: string
let leaves: Record<'pem' | 'der' | 'pfx' | 'soon', TestLeaf>
let chainFirst: string

beforeAll(async () => {
  s = await startServer()
  dir = mkdtempSync(join(tmpdir(), 'certdesk-import-'))
  outside = mkdtempSync(join(tmpdir(), 'certdesk-outside-'))
  const ca = await createTestCa()
  const now = new Date()
  leaves = {
    pem: await ca.issue('pem.bought.test', new Date(now.getTime() - 86_400_000), 200),
    der: await ca.issue('der.bought.test', new Date(now.getTime() - 86_400_000), 200),
    pfx: await ca.issue('pfx.bought.test', new Date(now.getTime() - 86_400_000), 200),
    soon: await ca.issue('soon.bought.test', new Date(now.getTime() - 80 * 86_400_000), 90)
  }
  chainFirst = leaves.pem.chainPem
  // A PEM bundle with its key beside it, in a subfolder, chain listed before the leaf.
  mkdirSync(join(dir, 'site-a', 'ssl'), { recursive: true })
  writeFileSync(join(dir, 'site-a', 'ssl', 'bundle.pem'), chainFirst + leaves.pem.certificatePem)
  writeFileSync(join(dir, 'site-a', 'ssl', 'privkey.key'), leaves.pem.privateKeyPem, { mode: 0o600 })
  writeFileSync(join(dir, 'soon.crt'), leaves.soon.certificatePem + leaves.soon.chainPem + leaves.soon.privateKeyPem)
  // DER, as Windows exports it.
  writeFileSync(join(dir, 'der.cer'), new X509Certificate(leaves.der.certificatePem).raw)
  // PFX with a password (OpenSSL 3: AES-256 and PBKDF2).
  opensslPfx(leaves.pfx, join(dir, 'shop.pfx'), 'pa$$ "word"; rm -rf /')
  // Junk: random bytes named .pem, text named .crt, a truncated certificate, a big file.
  writeFileSync(join(dir, 'random.pem'), Buffer.from(Array.from({ length: 900 }, (_, i) => (i * 37) % 256)))
  writeFileSync(join(dir, 'notes.crt'), 'renew me next year\n')
  writeFileSync(join(dir, 'broken.pem'), leaves.pem.certificatePem.slice(0, 200) + '\n-----END CERTIFICATE-----\n')
  writeFileSync(join(dir, 'huge.der'), Buffer.alloc(2 * 1024 * 1024, 1))
  writeFileSync(join(dir, 'readme.txt'), 'not a certificate file, never opened')
  // A link out of the folder: listed, never followed.
  writeFileSync(join(outside, 'secret.pem'), leaves.der.certificatePem)
  symlinkSync(outside, join(dir, 'link-out'))
})
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
  rmSync(outside, { recursive: true, force: true })
  await s?.close()
})

describe('importing certificates bought elsewhere', () => {
  it('reads PEM, DER and PFX from a folder once each, leaves keys in place, and says what it skipped', async () => {
    const r = await s.reseller({ credit: 500, discount: 10 })
    const imports = s.service.imports
    const password = 'pa$$ "word"; rm -rf /'
    const first = await imports.importFolder(r.id, dir, { password })
    expect(first.imported.map((c) => c.domain).sort()).toEqual([
      'der.bought.test',
      'pem.bought.test',
      'pfx.bought.test',
      'soon.bought.test'
    ])
    const pem = first.imported.find((c) => c.domain === 'pem.bought.test')
    // The leaf is found whatever the order in the file, and its chain kept for downloads.
    expect(pem?.serial).toBe(new X509Certificate(leaves.pem.certificatePem).serialNumber.toUpperCase())
    expect((await imports.pem(r.id, pem?.id as number)).chainPem).toContain('BEGIN CERTIFICATE')
    expect(first.imported.every((c) => !c.keyKept)).toBe(true)
    expect(first.keysLeftInPlace.sort()).toEqual(
      [join(dir, 'shop.pfx'), join(dir, 'site-a', 'ssl', 'privkey.key'), join(dir, 'soon.crt')].sort()
    )
    const skipped = Object.fromEntries(first.skipped.map((x) => [x.source.replace(`file:${dir}/`, ''), x.reason]))
    expect(Object.keys(skipped).sort()).toEqual(['broken.pem', 'huge.der', 'link-out', 'notes.crt', 'random.pem'])
    expect(skipped['huge.der']).toMatch(/larger than/)
    // The link is listed with why it was not followed, never read.
    expect(skipped['link-out']).toMatch(/symbolic link .*not followed/)
    expect(first.imported.some((c) => c.source.includes('link-out'))).toBe(false)
    // Nothing of a key reached the store.
    const dump = JSON.stringify(await s.service.ctx.store.all('SELECT * FROM imported_certificates'))
    expect(dump).not.toMatch(/PRIVATE KEY/)
    expect(await s.service.ctx.store.get('SELECT COUNT(*) AS n FROM imported_keys')).toEqual({ n: 0 })

    // Again: every certificate is already known, none is imported twice.
    const again = await imports.importFolder(r.id, dir, { password })
    expect(again.imported).toEqual([])
    expect(again.duplicates.length).toBe(4)
    // Another reseller imports the same files as their own; neither sees the other's.
    const other = await s.reseller({ credit: 1 })
    expect((await imports.importFiles(other.id, [join(dir, 'der.cer')])).imported.length).toBe(1)
    expect((await imports.list(r.id)).length).toBe(4)
    await expect(imports.get(other.id, pem?.id as number)).rejects.toThrow(/not found/)

    // A wrong PFX password is a clear skip, not a crash.
    const wrong = await imports.importFiles(r.id, [join(dir, 'shop.pfx')], { password: 'nope' })
    expect(wrong.skipped[0].reason).toMatch(/wrong password/)
  })

  it('keeps a key only when asked, only when it belongs to the certificate, wrapped', async () => {
    const r = await s.reseller({ credit: 1 })
    const out = await s.service.imports.importFiles(r.id, [join(dir, 'soon.crt')], { withKeys: true })
    expect(out.imported[0].keyKept).toBe(true)
    const row = (await s.service.ctx.store.get(
      'SELECT wrapped_key FROM imported_keys WHERE certificate_id = ?',
      out.imported[0].id
    )) as { wrapped_key: Buffer }
    expect(row.wrapped_key.toString('latin1')).not.toMatch(/PRIVATE KEY/)
    expect((await s.service.keyVault.unwrapImported(out.imported[0].id, row.wrapped_key)).trim()).toBe(
      leaves.soon.privateKeyPem.trim()
    )
    // The same blob does not open as another certificate's key.
    await expect(s.service.keyVault.unwrapImported(out.imported[0].id + 1, row.wrapped_key)).rejects.toThrow()
  })

  it('offers a replacement at the reseller price and places it in one step', async () => {
    const r = await s.reseller({ credit: 500, discount: 10 })
    const imports = s.service.imports
    const [c] = (await imports.importFiles(r.id, [join(dir, 'der.cer')])).imported
    const offer = await imports.replacementQuote(r.id, c.id)
    const reseller = await s.service.resellers.get(r.id)
    // The cheapest DV single-name product for this reseller's group, with the discount applied.
    const dvSingle = (await s.service.catalogue.list(reseller.groupId)).filter(
      (p) => p.fulfillment === 'certificate' && p.validationType === 'dv' && p.domainType === 'single'
    )
    const totals: number[] = []
    for (const p of dvSingle)
      totals.push((await s.service.orders.quoteView(reseller, { productId: p.id, domain: c.domain, period: 12 })).total)
    expect(offer.quote.total).toBe(Math.min(...totals))
    expect(offer.quote.discountRate).toBe(10)
    const balance = (await s.service.resellers.get(r.id)).creditBalance
    const placed = await imports.renew(r.id, c.id)
    expect(placed.order).toMatchObject({ domain: 'der.bought.test', productId: offer.productId })
    expect((await s.service.resellers.get(r.id)).creditBalance).toBe(balance - offer.quote.total)
    expect((await imports.get(r.id, c.id)).replacementOrderId).toBe(placed.order.id)
    // Once only: a second renewal would charge twice.
    await expect(imports.renew(r.id, c.id)).rejects.toThrow(/already replaces it/)
  })

  it('reports what expires in a window, issued or imported, with who to contact, as CSV safe for spreadsheets', async () => {
    const r = await s.reseller({ credit: 1, name: '=HYPERLINK("http://evil.test")' })
    await s.service.imports.importFiles(r.id, [join(dir, 'soon.crt'), join(dir, 'der.cer')])
    const rows = await s.service.reports.expiring({ days: 30, resellerId: r.id })
    expect(rows.map((x) => x.domain)).toEqual(['soon.bought.test'])
    expect(rows[0]).toMatchObject({ kind: 'imported', contact: expect.stringMatching(/@example\.test$/) })
    expect(rows[0].daysLeft).toBeGreaterThanOrEqual(8)
    expect(rows[0].daysLeft).toBeLessThanOrEqual(10)
    expect((await s.service.reports.expiring({ days: 398, resellerId: r.id })).length).toBe(2)
    const csv = expiringCsv(rows)
    expect(csv.split('\n')[0]).toBe('kind,reference,domain,valid_till,days_left,renewal_planned_at,reseller,contact')
    expect(csv).toContain(`'=HYPERLINK`)
    await expect(s.service.reports.expiring({ days: 5000 })).rejects.toThrow(/days must be/)
    // Over the API: the caller's own certificates only.
    const res = await s.request<Record<string, unknown>>('GET', '/reports/expiring?days=30', { key: r.key })
    expect(res.status).toBe(200)
    expect((res.body.certificates as { domain: string }[]).map((x) => x.domain)).toEqual(['soon.bought.test'])
    expect((await s.request('GET', '/reports/expiring?days=-1', { key: r.key })).status).toBe(400)
  })
})

describe('importing from live endpoints', () => {
  it('reads what a server serves and refuses ranges that are not a bounded local scan', async () => {
    const r = await s.reseller({ credit: 1 })
    const served = leaves.pem
    const server = tlsServer({ key: served.privateKeyPem, cert: served.certificatePem + served.chainPem })
    const port = await new Promise<number>((res) =>
      server.listen(0, '127.0.0.1', () => res((server.address() as AddressInfo).port))
    )
    try {
      const out = await s.service.imports.importEndpoints(r.id, [`127.0.0.1:${port}`])
      expect(out.imported.map((c) => [c.domain, c.source])).toEqual([['pem.bought.test', `endpoint:127.0.0.1:${port}`]])
      expect((await s.service.imports.pem(r.id, out.imported[0].id)).chainPem).toContain('BEGIN CERTIFICATE')
    } finally {
      await new Promise((res) => server.close(res))
    }
    for (const bad of ['10.0.0.0/8:443', 'host', 'a;b:443', '127.0.0.1:0', '127.0.0.1:99999', '../x:443', '[zz]:443']) {
      expect(() => expandSpec(bad), bad).toThrow(/could not scan/)
    }
    expect(expandSpec('192.168.7.9/30:8443').map((t) => t.host)).toEqual([
      '192.168.7.8',
      '192.168.7.9',
      '192.168.7.10',
      '192.168.7.11'
    ])
  })

  it('scans 256 endpoints with at most its bound in flight and leaves no socket open', async () => {
    const r = await s.reseller({ credit: 1 })
    let open = 0
    let most = 0
    const sockets = new Set<Socket>()
    // Accepts on every loopback address and never answers: each probe waits for its time-out.
    const server = netServer((c) => {
      sockets.add(c)
      open++
      most = Math.max(most, open)
      c.on('error', () => undefined)
      // Reads (and drops) what the client sends, so its closing is seen at once.
      c.resume()
      c.on('close', () => {
        open--
        sockets.delete(c)
      })
    })
    const port = await new Promise<number>((res) =>
      server.listen(0, '0.0.0.0', () => res((server.address() as AddressInfo).port))
    )
    const handles = () => process.getActiveResourcesInfo().filter((x) => x === 'TCPSocketWrap').length
    const baseline = handles()
    try {
      const started = Date.now()
      const out = await s.service.imports.importEndpoints(r.id, [`127.0.9.0/24:${port}`], 250)
      // 256 probes of 250 ms, 32 at a time, take at least 8 rounds; all at once would take one.
      expect(Date.now() - started).toBeGreaterThanOrEqual(7 * 250)
      expect(out.skipped.length).toBe(256)
      expect(out.skipped.every((x) => /no answer within/.test(x.reason))).toBe(true)
      expect(most).toBeGreaterThan(1)
      // The server sees a closed connection a moment after the next one arrives: the bound, plus that lag.
      expect(most).toBeLessThanOrEqual(32 + 2)
      await new Promise((res) => setTimeout(res, 200))
      expect(open).toBe(0)
      expect(handles()).toBeLessThanOrEqual(baseline)
    } finally {
      sockets.forEach((c) => c.destroy())
      await new Promise((res) => server.close(res))
    }
  })
})
