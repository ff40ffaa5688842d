/**
 * The desktop app as a client of a team server, with both on real listeners: the desktop's
 * browser mode (signed in with its one-time link) connects to a team server with an admin
 * account, then works on the team's book through the same bridge, limited by that account's
 * role on the team server and audited there; it goes back to its own book, and hears when the
 * team server ends its session. Then hostile team servers and addresses.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { teamOrigin } from '../../src-main/app/team-client'
import { startBrowserMode, type BrowserMode } from '../support/browser-mode'
import { startTeamServer, TEAM_PASSWORD, type TeamServer } from '../support/team-server'

let desk: BrowserMode
let team: TeamServer

beforeAll(async () => {
  desk = await startBrowserMode('certdesk-desk-')
  team = await startTeamServer('certdesk-team-')
  // The team's book is told apart from the desk's by its reseller's name.
  team.service.resellers.create({ name: 'Team Hosting', email: 'ops@team.example' })
  await team.addAdmin('olga', 'owner')
  await team.addAdmin('otto', 'operator')
})

afterAll(async () => {
  await desk?.close()
  await team?.close()
})

/** A bridge call on the desktop's own RPC, as its page makes it. */
async function deskCall(
  method: string,
  ...args: unknown[]
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${desk.url}/rpc/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: desk.url, cookie: desk.cookie },
    body: JSON.stringify({ args })
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

const names = async (): Promise<string[]> =>
  ((await deskCall('listResellers')).body.result as { name: string }[]).map((r) => r.name)

describe('working on a team server’s book', () => {
  it('starts on the local book as the desktop owner', async () => {
    const s = await deskCall('session')
    expect(s.body.result).toMatchObject({ actor: 'desktop', role: 'owner', book: { kind: 'local' }, teamClient: false })
    expect(await names()).toEqual(['Demo Reseller'])
  })

  it('refuses a wrong password with 403 (not the 401 that would sign the desktop tab out) and stays local', async () => {
    const r = await deskCall('connectTeam', { url: team.url, name: 'otto', password: 'not the right password' })
    expect(r.status).toBe(403)
    expect(r.body.error).toBe(`${new URL(team.url).host}: could not sign in: wrong name, password or code`)
    expect((await deskCall('session')).body.result).toMatchObject({ book: { kind: 'local' } })
  })

  it('connects as an operator: the team’s book, that role’s limits, and the team server’s audit log', async () => {
    const before = team.service.admins.audit.list({}, { limit: 1, offset: 0 }).total
    const r = await deskCall('connectTeam', { url: team.url, name: 'otto', password: TEAM_PASSWORD })
    expect(r.status).toBe(200)
    const host = new URL(team.url).host
    expect(r.body.result).toMatchObject({
      actor: 'otto',
      role: 'operator',
      account: true,
      teamClient: true,
      book: { kind: 'team', server: host }
    })
    expect(await names()).toEqual(['Demo Reseller', 'Team Hosting'])

    // The role is the team server's to enforce: the desktop's owner is an operator there.
    const balance = team.service.resellers.get(team.resellerId).creditBalance
    const topUp = await deskCall('topUp', team.resellerId, 500_00)
    expect(topUp.status).toBe(403)
    expect(team.service.resellers.get(team.resellerId).creditBalance).toBe(balance)
    const order = await deskCall(
      'createOrder',
      team.resellerId,
      { productId: 2, domain: 'desk.example.test' },
      'credit'
    )
    expect(order.status).toBe(200)
    expect(team.service.orders.list(team.resellerId, {}, { limit: 10, offset: 0 }).items[0].domain).toBe(
      'desk.example.test'
    )
    // Its local book did not move.
    expect(desk.service.orders.list(desk.resellerId, {}, { limit: 10, offset: 0 }).total).toBe(0)

    const onTeam = team.service.admins.audit.list({}, { limit: 100, offset: 0 }).items
    expect(onTeam.length - before).toBe(3)
    expect(onTeam.slice(0, 3).map((e) => [e.actor, e.action, e.outcome])).toEqual([
      ['otto', 'createOrder', 'ok'],
      ['otto', 'topUp', 'denied'],
      ['otto', 'signIn', 'ok']
    ])
    // The desktop's own log holds its own act, connecting, and none of what it did on the team's book.
    const onDesk = desk.service.admins.audit.list({}, { limit: 100, offset: 0 }).items
    expect(onDesk.map((e) => [e.actor, e.action, e.outcome])).toEqual([
      ['desktop', 'connectTeam', 'ok'],
      ['desktop', 'connectTeam', 'denied']
    ])
    expect(JSON.stringify(onDesk)).not.toContain(TEAM_PASSWORD)
  })

  it('hears when the team server ends the session, and offers that server’s sign-in again', async () => {
    // An owner on the team server makes otto a viewer: his sessions end at once.
    const olga = (await team.signIn('olga')).cookie!
    expect((await team.rpc(olga, 'setAdminRole', ['otto', 'viewer'])).status).toBe(200)
    const r = await deskCall('listResellers')
    expect(r.status).toBe(401)
    expect(r.body).toMatchObject({ signIn: 'team' })
    expect(r.body.error).toMatch(/^sign in again to the team server 127\.0\.0\.1:\d+: /)
    const again = await deskCall('connectTeam', { url: team.url, name: 'otto', password: TEAM_PASSWORD })
    expect(again.body.result).toMatchObject({ role: 'viewer' })
    expect(
      (await deskCall('createOrder', team.resellerId, { productId: 2, domain: 'x.example.test' }, 'credit')).status
    ).toBe(403)
  })

  it('goes back to the local book, and signs out on the team server', async () => {
    const r = await deskCall('disconnectTeam')
    expect(r.status).toBe(200)
    expect(r.body.result).toMatchObject({ actor: 'desktop', book: { kind: 'local' } })
    expect(await names()).toEqual(['Demo Reseller'])
    expect(team.service.admins.audit.list({ action: 'signOut' }, { limit: 1, offset: 0 }).items[0]).toMatchObject({
      actor: 'otto'
    })
  })

  it('a team server is never a client of another: connectTeam is refused there', async () => {
    const olga = (await team.signIn('olga')).cookie!
    const r = await team.rpc(olga, 'connectTeam', [{ url: desk.url, name: 'olga', password: TEAM_PASSWORD }])
    expect(r.status).toBe(409)
    expect(r.body.error).toMatch(/this CertDesk signs its own admins in/)
  })
})

describe('hostile addresses and servers', () => {
  const servers: Server[] = []
  afterAll(() => servers.forEach((s) => s.close()))
  async function fake(handler: Parameters<typeof createServer>[1]): Promise<string> {
    const s = createServer(handler)
    servers.push(s)
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`
  }
  const connect = (url: string) => deskCall('connectTeam', { url, name: 'otto', password: TEAM_PASSWORD })

  it('refuses plain http to another machine, credentials in the address, and what is no URL', async () => {
    expect(() => teamOrigin('http://certs.example.com')).toThrow(/use https/)
    expect(() => teamOrigin('http://10.0.0.5:7780')).toThrow(/use https/)
    expect(() => teamOrigin('https://user:pw@certs.example.com')).toThrow(/must not carry a name or password/)
    expect(() => teamOrigin('ftp://certs.example.com')).toThrow(/https/)
    expect(() => teamOrigin('certs example')).toThrow(/not a URL/)
    expect(teamOrigin('http://[::1]:7780/ui/').origin).toBe('http://[::1]:7780')
    for (const url of ['http://certs.example.com', 'javascript:alert(1)', 'https://u:p@127.0.0.1:1/']) {
      const r = await connect(url)
      expect(r.status, url).toBe(400)
      expect(r.body.error, url).toMatch(/^could not connect to the team server: /)
    }
    // A path of quotes and semicolons is just a path; nothing listens there.
    const closed = await fake(() => undefined)
    await new Promise((r) => servers.pop()!.close(r))
    const odd = await connect(`${closed.replace('http:', 'https:')}/'; DROP TABLE admins;--`)
    expect(odd.status).toBe(503)
    expect(odd.body.error).toBe(`could not reach the team server at ${closed.replace('http:', 'https:')}: ECONNREFUSED`)
    expect(desk.service.admins.accounts.list()).toEqual([])
  })

  it('does not follow a redirect with the password, and says when a server is no CertDesk', async () => {
    let followed = false
    const target = await fake((_req, res) => {
      followed = true
      res.end('{}')
    })
    const redirecting = await fake((_req, res) => res.writeHead(307, { location: `${target}/ui/sign-in` }).end())
    const r = await connect(redirecting)
    expect(r.status).toBe(503)
    expect(r.body.error).toMatch(/answered HTTP 307 without a CertDesk answer/)
    expect(followed).toBe(false)
    const html = await fake((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>hello</h1>'))
    expect((await connect(html)).body.error).toMatch(/without a CertDesk answer/)
  })

  it('stops reading an answer past 32 MiB', async () => {
    const flood = await fake((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      const chunk = Buffer.alloc(1024 * 1024, 0x20)
      let sent = 0
      const more = (): void => {
        while (sent < 40 && res.write(chunk)) sent++
        if (sent < 40) res.once('drain', more)
        else res.end()
      }
      more()
    })
    const r = await connect(flood)
    expect(r.status).toBe(503)
    expect(r.body.error).toMatch(/larger than 33554432 bytes/)
    expect((await deskCall('session')).body.result).toMatchObject({ book: { kind: 'local' } })
  })
})
