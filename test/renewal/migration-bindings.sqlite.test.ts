/**
 * A store from before labels and ACME accounts were bound to resellers (schema 15), upgraded.
 * Its customers set CNAMEs to the name-only label CertDesk showed then, and its orders were
 * renewed through the one ACME account CertDesk had. A name one reseller alone had ordered keeps
 * both for that reseller: its next renewal runs with nobody, through the CNAME already set. A
 * name two resellers had ordered keeps neither: nothing tells for whom the customer set it, so
 * each reseller gets a label of its own and asks the customer. The external CA is Debian's
 * Pebble; the customer's DNS is pebble-challtestsrv; Pebble follows the CNAME into CertDesk's
 * responder through a stand-in recursor.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as acme from 'acme-client'
import Database from 'better-sqlite3'
import { Agent } from 'node:https'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import catalogue from '../../resources/catalogue.json'
import { ACME_ISSUER_SETTINGS, EAB_SECRET } from '../../src-main/core/acme-client/acme-issuer-accounts'
import { seedCatalogue, type CatalogueFile } from '../../src-main/core/billing/catalogue'
import { migrations } from '../../src-main/core/store/db'
import { legacyDelegationLabel } from '../../src-main/core/dcv/delegated-dns'
import { SqliteStore } from '../../src-main/core/store'
import { opensslCsr } from '../support/csr'
import type { DnsServer } from '../support/dcv-servers'
import { startDelegatedCa, type DelegatedCa } from '../support/delegated-ca'
import { PEBBLE_EAB, type Pebble } from '../support/pebble'
import type { TestServer } from '../support/server'

type Body = Record<string, unknown>
type Renewal = { delegation: { domains: { cname: { value: string }; in_place: boolean; detail: string }[] } }

const ZONE = 'acme.reseller.test'
const SOLO = 'solo.migrate.test'
const SHARED = 'shared.migrate.test'
const DAY = 86_400_000
const ts = (d: Date): string => d.toISOString().slice(0, 19).replace('T', ' ')

let dir: string
let ca: DelegatedCa
let s: TestServer
let customerDns: DnsServer
let pebble: Pebble
const ids = { a: 1, b: 2, soloOrder: 0, sharedA: 0, sharedB: 0 }

/** The store as schema 15 left it: two resellers, their orders from the external CA. */
async function oldStore(now: Date): Promise<void> {
  const db = new Database(join(dir, 'certdesk.sqlite'))
  db.pragma('foreign_keys = ON')
  for (const m of migrations.filter((x) => x.version <= 15)) db.exec(m.sql)
  db.pragma('user_version = 15')
  // The catalogue as the core seeds it, through the SQLite engine over the same connection.
  const store = new SqliteStore(db)
  await seedCatalogue(store, catalogue as CatalogueFile)
  const at = ts(now)
  for (const id of [ids.a, ids.b])
    db.prepare(
      `INSERT INTO resellers (id, name, email, company, group_id, created_at) VALUES (?, ?, ?, 'Co', 1, ?)`
    ).run(id, `Reseller ${id}`, `r${id}@example.test`, at)
  let n = 0
  const order = (resellerId: number, domain: string, renewAt: Date): number => {
    n += 1
    const till = new Date(now.getTime() + 30 * DAY)
    const id = Number(
      db
        .prepare(
          `INSERT INTO orders (order_number, reseller_id, product_id, domain, period_months, base_price_cents, san_total_cents,
             discount_cents, total_cents, status, payment_status, auto_reissue, purchase_end_date, cert_valid_from, cert_valid_till,
             next_reissue_at, created_at, updated_at)
           VALUES (?, ?, 2, ?, 12, 1000, 0, 0, 1000, 'completed', 'paid', 1, ?, ?, ?, ?, ?, ?)`
        )
        .run(
          `ORD-2026-${String(900000 + n)}`,
          resellerId,
          domain,
          ts(new Date(now.getTime() + 365 * DAY)).slice(0, 10),
          at.slice(0, 10),
          ts(till).slice(0, 10),
          // The local 200-day schedule schema 15 wrote for a 30-day certificate.
          ts(new Date(now.getTime() + 186 * DAY)).slice(0, 10),
          at,
          at
        ).lastInsertRowid
    )
    db.prepare(
      `INSERT INTO certificate_requests (order_id, csr_pem, csr_md5, csr_sha256, names, subject, dcv_method, unique_value, submitted_at)
       VALUES (?, ?, 'MD5', 'SHA', ?, ?, 'dns', 'u', ?)`
    ).run(id, opensslCsr([domain], 'ec:P-256'), JSON.stringify([domain]), JSON.stringify({ CN: domain }), at)
    db.prepare(
      `INSERT INTO dcv_checks (order_id, name, method, status, checked_at, validated_at) VALUES (?, ?, 'dns', 'valid', ?, ?)`
    ).run(id, domain, at, at)
    db.prepare(
      `INSERT INTO certificates (order_id, serial, issuer, certificate_pem, chain_pem, names, valid_from, valid_till, reason, created_at)
       VALUES (?, ?, 'acme:https://ca.before.test/dir', 'old', '', ?, ?, ?, 'initial', ?)`
    ).run(id, `0${id}`, JSON.stringify([domain]), at, ts(till), at)
    db.prepare(
      `INSERT INTO ari_windows (order_id, cert_id, directory_url, source, window_start, window_end, renew_at, checked_at)
       VALUES (?, ?, 'https://ca.before.test/dir', 'default', ?, ?, ?, ?)`
    ).run(id, `old-${id}`, ts(renewAt), ts(renewAt), ts(renewAt), at)
    return id
  }
  ids.soloOrder = order(ids.a, SOLO, new Date(now.getTime() - 3600_000))
  ids.sharedA = order(ids.a, SHARED, new Date(now.getTime() + 20 * DAY))
  ids.sharedB = order(ids.b, SHARED, new Date(now.getTime() + 20 * DAY))
  // An admin's change of a rule, which the rules' table rebuild must keep.
  db.prepare(`UPDATE alert_rules SET enabled = 0 WHERE rule = 'expiring'`).run()
  await store.close()
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'certdesk-schema14-'))
  await oldStore(new Date())
  ca = await startDelegatedCa({ zone: ZONE, dataDir: dir, noIssuer: true })
  ;({ s, customerDns, pebble } = ca)
  // What schema 15 held for the external CA: its settings, and the one account it registered.
  const accountKey = (await acme.crypto.createPrivateEcdsaKey('P-256')).toString()
  acme.axios.defaults.httpsAgent = new Agent({ ca: readFileSync(pebble.caBundle, 'utf8') })
  const before = new acme.Client({
    directoryUrl: pebble.directoryUrl,
    accountKey,
    externalAccountBinding: { kid: PEBBLE_EAB.kid, hmacKey: PEBBLE_EAB.hmac }
  })
  await before.createAccount({ termsOfServiceAgreed: true })
  for (const [k, v] of [
    [ACME_ISSUER_SETTINGS.directoryUrl, pebble.directoryUrl],
    [ACME_ISSUER_SETTINGS.eabKid, PEBBLE_EAB.kid],
    [ACME_ISSUER_SETTINGS.caBundle, pebble.caBundle],
    [ACME_ISSUER_SETTINGS.accountUrl, before.getAccountUrl()]
  ])
    await s.service.settings.set(k, v)
  await s.service.ctx.secrets.set(EAB_SECRET, PEBBLE_EAB.hmac)
  await s.service.ctx.secrets.set('issuer.acme/account-key', accountKey)
})

afterAll(async () => {
  await ca?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

const keyOf = async (resellerId: number): Promise<string> => (await s.service.resellers.createApiKey(resellerId)).key
const renewal = async (resellerId: number, orderId: number): Promise<Renewal> =>
  (await s.request<Body>('GET', `/orders/${orderId}/renewal`, { key: await keyOf(resellerId) })).body.renewal as Renewal

describe('a schema-15 store, upgraded', () => {
  it("keeps the name-only label for the one reseller that had ordered the name, and no one else's", async () => {
    const d = s.service.acmeIssuer.delegation
    expect(await d.label(ids.a, SOLO)).toBe(legacyDelegationLabel(SOLO))
    expect(await d.label(ids.b, SOLO)).not.toBe(legacyDelegationLabel(SOLO))
    for (const r of [ids.a, ids.b]) expect(await d.label(r, SHARED)).not.toBe(legacyDelegationLabel(SHARED))
    expect(await d.label(ids.a, SHARED)).not.toBe(await d.label(ids.b, SHARED))
  })

  it('shows next_reissue_at from the certificate, not the local schedule it had', async () => {
    const next = await s.service.ctx.store.all('SELECT id, next_reissue_at FROM orders ORDER BY id')
    const renewAt = await s.service.ctx.store.all(
      'SELECT order_id AS id, substr(renew_at, 1, 10) AS next_reissue_at FROM ari_windows ORDER BY order_id'
    )
    expect(next).toEqual(renewAt)
  })

  it("keeps the admin's alert rules, with the new one beside them", async () => {
    expect((await s.service.alerts.rules()).map((r) => [r.rule, r.enabled])).toEqual([
      ['expiring', false],
      ['renewal_failed', true],
      ['validation_waiting', true],
      ['deploy_failed', true],
      ['installation_problem', true],
      ['renewal_needs_customer', true]
    ])
  })

  it("renews the lone reseller's order with nobody, through the CNAME its customer set then and the account of then", async () => {
    const legacyTarget = `${legacyDelegationLabel(SOLO)}.${ZONE}`
    await customerDns.setCname(`_acme-challenge.${SOLO}`, legacyTarget)
    await customerDns.setCname(`_acme-challenge.${SHARED}`, `${legacyDelegationLabel(SHARED)}.${ZONE}`)
    const view = await renewal(ids.a, ids.soloOrder)
    expect(view.delegation.domains[0]).toMatchObject({ cname: { value: legacyTarget }, in_place: true })
    const pass = await s.service.scheduler.run()
    expect(pass.errors, JSON.stringify(pass)).toEqual([])
    expect(pass.issued.map((i) => i.order_id)).toEqual([ids.soloOrder])
    // Through the shared account of before: no reseller account was registered for it.
    expect(await s.service.acmeIssuer.accounts.list()).toEqual([])
    const cert = await s.service.certificates.latestCertificate(ids.soloOrder)
    expect(cert?.issuer).toBe(`acme:${pebble.directoryUrl}`)
  })

  it('asks the customer again for a name two resellers had ordered', async () => {
    for (const [r, o] of [
      [ids.a, ids.sharedA],
      [ids.b, ids.sharedB]
    ]) {
      const view = await renewal(r, o)
      expect(view.delegation.domains[0].in_place).toBe(false)
      expect(view.delegation.domains[0].detail).toContain(`the customer must set _acme-challenge.${SHARED} CNAME`)
      expect(view.delegation.domains[0].cname.value).not.toContain(legacyDelegationLabel(SHARED))
    }
  })
})
