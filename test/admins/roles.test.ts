/**
 * Roles on a team server, through its RPC as a browser reaches it: every method of the bridge's
 * table, tried as an owner, an operator and a viewer, is refused with 403 exactly when the table
 * says the role is too low, and each call leaves exactly the audit entries the table says (one
 * for a refused call or an audited action, none for a plain read). The list of methods comes
 * from the table, so a method added later is tried too. Then a few real actions, and the audit
 * log through every way in: no method, route or command changes an entry.
 */
import { spawnSync } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { accessOf, APP_API, type AppMethod } from '../../src-shared/app-api'
import { ADMIN_ROLES, roleAtLeast } from '../../src-shared/constants'
import type { AdminRole, AuditEntry } from '../../src-shared/admin-records'
import { CLI } from '../support/cli'
import { startTeamServer, type TeamServer } from '../support/team-server'

let team: TeamServer
const cookies = {} as Record<AdminRole, string>
const NAMES: Record<AdminRole, string> = { owner: 'olivia', operator: 'oscar', viewer: 'vera' }
const METHODS = Object.keys(APP_API) as AppMethod[]

beforeAll(async () => {
  team = await startTeamServer('certdesk-roles-')
  for (const role of ADMIN_ROLES) {
    await team.addAdmin(NAMES[role], role)
    const s = await team.signIn(NAMES[role])
    expect(s.status).toBe(200)
    cookies[role] = s.cookie!
  }
})

afterAll(async () => {
  await team?.close()
})

const entries = (): AuditEntry[] => team.service.admins.audit.list({}, { limit: 100_000, offset: 0 }).items
const count = (): number => team.service.admins.audit.list({}, { limit: 1, offset: 0 }).total

describe('the table decides', () => {
  it('covers the admin methods of the UI: owners manage admins and read the audit log, operators and viewers do not', () => {
    expect(accessOf('auditLog').role).toBe('owner')
    expect(accessOf('addAdmin').role).toBe('owner')
    expect(accessOf('topUp').role).toBe('owner')
    expect(accessOf('createApiKey').role).toBe('owner')
    expect(accessOf('exportPfx').role).toBe('owner')
    expect(accessOf('startBackup').role).toBe('owner')
    expect(accessOf('createOrder').role).toBe('operator')
    expect(accessOf('deployNow').role).toBe('operator')
    expect(accessOf('listOrders').role).toBe('viewer')
  })

  it('session() answers each role the methods the table gives it', async () => {
    for (const role of ADMIN_ROLES) {
      const s = await team.rpc(cookies[role], 'session', [])
      expect(s.status).toBe(200)
      const view = s.body.result as { actor: string; role: string; allowed: string[]; book: unknown; account: boolean }
      expect(view).toMatchObject({ actor: NAMES[role], role, account: true, book: { kind: 'team' } })
      expect(view.allowed.slice().sort()).toEqual(METHODS.filter((m) => roleAtLeast(role, accessOf(m).role)).sort())
    }
  })
})

describe('every method as every role', () => {
  for (const role of ADMIN_ROLES) {
    it(`as ${role}: 403 exactly where the table says, one audit entry per refused or audited call, none for a read`, async () => {
      const outcomes: string[] = []
      for (const method of METHODS) {
        // Arguments are left out on purpose: the role is checked before them, so an allowed
        // method answers 400 (or runs, when it takes none) and a refused one 403.
        const before = count()
        const res = await team.rpc(cookies[role], method, [])
        const access = accessOf(method)
        const allowed = roleAtLeast(role, access.role)
        outcomes.push(`${method}:${res.status}`)
        if (!allowed) {
          expect(res.status, method).toBe(403)
          expect(res.body.error, method).toMatch(new RegExp(`needs the ${access.role} role`))
        } else expect(res.status, method).not.toBe(403)
        const added = count() - before
        expect(added, `${method} audit entries`).toBe(!allowed || access.audited ? 1 : 0)
        if (added === 1) {
          expect(entries()[0], method).toMatchObject({
            actor: NAMES[role],
            role,
            action: method,
            source: '127.0.0.1',
            outcome: allowed ? (res.status < 400 ? 'ok' : expect.any(String)) : 'denied',
            status: res.status
          })
        }
      }
      expect(outcomes.length).toBe(METHODS.length)
    })
  }
})

describe('real actions', () => {
  const order = () => ({ productId: 2, domain: `roles-${Math.random().toString(36).slice(2, 8)}.example.test` })

  it('an operator places an order from credit; a viewer cannot, and nothing is created', async () => {
    const placed = await team.rpc(cookies.operator, 'createOrder', [team.resellerId, order(), 'credit'])
    expect(placed.status).toBe(200)
    const orderId = (placed.body.result as { order: { id: number } }).order.id
    expect(entries()[0]).toMatchObject({
      actor: 'oscar',
      action: 'createOrder',
      targets: { 'reseller id': team.resellerId, 'input.productId': 2 },
      outcome: 'ok'
    })
    const total = team.service.orders.list(team.resellerId, {}, { limit: 1, offset: 0 }).total
    const refused = await team.rpc(cookies.viewer, 'createOrder', [team.resellerId, order(), 'credit'])
    expect(refused.status).toBe(403)
    expect(team.service.orders.list(team.resellerId, {}, { limit: 1, offset: 0 }).total).toBe(total)
    expect(orderId).toBeGreaterThan(0)
  })

  it('an operator cannot top up credit or create an API key; the balance and the keys stay as they were', async () => {
    const balance = team.service.resellers.get(team.resellerId).creditBalance
    const keys = team.service.resellers.apiKeys(team.resellerId).length
    expect((await team.rpc(cookies.operator, 'topUp', [team.resellerId, 100_00])).status).toBe(403)
    expect((await team.rpc(cookies.operator, 'createApiKey', [team.resellerId, 'x'])).status).toBe(403)
    expect(team.service.resellers.get(team.resellerId).creditBalance).toBe(balance)
    expect(team.service.resellers.apiKeys(team.resellerId)).toHaveLength(keys)
    expect((await team.rpc(cookies.owner, 'topUp', [team.resellerId, 100_00])).status).toBe(200)
    expect(team.service.resellers.get(team.resellerId).creditBalance).toBe(balance + 100_00)
  })

  it('an owner changes a role, and the admin’s session ends at once', async () => {
    await team.addAdmin('walter', 'operator')
    const walter = (await team.signIn('walter')).cookie!
    expect((await team.rpc(walter, 'listOrders', [team.resellerId, {}, {}])).status).toBe(200)
    expect((await team.rpc(cookies.owner, 'setAdminRole', ['walter', 'viewer'])).status).toBe(200)
    const after = await team.rpc(walter, 'listOrders', [team.resellerId, {}, {}])
    expect(after.status).toBe(401)
    expect(after.body).toMatchObject({ success: false, signIn: 'password' })
    expect(entries()[0]).toMatchObject({ actor: 'olivia', action: 'setAdminRole', targets: { name: 'walter' } })
  })

  it('keeps no password, code or other text of the arguments in the log', async () => {
    const secret = 'a-brand-new-pass-phrase-77'
    await team.rpc(cookies.operator, 'changePassword', [{ current: 'tangerine-kite-harbour-42', next: secret }])
    const text = JSON.stringify(entries())
    expect(text).not.toContain(secret)
    expect(text).not.toContain('tangerine-kite-harbour-42')
  })
})

describe('the sign-in route', () => {
  it('answers a wrong password and an unknown name alike, then 429 with Retry-After, even for the right password', async () => {
    await team.addAdmin('rita', 'viewer')
    const unknown = await team.signIn('nobody-here', 'some-guess-or-other')
    const wrong = await team.signIn('rita', 'some-guess-or-other')
    expect([unknown.status, wrong.status]).toEqual([401, 401])
    expect(unknown.body).toEqual(wrong.body)
    expect(wrong.cookie).toBeNull()
    for (let i = 0; i < 4; i++) expect((await team.signIn('rita', `guess number ${i}!`)).status).toBe(401)
    const res = await fetch(`${team.url}/ui/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: team.url },
      body: JSON.stringify({ name: 'rita', password: 'tangerine-kite-harbour-42' })
    })
    expect(res.status).toBe(429)
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(14 * 60)
    expect(res.headers.getSetCookie()).toEqual([])
    // A body the route does not take is refused before anything is counted or hashed.
    const bad = await fetch(`${team.url}/ui/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: team.url },
      body: JSON.stringify({ name: "x' OR '1'='1", password: 'p'.repeat(2000) })
    })
    expect(bad.status).toBe(400)
  })
})

describe('the audit log cannot be changed through the app, the API or the CLI', () => {
  it('no bridge method, RPC path or API path edits it, and every earlier entry is as it was', async () => {
    const before = entries()
    for (const name of ['deleteAudit', 'updateAudit', 'clearAuditLog', 'auditLog/../deleteAudit'])
      expect((await team.rpc(cookies.owner, name, [before[0].id])).status).toBe(404)
    // The owner's read takes filters only; hostile ones are refused, not run.
    const hostile = await team.rpc(cookies.owner, 'auditLog', [{ actor: "x' OR 1=1; DELETE FROM audit_log;--" }, {}])
    expect(hostile.status).toBe(200)
    expect((hostile.body.result as { total: number }).total).toBe(0)
    expect((await team.rpc(cookies.owner, 'auditLog', [{ since: 'yesterday' }, {}])).status).toBe(400)
    for (const path of ['/audit', '/audit-log', '/admin/audit']) {
      for (const method of ['DELETE', 'PUT', 'PATCH', 'POST']) {
        const res = await fetch(`${team.url}${path}`, { method, headers: { origin: team.url } })
        expect(res.status, `${method} ${path}`).toBeGreaterThanOrEqual(400)
      }
    }
    const after = entries()
    // Only new entries were added (the refused calls above); every earlier one is unchanged.
    expect(after.slice(after.length - before.length)).toEqual(before)
  })

  it('the CLI has no command that changes it', () => {
    const before = entries()
    for (const verb of ['delete', 'clear', 'edit', 'prune']) {
      const r = spawnSync(
        process.execPath,
        [CLI, 'admin', '--data-dir', team.dataDir, 'audit', verb, '--actor', 'olivia'],
        {
          encoding: 'utf8'
        }
      )
      expect(r.status, verb).toBe(2)
      expect(r.stderr).toMatch(/unknown admin command: audit/)
    }
    const after = entries()
    expect(after.slice(after.length - before.length)).toEqual(before)
    // Each refused command is itself an entry of the CLI's.
    expect(after.slice(0, 4).map((e) => [e.actor.startsWith('cli:'), e.action, e.outcome])).toEqual(
      ['prune', 'edit', 'clear', 'delete'].map((v) => [true, `cli audit ${v}`, 'refused'])
    )
  })
})
