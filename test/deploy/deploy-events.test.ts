/**
 * Deploy targets are the admin's configuration: a folder on their server, a reload command, a
 * webhook URL that may carry a token. A reseller's GET /events says what happened to the order
 * (which kind of target, which certificate, which attempt, why in general terms) and shows none
 * of it; the admin keeps the full detail in the deploy runs and in the admin's event list.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { manualClock } from '../support/clock'
import { startServer, type TestServer } from '../support/server'
import { createTestCa, type TestCa } from '../support/test-ca'
import { startReceiver, unreachableUrl, type Receiver } from '../support/webhook-receiver'

type Body = Record<string, unknown>
const clock = manualClock('2026-11-21T10:00:00Z')
let s: TestServer
let ca: TestCa
let receiver: Receiver
const work = mkdtempSync(join(tmpdir(), 'certdesk-deploy-events-'))

beforeAll(async () => {
  s = await startServer({ clock: clock.clock })
  ca = await createTestCa()
  receiver = await startReceiver({ clock: clock.clock })
})
afterAll(async () => {
  await s.service.deploys.idle()
  await receiver.close()
  await s.close()
  rmSync(work, { recursive: true, force: true })
})

describe('deploy events in GET /events', () => {
  it('show neither the folder path nor the webhook URL nor its token nor the command', async () => {
    const r = await s.reseller({ credit: 500 })
    const created = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { product_id: 2, domain: 'shop.example.test' }
    })
    const orderId = created.body.order_id as number
    const d = s.service.deploys

    const folder = join(work, 'srv-admin-only', 'www', 'shop')
    const blocker = join(work, 'not-a-folder')
    writeFileSync(blocker, 'a file where a folder should be')
    const brokenFolder = join(blocker, 'certs-admin-only')
    const hookUrl = `${receiver.url}?token=secret-token-4242`
    const downUrl = `${await unreachableUrl()}/hooks?token=down-token-9191`
    const command = 'echo reload-marker-admin-only'
    await d.addTarget(orderId, { kind: 'folder', path: folder, layout: 'nginx' })
    const broken = await d.addTarget(orderId, { kind: 'folder', path: brokenFolder, layout: 'nginx' })
    await d.addTarget(orderId, { kind: 'command', command, timeoutSeconds: 10 })
    const hook = await d.addTarget(orderId, { kind: 'webhook', url: hookUrl })
    const down = await d.addTarget(orderId, { kind: 'webhook', url: downUrl })
    receiver.secret = hook.secret?.value as string

    const leaf = await ca.issue('shop.example.test', clock.now(), 200)
    // The key was generated in the app: the folder gets privkey.pem beside its certificate.
    await s.service.keyVault.store(r.id, orderId, leaf.privateKeyPem)
    await d.certificateStored({
      orderId,
      trigger: 'issued',
      certificatePem: leaf.certificatePem,
      chainPem: leaf.chainPem
    })
    await d.idle()
    expect(receiver.deliveries.at(-1)?.signatureValid).toBe(true)

    const res = await s.request<{ events: Body[] }>('GET', `/events?order_id=${orderId}`, { key: r.key })
    expect(res.status).toBe(200)
    const text = JSON.stringify(res.body)
    for (const secret of [
      work,
      'srv-admin-only',
      'certs-admin-only',
      'not-a-folder',
      receiver.url,
      new URL(receiver.url).host,
      '/hooks',
      'token',
      'secret-token-4242',
      'down-token-9191',
      'reload-marker-admin-only',
      'echo'
    ])
      expect(text, secret).not.toContain(secret)

    const deploys = res.body.events.filter((e) => String(e.type).startsWith('deploy.'))
    const byTarget = (id: number) => deploys.find((e) => (e.data as Body).target_id === id)!
    expect(deploys).toHaveLength(5)
    expect(byTarget(hook.target.id)).toMatchObject({
      type: 'deploy.succeeded',
      message: `Certificate ${leaf.serial} deployed to webhook target ${hook.target.id}`,
      data: { kind: 'webhook', serial: leaf.serial, attempt: 1 }
    })
    expect(byTarget(down.target.id)).toMatchObject({
      type: 'deploy.failed',
      message: `Deploy of certificate ${leaf.serial} to webhook target ${down.target.id} failed (attempt 1 of 6): the receiver could not be reached; next attempt at 2026-11-21 10:01:00`,
      data: { reason: 'the receiver could not be reached', gave_up: false }
    })
    expect(byTarget(broken.target.id)).toMatchObject({
      type: 'deploy.failed',
      data: { kind: 'folder', reason: 'the certificate files could not be written' }
    })

    // The admin keeps the detail: the runs (the desktop order page) and the admin's event list.
    const runs = (await d.runs(orderId, { limit: 10, offset: 0 })).items
    expect(runs.find((x) => x.targetId === down.target.id)?.lastError).toContain(downUrl)
    expect(runs.find((x) => x.targetId === broken.target.id)?.lastError).toContain('not-a-folder')
    const admin = JSON.stringify((await s.service.events.list(null, { orderId }, { limit: 50, offset: 0 })).items)
    expect(admin).toContain(folder)
    expect(admin).toContain(hookUrl)
  })

  it('show no configuration for events stored before this rule either', async () => {
    const r = await s.reseller({ credit: 100 })
    const created = await s.request<Body>('POST', '/orders', {
      key: r.key,
      body: { product_id: 2, domain: 'old.example.test' }
    })
    const orderId = created.body.order_id as number
    const insertSql =
      'INSERT INTO events (reseller_id, order_id, type, message, data, created_at) VALUES (?, ?, ?, ?, ?, ?)'
    await s.service.ctx.store.run(
      insertSql,
      r.id,
      orderId,
      'deploy.succeeded',
      'Certificate 0A1B deployed to folder /srv/old-admin-path: wrote cert.pem to /srv/old-admin-path (nginx layout)',
      JSON.stringify({
        run_id: 1,
        target_id: 7,
        kind: 'folder',
        serial: '0A1B',
        trigger: 'issued',
        attempt: 1,
        next_attempt_at: null,
        gave_up: false
      }),
      '2026-11-21 10:00:00'
    )
    await s.service.ctx.store.run(
      insertSql,
      r.id,
      orderId,
      'deploy.failed',
      'Deploy of certificate 0A1B to webhook https://hooks.example.test/x?token=old-token failed (attempt 6 of 6): could not deliver webhook to https://hooks.example.test/x?token=old-token: ECONNREFUSED; no more attempts',
      JSON.stringify({
        run_id: 2,
        target_id: 8,
        kind: 'webhook',
        serial: '0A1B',
        trigger: 'issued',
        attempt: 6,
        next_attempt_at: null,
        gave_up: true,
        url: 'https://hooks.example.test/x?token=old-token'
      }),
      '2026-11-21 10:00:01'
    )
    const res = await s.request<{ events: Body[] }>('GET', `/events?order_id=${orderId}&type=deploy.failed`, {
      key: r.key
    })
    expect(res.body.events).toEqual([
      expect.objectContaining({
        message: 'Deploy of certificate 0A1B to webhook target 8 failed (attempt 6 of 6); no more attempts',
        data: {
          run_id: 2,
          target_id: 8,
          kind: 'webhook',
          serial: '0A1B',
          trigger: 'issued',
          attempt: 6,
          next_attempt_at: null,
          gave_up: true
        }
      })
    ])
    const all = JSON.stringify((await s.request('GET', `/events?order_id=${orderId}`, { key: r.key })).body)
    expect(all).toContain('Certificate 0A1B deployed to folder target 7')
    for (const secret of ['old-admin-path', 'hooks.example.test', 'old-token']) expect(all).not.toContain(secret)
  })
})
