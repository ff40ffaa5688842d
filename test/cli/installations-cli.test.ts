/**
 * `certdesk admin import …`, `imports …`, `report expiring` and `installations …` as a script
 * uses them: JSON out, the PFX password read from a file (never the command line), CSV written to
 * a new file only, exit 1 when the core refuses and 2 on a usage error.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openService } from '../../src-main/core/service'
import { certdesk } from '../support/cli'
import { opensslPfx } from '../support/import-files'
import { createTestCa } from '../support/test-ca'

const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-import-cli-'))
const work = mkdtempSync(join(tmpdir(), 'certdesk-import-cli-files-'))
const admin = (...args: string[]) => certdesk(['admin', '--data-dir', dataDir, ...args])
let resellerId: number
let orderId: number

beforeAll(async () => {
  const service = openService({ dataDir })
  const r = service.resellers.create({ name: 'Import Hosting', email: 'ops@import.test', groupId: 1 })
  service.ledger.topUp(r.id, 500_00)
  resellerId = r.id
  orderId = service.orders.create(service.resellers.get(r.id), { productId: 2, domain: 'cli.import.test' }).order.id
  service.close()
  const leaf = await (await createTestCa()).issue('old-shop.import.test', new Date(Date.now() - 86_400_000), 20)
  writeFileSync(join(work, 'pass.txt'), 'se cret$(touch pwned)\n', { mode: 0o600 })
  opensslPfx(leaf, join(work, 'shop.p12'), 'se cret$(touch pwned)')
})
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(work, { recursive: true, force: true })
})

describe('certdesk admin import, imports and report', () => {
  it('imports a PFX with the password from a file, offers and places its replacement, and writes the report as CSV', () => {
    const imported = admin(
      'import',
      'files',
      '--reseller',
      String(resellerId),
      '--file',
      join(work, 'shop.p12'),
      '--password-file',
      join(work, 'pass.txt')
    )
    expect(imported.code, imported.stderr).toBe(0)
    const [c] = imported.json.imported as { id: number; domain: string }[]
    expect(c.domain).toBe('old-shop.import.test')
    expect(imported.json.keysLeftInPlace).toEqual([join(work, 'shop.p12')])
    expect(existsSync(join(process.cwd(), 'pwned'))).toBe(false)

    const quote = admin('imports', 'quote', '--reseller', String(resellerId), '--imported', String(c.id))
    expect(quote.code).toBe(0)
    const total = ((quote.json.replacement as Record<string, unknown>).quote as { total: number }).total
    const renew = admin('imports', 'renew', '--reseller', String(resellerId), '--imported', String(c.id))
    expect(renew.code, renew.stderr).toBe(0)
    expect(renew.json.credit_used).toBe(total)
    const twice = admin('imports', 'renew', '--reseller', String(resellerId), '--imported', String(c.id))
    expect(twice.code).toBe(1)
    expect(twice.json.error).toMatch(/already replaces it/)

    const out = join(work, 'expiring.csv')
    const report = admin('report', 'expiring', '--days', '30', '--reseller', String(resellerId), '--out', out)
    expect(report.code, report.stderr).toBe(0)
    const lines = readFileSync(out, 'utf8').trim().split('\n')
    expect(lines[0]).toBe('kind,reference,domain,valid_till,days_left,renewal_planned_at,reseller,contact')
    expect(lines[1]).toMatch(/^imported,IMP-\d+,old-shop\.import\.test,.*,Import Hosting,ops@import\.test$/)
    // An existing file is never overwritten.
    const again = admin('report', 'expiring', '--days', '30', '--out', out)
    expect(again.code).not.toBe(0)
    expect(readFileSync(out, 'utf8').trim().split('\n').length).toBe(2)
  })

  it('refuses bad values with a clear message and the right exit code', () => {
    expect(admin('import', 'files', '--reseller', String(resellerId)).code).toBe(2)
    expect(admin('report', 'expiring', '--days', '-3').code).toBe(2)
    const bad = admin('import', 'endpoints', '--reseller', String(resellerId), '--endpoint', '10.0.0.0/8:443')
    expect(bad.code).toBe(1)
    expect(bad.json.error).toMatch(/at most 1024/)
    const host = admin('installations', 'endpoint', 'add', '--order', String(orderId), '--host', 'x;reboot')
    expect(host.code).toBe(1)
    expect(host.json.error).toMatch(/is not a domain name/)
    const noCert = admin('installations', 'check', '--order', String(orderId))
    expect(noCert.code).toBe(1)
    expect(noCert.json.error).toMatch(/has no certificate yet/)
    expect(admin('installations', 'show', '--order', '999999').json.error).toMatch(/order 999999 not found/)
  })
})
