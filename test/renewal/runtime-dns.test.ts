/**
 * The delegated-zone responder as the runtime runs it: started when `dns.delegated_zone` and
 * `dns.listen` are set, answering the records the ACME issuer publishes, gone after stop(); and
 * the settings that configure it refuse what is not a zone or an address.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { Resolver } from 'node:dns/promises'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { onEngine, openService } from '../support/engine'
import { DELEGATED_DNS_SETTINGS } from '../../src-main/core/settings/setting-keys'
import { startCertDesk, type RuntimeLog } from '../../src-main/runtime'
import { freePort } from '../support/acme'

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
const dataDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'certdesk-runtime-dns-'))
  dirs.push(d)
  return d
}
const log: RuntimeLog = { info: () => undefined, error: () => undefined }
const accepts = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = connect(port, '127.0.0.1')
    s.once('connect', () => {
      s.destroy()
      resolve(true)
    })
    s.once('error', () => resolve(false))
  })

describe('the runtime and the delegated-zone responder', () => {
  it('starts it when configured, serves published values, and stops it on stop', async () => {
    const dir = dataDir()
    const port = await freePort()
    const setup = await openService({ dataDir: dir })
    await setup.settings.update({
      [DELEGATED_DNS_SETTINGS.zone]: 'acme.reseller.test.',
      [DELEGATED_DNS_SETTINGS.listen]: `127.0.0.1:${port}`
    })
    await setup.close()
    const running = await startCertDesk({ ...onEngine(dir), port: 0, log })
    try {
      expect(running.urls.dnsResponder).toBe(`127.0.0.1:${port}`)
      const d = running.service.acmeIssuer.delegation
      const r1 = (
        await running.service.resellers.create({ name: 'R', email: 'r@example.test', company: 'R', groupId: 1 })
      ).id
      await d.publish(r1, 'shop.example', 'the-dns-01-digest', null)
      const r = new Resolver({ timeout: 1000, tries: 1 })
      r.setServers([`127.0.0.1:${port}`])
      expect(await r.resolveTxt(await d.target(r1, 'shop.example'))).toEqual([['the-dns-01-digest']])
      await expect(r.resolveTxt('_acme-challenge.shop.example')).rejects.toMatchObject({ code: 'EREFUSED' })
      expect(await accepts(port)).toBe(true)
    } finally {
      await running.stop()
    }
    expect(await accepts(port)).toBe(false)
  })

  it('does not start it without a zone', async () => {
    const running = await startCertDesk({ ...onEngine(dataDir()), port: 0, log })
    try {
      expect(running.urls.dnsResponder).toBeNull()
    } finally {
      await running.stop()
    }
  })

  it('refuses a zone or address that is not one, and keeps the old value', async () => {
    const service = await openService({ dataDir: dataDir() })
    try {
      await service.settings.update({ [DELEGATED_DNS_SETTINGS.zone]: 'acme.reseller.test' })
      for (const bad of [
        'acme..test',
        'acme.test;rm -rf /',
        'single',
        '-bad.test',
        'a b.test',
        `${'a'.repeat(64)}.test`
      ]) {
        await expect(service.settings.update({ [DELEGATED_DNS_SETTINGS.zone]: bad }), bad).rejects.toThrow(/DNS zone/)
      }
      for (const bad of ['localhost:53', '127.0.0.1', '127.0.0.1:99999', '0.0.0.0:53; ls']) {
        await expect(service.settings.update({ [DELEGATED_DNS_SETTINGS.listen]: bad }), bad).rejects.toThrow()
      }
      expect(await service.settings.get(DELEGATED_DNS_SETTINGS.zone)).toBe('acme.reseller.test')
    } finally {
      await service.close()
    }
  })
})
