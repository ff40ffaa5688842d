/**
 * certbot and lego (Debian's) issue through HAProxy in front of three `certdesk serve` nodes on
 * one PostgreSQL, by the team's one public base URL: HAProxy ends TLS for the public name, opens
 * its own to a node's public listener and sends each request to the next node, so a client's
 * requests go from node to node: each one brings the nonce of the answer before it (RFC 8555
 * §6.5), which another node handed out; the challenge a client answers on one node is checked
 * there and read as valid through the others. The subscription's EAB values and the directory
 * come from the reseller API through the balancer too. An account key rolled over (§7.3.5)
 * through one node is refused by all, though each node had kept it imported.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Agent } from 'node:https'
import * as acme from 'acme-client'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ACME_SETTINGS } from '../../src-main/acme/server'
import { freePort, startChallTestSrv, type ChallTestSrv } from '../support/acme'
import { certbot, lego as runLego, opensslVerify, type AcmeClientRun } from '../support/acme-clients'
import { startTeam, type Team } from '../support/team'

type Acme = { account: { eab_kid: string; eab_hmac_key: string; server_url: string; accounts: { url: string }[] } }

let team: Team
let dns: ChallTestSrv
let work: string
let rootPath: string
let httpPort: number
let key: string

beforeAll(async () => {
  team = await startTeam(3)
  dns = await startChallTestSrv()
  httpPort = await freePort()
  // Settings are in the book: every node checks challenges with them.
  await team.admin.settings.set(ACME_SETTINGS.resolver, dns.dns)
  await team.admin.settings.set(ACME_SETTINGS.http01Port, String(httpPort))
  await team.admin.settings.set(ACME_SETTINGS.allowPrivateAddresses, 'true')
  work = mkdtempSync(join(tmpdir(), 'certdesk-team-acme-'))
  rootPath = join(work, 'root.pem')
  const root = await fetch(`${team.api}/acme/root-ca.pem`)
  expect(root.status).toBe(200)
  writeFileSync(rootPath, await root.text())
  key = (await team.reseller('ACME Reseller', 500)).key
})

afterAll(async () => {
  await dns?.stop()
  await team?.stop()
  if (work) rmSync(work, { recursive: true, force: true })
})

async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${team.api}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined
  })
  return { status: res.status, body: (await res.json()) as T }
}

async function subscribe(domain: string): Promise<Acme> {
  const created = await api<{ order_id: number }>('POST', '/orders', { product_id: 12, domain })
  expect(created.status).toBe(200)
  const got = await api<{ acme: Acme }>('GET', `/orders/${created.body.order_id}/acme`)
  expect(got.status).toBe(200)
  return got.body.acme
}

/** What a client of the team runs with, for `names` of subscription `a`. */
const client = (a: Acme, names: string[]): AcmeClientRun => ({
  server: a.account.server_url,
  eabKid: a.account.eab_kid,
  eabHmacKey: a.account.eab_hmac_key,
  names,
  email: 'ops@team.example',
  httpPort,
  rootPath,
  // The public name resolves to the balancer for the clients only.
  via: team.via
})

/** Requests each node answered on the ACME frontend, from HAProxy's statistics. */
const acmeServed = (): Promise<Record<string, number>> => team.balancer.served('acme')

describe('ACME clients through the balancer', () => {
  it('certbot obtains a certificate with requests spread over every node, and the chain verifies', async () => {
    const a = await subscribe('shop.team.example')
    // Every node was started with the one public base URL: the subscription names the balancer.
    expect(a.account.server_url).toBe(`${team.acmeBase}/acme/directory`)
    const before = await acmeServed()
    const dir = join(work, 'certbot')
    const r = await certbot(dir, client(a, ['shop.team.example', 'www.shop.team.example']), 150)
    expect(r.code, r.stdout + r.stderr).toBe(0)
    const chain = readFileSync(join(dir, 'config', 'live', 'shop.team.example', 'fullchain.pem'), 'utf8')
    expect((await opensslVerify(chain, dir, rootPath)).out).toContain(': OK')
    // Each of certbot's requests after the first carried a nonce another node had handed out;
    // none was refused for it.
    const after = await acmeServed()
    for (const n of team.nodes) expect(after[n.name] - (before[n.name] ?? 0), n.name).toBeGreaterThan(0)
    expect(readFileSync(join(dir, 'logs', 'letsencrypt.log'), 'utf8')).not.toContain('badNonce')
  })

  it('lego obtains a certificate and revokes it', async () => {
    const a = await subscribe('lego.team.example')
    const dir = join(work, 'lego')
    const lego = (command: string[]) => runLego(dir, client(a, ['lego.team.example']), command, 150)
    const before = await acmeServed()
    const r = await lego(['run'])
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(r.stdout + r.stderr).not.toContain('badNonce')
    const chain = readFileSync(join(dir, 'certificates', 'lego.team.example.crt'), 'utf8')
    const verified = await opensslVerify(chain, dir, rootPath)
    expect(verified.out).toContain(': OK')
    const after = await acmeServed()
    for (const n of team.nodes) expect(after[n.name] - (before[n.name] ?? 0), n.name).toBeGreaterThan(0)

    const revoked = await lego(['revoke', '--reason', '4'])
    expect(revoked.code, revoked.stdout + revoked.stderr).toBe(0)
    const serial = verified.leaf.serialNumber.toLowerCase()
    const rows = await team.admin.ctx.store.all<{ revoked_at: string | null; revocation_reason: number }>(
      'SELECT revoked_at, revocation_reason FROM acme_certificates WHERE serial_hex = ?',
      serial
    )
    expect(rows).toHaveLength(1)
    expect(rows[0].revoked_at).not.toBeNull()
    expect(rows[0].revocation_reason).toBe(4)
  })

  it('refuses an account key rolled over through one node on every node, though each had kept it', async () => {
    const a = await subscribe('rollover.team.example')
    acme.axios.defaults.httpsAgent = new Agent({ ca: readFileSync(rootPath, 'utf8'), lookup: team.lookup })
    const oldKey = await acme.crypto.createPrivateEcdsaKey()
    const c = new acme.Client({
      directoryUrl: a.account.server_url,
      accountKey: oldKey,
      externalAccountBinding: { kid: a.account.eab_kid, hmacKey: a.account.eab_hmac_key },
      backoffMin: 50
    })
    await c.createAccount({ termsOfServiceAgreed: true })
    const url = c.getAccountUrl()
    // Requests in turn over the three nodes: each imports and keeps the old key.
    const before = await acmeServed()
    for (let i = 0; i < 6; i++) expect(await c.updateAccount({})).toMatchObject({ status: 'valid' })
    const after = await acmeServed()
    for (const n of team.nodes) expect(after[n.name] - (before[n.name] ?? 0), n.name).toBeGreaterThan(0)
    await c.updateAccountKey(await acme.crypto.createPrivateEcdsaKey())
    // Whichever node each request reaches, the old key no longer signs for the account …
    const withOld = new acme.Client({ directoryUrl: a.account.server_url, accountKey: oldKey, accountUrl: url })
    for (let i = 0; i < 3; i++)
      await expect(withOld.updateAccount({})).rejects.toThrow(/could not verify the JWS signature/)
    // … and the new one does.
    for (let i = 0; i < 3; i++) expect(await c.updateAccount({})).toMatchObject({ status: 'valid' })
  })
})
