/**
 * A team server as it runs in production: `certdesk serve --accounts --public-ui` with its keys
 * from systemd credentials and its public TLS listener by a DNS name, with a certificate of its
 * own CertDesk CA. Admins sign in over that listener (a Secure cookie, an https origin), an
 * admin enrols TOTP although the credentials cannot be written (the TOTP key is sealed in the
 * store, like every other per-record secret of a server), and the desktop app on another machine
 * connects to the team server by its public https URL, trusting it by the root's SHA-256.
 */
import { spawnSync } from 'node:child_process'
import { createHash, X509Certificate } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request as httpsRequest } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { base32Decode, hotp, totpStep } from '../../src-main/core/admins/totp'
import { freePort, setA, startChallTestSrv, type ChallTestSrv } from '../support/acme'
import { CLI } from '../support/cli'
import { clientNetwork, type ClientNetwork } from '../support/client-network'
import { certdeskIn, serverEnv, startServeNode, type ServeNode } from '../support/serve-node'

const NAME = 'team.reseller.example'
const PASSWORD = 'tangerine-kite-harbour-42'
const ROOT_LINE = /CertDesk root SHA-256 [^\n]*: ([0-9a-f]{64})\n/

let net: ClientNetwork
let dns: ChallTestSrv
let work: string
let home: string
let env: NodeJS.ProcessEnv
let credential: string
let dataDir: string
let port: number
let base: string
let team: ServeNode
let rootPem: string
let printedRoot: string

const admin = (...args: string[]) => {
  const r = certdeskIn(env, ['admin', '--data-dir', dataDir, '--secrets', 'systemd', ...args])
  expect(r.code, r.stderr).toBe(0)
  return r.json
}

/** `admins add` as an owner runs it at the server's shell: the password on stdin. */
function addAdmin(name: string, role: string): void {
  const r = spawnSync(
    process.execPath,
    [CLI, 'admin', '--data-dir', dataDir, '--secrets', 'systemd', 'admins', 'add', '--name', name, '--role', role],
    { env, input: `${PASSWORD}\n`, encoding: 'utf8', timeout: 60_000 }
  )
  expect(r.status, r.stderr).toBe(0)
}

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Record<string, unknown>
  text: string
}

/** A request to the public listener by the public name (SNI, Host, the name check against the pinned root). */
function onPublic(
  method: string,
  path: string,
  opts: { json?: unknown; origin?: string; cookie?: string } = {}
): Promise<Answer> {
  const body = opts.json === undefined ? undefined : JSON.stringify(opts.json)
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: net.serverAddress,
        port,
        servername: NAME,
        method,
        path,
        ca: rootPem,
        headers: {
          host: `${NAME}:${port}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
          ...(opts.origin ? { origin: opts.origin } : {}),
          ...(opts.cookie ? { cookie: opts.cookie } : {})
        }
      },
      (res) => {
        let text = ''
        res.on('data', (d) => (text += d))
        res.on('end', () => {
          let parsed: Record<string, unknown> = {}
          try {
            parsed = JSON.parse(text) as Record<string, unknown>
          } catch {
            // a page, not JSON
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed, text })
        })
      }
    )
    req.on('error', reject)
    req.end(body)
  })
}

const signIn = (name: string, code?: string, origin = base) =>
  onPublic('POST', '/ui/sign-in', { json: { name, password: PASSWORD, ...(code ? { code } : {}) }, origin })

const cookieOf = (a: Answer): string => {
  const set = ([] as string[]).concat(a.headers['set-cookie'] ?? [])
  return set.find((c) => c.startsWith('certdesk_session=')) ?? ''
}

const rpc = (cookie: string, method: string, ...args: unknown[]) =>
  onPublic('POST', `/rpc/${method}`, { json: { args }, origin: base, cookie: cookie.split(';')[0] })

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'certdesk-team-public-'))
  net = clientNetwork(NAME)
  dns = await startChallTestSrv({ dns: net.dnsAt ?? undefined, defaultIPv4: net.clientAddress })
  if (net.kind === 'netns') await setA(dns, NAME, net.serverAddress)
  home = mkdtempSync(join(work, 'home-'))
  // What LoadCredentialEncrypted= leaves for the unit: the plain key file, read-only, under the credential's name.
  const credentials = mkdtempSync(join(work, 'credentials-'))
  const plain = join(mkdtempSync(join(work, 'etc-')), 'secrets')
  expect(certdeskIn(serverEnv(home), ['admin', 'secrets', 'init', '--out', plain]).code).toBe(0)
  credential = join(credentials, 'certdesk-secrets')
  writeFileSync(credential, readFileSync(plain), { mode: 0o400 })
  rmSync(plain)
  env = serverEnv(home, { CREDENTIALS_DIRECTORY: credentials })
  dataDir = mkdtempSync(join(work, 'data-'))
  admin('reseller', 'add', '--name', 'Team Hosting', '--email', 'ops@team.example', '--group', '1')
  addAdmin('olga', 'owner')
  addAdmin('otto', 'operator')
  port = await freePort()
  base = `https://${NAME}:${port}`
  team = await startServeNode(
    env,
    [
      '--data-dir',
      dataDir,
      '--secrets',
      'systemd',
      '--accounts',
      '--public-ui',
      '--public-url',
      base,
      '--public-listen',
      `${net.serverAddress}:${port}`
    ],
    ROOT_LINE
  )
  printedRoot = ROOT_LINE.exec(team.stdout())![1]
  rootPem = admin('ca', 'root').root_pem as string
}, 180_000)

afterAll(async () => {
  await team?.stop()
  await dns?.stop()
  net?.close()
  if (work) rmSync(work, { recursive: true, force: true })
})

describe('admins on the public listener', () => {
  it('says where admins sign in by the public name, and which root to pin', () => {
    expect(team.stdout()).toContain(
      `CertDesk admin UI by the public name (sign in with an admin account) at ${base}/ui/\n`
    )
    // The SHA-256 of the root's PEM file: the value the customers' set-up commands check too.
    expect(printedRoot).toBe(createHash('sha256').update(rootPem).digest('hex'))
  })

  it('serves the sign-in page there, and signs in from the https page only, with a Secure cookie', async () => {
    const page = await onPublic('GET', '/ui/')
    expect(page.status).toBe(200)
    expect(page.text).toMatch(/<html/i)
    // The page is https://NAME: an http origin of the same name is another origin (RFC 6454 §4).
    const plain = await signIn('olga', undefined, `http://${NAME}:${port}`)
    expect(plain.status).toBe(403)
    expect(plain.body.error).toMatch(/not from the CertDesk page at https:\/\/team\.reseller\.example:\d+/)
    expect(cookieOf(plain)).toBe('')
    const ok = await signIn('olga')
    expect(ok.status, ok.text).toBe(200)
    expect(cookieOf(ok)).toMatch(/^certdesk_session=[^;]+; HttpOnly; SameSite=Strict; Path=\/; Secure$/)
    const session = await rpc(cookieOf(ok), 'session')
    expect(session.body.result).toMatchObject({ actor: 'olga', role: 'owner', account: true })
    // A wrong password there is the sign-in's own refusal, not a session.
    const wrong = await onPublic('POST', '/ui/sign-in', {
      json: { name: 'olga', password: 'not the right password' },
      origin: base
    })
    expect(wrong.status).toBe(401)
    expect(cookieOf(wrong)).toBe('')
  })

  it('enrols TOTP on systemd credentials: the key is sealed in the store, the credential stays as it was', async () => {
    const credentialBefore = readFileSync(credential)
    const cookie = cookieOf(await signIn('olga'))
    const begun = await rpc(cookie, 'beginTotp')
    expect(begun.status, begun.text).toBe(200)
    const secret = (begun.body.result as { secret: string }).secret
    const key = base32Decode(secret)!
    const step = totpStep(new Date())
    const confirmed = await rpc(cookie, 'confirmTotp', hotp(key, step))
    expect(confirmed.status, confirmed.text).toBe(200)
    expect(confirmed.body.result).toMatchObject({ totpEnabled: true })

    expect(readFileSync(credential).equals(credentialBefore)).toBe(true)
    const db = new Database(join(dataDir, 'certdesk.sqlite'), { readonly: true })
    try {
      const rows = db.prepare('SELECT name, sealed FROM sealed_secrets ORDER BY name').all() as {
        name: string
        sealed: Buffer
      }[]
      const id = (db.prepare("SELECT id FROM admins WHERE name = 'olga'").get() as { id: number }).id
      expect(rows.map((r) => r.name)).toContain(`admin-totp:${id}`)
      // The pending key is gone, and no row holds the key in clear.
      expect(rows.map((r) => r.name)).not.toContain(`admin-totp-pending:${id}`)
      for (const r of rows) {
        expect(r.sealed.includes(Buffer.from(secret))).toBe(false)
        expect(r.sealed.includes(key)).toBe(false)
      }
    } finally {
      db.close()
    }

    // From now on olga signs in with a code; the next step's code is one she has not used.
    expect((await signIn('olga')).status).toBe(401)
    const again = await signIn('olga', hotp(key, step + 1))
    expect(again.status, again.text).toBe(200)
    // Nothing of a keyring was made for any of it.
    expect(readdirSync(home)).toEqual([])
  })
})

describe('the desktop app on another machine as a client of the team server', () => {
  let desk: ServeNode
  let deskUrl: string
  let deskCookie: string

  beforeAll(async () => {
    const deskSecrets = join(mkdtempSync(join(work, 'desk-etc-')), 'secrets')
    const deskEnv = serverEnv(mkdtempSync(join(work, 'desk-home-')))
    expect(certdeskIn(deskEnv, ['admin', 'secrets', 'init', '--out', deskSecrets]).code).toBe(0)
    // The desktop's browser mode runs the same main-process code as the window; here on the
    // client's machine, reachable from this side on the client's address.
    desk = await startServeNode(
      deskEnv,
      [
        '--data-dir',
        mkdtempSync(join(work, 'desk-data-')),
        '--secrets',
        `file:${deskSecrets}`,
        '--host',
        net.clientAddress,
        '--ui'
      ],
      /CertDesk desktop UI \(browser mode\), open once: \S+\n/,
      net.argv
    )
    deskUrl = desk.api
    const link = /CertDesk desktop UI \(browser mode\), open once: (\S+)\n/.exec(desk.stdout())![1]
    const login = await fetch(link, { redirect: 'manual' })
    deskCookie = login.headers.getSetCookie()[0].split(';')[0]
  }, 120_000)

  afterAll(async () => {
    await desk?.stop()
  })

  const deskCall = async (method: string, ...args: unknown[]) => {
    const res = await fetch(`${deskUrl}/rpc/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: deskUrl, cookie: deskCookie },
      body: JSON.stringify({ args })
    })
    return { status: res.status, body: (await res.json()) as Record<string, unknown> }
  }

  const signInsOf = (name: string): number =>
    (admin('audit', 'list', '--actor', name, '--action', 'signIn', '--json').entries as unknown[]).length

  it('refuses the CertDesk-issued certificate without a pin, before any password is sent', async () => {
    const r = await deskCall('connectTeam', { url: base, name: 'otto', password: PASSWORD })
    expect(r.status).toBe(503)
    expect(r.body.error).toMatch(
      new RegExp(
        `^could not reach the team server at ${base.replace(/\./g, '\\.')}: its certificate is not trusted here \\(\\w+\\); .*SHA-256`
      )
    )
    expect(signInsOf('otto')).toBe(0)
  })

  it('refuses a pin of another root, before any password is sent', async () => {
    const other = createHash('sha256').update('another root').digest('hex')
    const r = await deskCall('connectTeam', { url: base, name: 'otto', password: PASSWORD, rootSha256: other })
    expect(r.status).toBe(503)
    expect(r.body.error).toMatch(/^could not trust the team server at .*: its root certificate has another SHA-256/)
    expect(signInsOf('otto')).toBe(0)
    const typo = await deskCall('connectTeam', { url: base, name: 'otto', password: PASSWORD, rootSha256: 'abc' })
    expect(typo.status).toBe(400)
  })

  it('connects with the root pinned as serve printed it, and works on the team’s book as that account', async () => {
    const r = await deskCall('connectTeam', { url: base, name: 'otto', password: PASSWORD, rootSha256: printedRoot })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect(r.body.result).toMatchObject({
      actor: 'otto',
      role: 'operator',
      teamClient: true,
      book: { kind: 'team', server: `${NAME}:${port}` }
    })
    const resellers = await deskCall('listResellers')
    expect((resellers.body.result as { name: string }[]).map((x) => x.name)).toContain('Team Hosting')
    // The team server enforces the role: an operator records no top-up.
    expect((await deskCall('topUp', 1, 100_00)).status).toBe(403)
    expect(signInsOf('otto')).toBe(1)
    expect((await deskCall('disconnectTeam')).status).toBe(200)
  })

  it('takes the fingerprint as openssl prints it (of the certificate’s DER) too', async () => {
    const colons = new X509Certificate(rootPem).fingerprint256
    expect(colons).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/)
    const r = await deskCall('connectTeam', { url: base, name: 'otto', password: PASSWORD, rootSha256: colons })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect((await deskCall('disconnectTeam')).status).toBe(200)
  })
})
