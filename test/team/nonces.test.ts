/**
 * ACME nonces on several nodes of one PostgreSQL book (RFC 8555 §6.5): a nonce one node hands
 * out is taken by another, once only, whichever node sees the second use; one that was never
 * issued, was altered or has expired is `badNonce` everywhere. Three ACME servers over three
 * services in this process stand for three nodes: each has its own listener, its own memory
 * and its own pool to the one database.
 */
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { exportJWK, FlattenedSign } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAcmeServer, type RunningAcmeServer } from '../../src-main/acme/server'
import { NONCE_LIFETIME_MS, type NonceBook } from '../../src-main/core/acme-server/nonces'
import { openService, type Service } from '../../src-main/core/service'
import { https } from '../support/acme-jws'
import { createTestDatabase, type TestDatabase } from '../support/postgres'

interface Node {
  service: Service
  acme: RunningAcmeServer
}

let db: TestDatabase
let dir: string
const nodes: Node[] = []
/**
 * The nonces of a node whose clock runs NONCE_LIFETIME_MS (and two minutes) ahead: every nonce
 * of the others is old to it. (No listener: its certificate would not be valid yet to a client.)
 */
let lateService: Service
let late: NonceBook

const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey

async function nonceFrom(n: Node): Promise<string> {
  const r = await https(n.acme.rootPem, 'HEAD', `${n.acme.baseUrl}/acme/new-nonce`)
  expect(r.status).toBe(200)
  return r.headers['replay-nonce'] as string
}

/** A new-account request to `n` signed with `nonce`: the problem type it is refused with. */
async function newAccount(n: Node, nonce: string): Promise<string> {
  const url = `${n.acme.baseUrl}/acme/new-account`
  const jwk = await exportJWK(key)
  delete jwk.d
  const jws = await new FlattenedSign(new TextEncoder().encode(JSON.stringify({ termsOfServiceAgreed: true })))
    .setProtectedHeader({ alg: 'ES256', nonce, url, jwk })
    .sign(key)
  const r = await https(n.acme.rootPem, 'POST', url, jws)
  expect(r.status).toBeGreaterThanOrEqual(400)
  return String(r.body.type)
}

async function node(clock?: () => Date): Promise<Node> {
  const service = await openService({ dataDir: dir, database: db.url, ...(clock ? { clock } : {}) })
  return { service, acme: await startAcmeServer(service, { port: 0 }) }
}

beforeAll(async () => {
  db = await createTestDatabase()
  dir = mkdtempSync(join(tmpdir(), 'certdesk-team-nonces-'))
  // Started together, as nodes of a team do: they agree on one nonce key between them.
  nodes.push(...(await Promise.all([node(), node(), node()])))
  lateService = await openService({
    dataDir: dir,
    database: db.url,
    clock: () => new Date(Date.now() + NONCE_LIFETIME_MS + 120_000)
  })
  late = await lateService.acmeServer.nonces()
})

afterAll(async () => {
  for (const n of nodes) {
    await n?.acme.close()
    await n?.service.close()
  }
  await lateService?.close()
  await db?.drop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

const NOT_BAD_NONCE = 'urn:ietf:params:acme:error:externalAccountRequired'
const BAD_NONCE = 'urn:ietf:params:acme:error:badNonce'

describe('ACME nonces across nodes', () => {
  it('takes a nonce from one node on another, once only, whichever node sees it again', async () => {
    const [a, b, c] = nodes
    const nonce = await nonceFrom(a)
    // Accepted by b: the request then fails for what it lacks (EAB), not for its nonce.
    expect(await newAccount(b, nonce)).toBe(NOT_BAD_NONCE)
    expect(await newAccount(c, nonce)).toBe(BAD_NONCE)
    expect(await newAccount(a, nonce)).toBe(BAD_NONCE)
    expect(await newAccount(b, nonce)).toBe(BAD_NONCE)
  })

  it('lets one use win when two nodes get the same nonce at the same moment', async () => {
    const [a, b, c] = nodes
    for (let round = 0; round < 5; round++) {
      const nonce = await nonceFrom(c)
      const answers = await Promise.all([newAccount(a, nonce), newAccount(b, nonce), newAccount(c, nonce)])
      expect(answers.filter((t) => t === NOT_BAD_NONCE)).toHaveLength(1)
      expect(answers.filter((t) => t === BAD_NONCE)).toHaveLength(2)
    }
  })

  it('refuses a nonce no node issued, an altered one, and one past its lifetime', async () => {
    const [a, b] = nodes
    // A nonce of the right shape and length that was never issued (its MAC is zeros).
    const made = Buffer.concat([Buffer.from([1]), Buffer.alloc(4, 0x7f), Buffer.alloc(32, 0xab)]).toString('base64url')
    expect(await newAccount(b, made)).toBe(BAD_NONCE)
    const real = await nonceFrom(a)
    const flipped = `${real.slice(0, 10)}${real[10] === 'A' ? 'B' : 'A'}${real.slice(11)}`
    expect(await newAccount(b, flipped)).toBe(BAD_NONCE)
    expect(await newAccount(b, `${real}'; DROP TABLE acme_nonces_spent; --`)).toBe(BAD_NONCE)
    expect(await newAccount(b, 'x'.repeat(10_000))).toBe(BAD_NONCE)
    // The real one is still good after those: none of them spent it.
    const old = await nonceFrom(a)
    expect(await late.consume(old)).toBe(false)
    expect(await newAccount(b, real)).toBe(NOT_BAD_NONCE)
  })

  it('keeps each spent nonce in the book until it would have expired, then prunes it', async () => {
    const [a, b] = nodes
    const nonce = await nonceFrom(a)
    expect(await newAccount(b, nonce)).toBe(NOT_BAD_NONCE)
    const row = await b.service.ctx.store.get<{ expires_at: string }>(
      'SELECT expires_at FROM acme_nonces_spent WHERE nonce = ?',
      nonce
    )
    expect(row).toBeDefined()
    // The node whose clock is past that moment prunes it on its next use of a nonce.
    expect(await late.consume(late.issue())).toBe(true)
    await expect
      .poll(async () => b.service.ctx.store.value('SELECT COUNT(*) FROM acme_nonces_spent WHERE nonce = ?', nonce))
      .toBe(0)
  })
})
