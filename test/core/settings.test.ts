import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { DCV_SETTINGS } from '../../src-main/core/dcv/dcv'
import { ServiceError } from '../../src-main/core/errors'
import type { Service } from '../../src-main/core/service'
import { settingProblems, type Settings } from '../../src-main/core/settings/settings'
import { openService } from '../support/engine'

const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-settings-'))
let service: Service
let settings: Settings
beforeAll(async () => {
  service = await openService({ dataDir })
  settings = service.settings
})
afterAll(async () => {
  await service.close()
  rmSync(dataDir, { recursive: true, force: true })
})
beforeEach(async () => {
  await service.ctx.store.run('DELETE FROM settings WHERE key LIKE ? OR key LIKE ?', 'dcv.%', 'smtp.%')
})

/** The 400 message `update` refuses with, or null when it saved. */
async function refusal(changes: Record<string, string>): Promise<string | null> {
  try {
    await settings.update(changes)
    return null
  } catch (err) {
    expect(err).toBeInstanceOf(ServiceError)
    expect((err as ServiceError).kind).toBe('invalid')
    return (err as Error).message
  }
}

describe('settings a person types', () => {
  it('refuses a port outside 1-65535, or not written as a plain number, and keeps the old value', async () => {
    await settings.update({ [DCV_SETTINGS.httpPort]: '8080' })
    for (const bad of ['99999', '65536', '0', '-1', '80.5', '1e3', ' 80', '0x50', '080', 'eighty', '80; rm -rf /']) {
      expect(await refusal({ [DCV_SETTINGS.httpPort]: bad }), bad).toMatch(
        /^could not save setting dcv\.http_port: must be a port number from 1 to 65535, not ".*"$/
      )
      expect(await settings.get(DCV_SETTINGS.httpPort)).toBe('8080')
    }
    expect(await refusal({ [DCV_SETTINGS.httpsPort]: '99999' })).toBe(
      'could not save setting dcv.https_port: must be a port number from 1 to 65535, not "99999"'
    )
    for (const good of ['1', '80', '443', '65535'])
      expect(await refusal({ [DCV_SETTINGS.httpsPort]: good }), good).toBeNull()
    expect(await settings.get(DCV_SETTINGS.httpsPort)).toBe('65535')
  })

  it('refuses a sender that is not an email address, and one that would add a mail header', async () => {
    for (const bad of [
      'not an email',
      'certdesk',
      '@example.com',
      'certdesk@',
      'a@b@example.com',
      'certdesk@exa mple.com',
      'certdesk@-example.com',
      'certs@example.com\r\nBcc: victim@example.org',
      'certs@example.com\nSubject: hi',
      'CertDesk <certs@example.com>, other@example.org',
      'Doe, John <certs@example.com>',
      'x'.repeat(65) + '@example.com'
    ]) {
      expect(await refusal({ [DCV_SETTINGS.smtpFrom]: bad }), JSON.stringify(bad)).toMatch(
        /^could not save setting smtp\.from: must be an email address such as certdesk@example\.com/
      )
    }
    expect(await settings.get(DCV_SETTINGS.smtpFrom)).toBeNull()
    for (const good of [
      'certdesk@localhost',
      'dcv+certs@mail.example.com',
      'CertDesk validation <dcv@certdesk.invalid>'
    ]) {
      expect(await refusal({ [DCV_SETTINGS.smtpFrom]: good }), good).toBeNull()
      expect(await settings.get(DCV_SETTINGS.smtpFrom)).toBe(good)
    }
  })

  it('takes a resolver only as IP address and port, and an SMTP relay only as smtp(s)://host:port', async () => {
    for (const bad of [
      'dns.example.com:53',
      '127.0.0.1',
      '127.0.0.1:99999',
      '127.0.0.1:0',
      '999.1.1.1:53',
      '::1:53',
      '[127.0.0.1]:53'
    ]) {
      expect(await refusal({ [DCV_SETTINGS.resolver]: bad }), bad).toMatch(
        /^could not save setting dcv\.dns_resolver: must/
      )
    }
    for (const good of ['127.0.0.1:53', '[::1]:5353'])
      expect(await refusal({ [DCV_SETTINGS.resolver]: good }), good).toBeNull()
    expect(await refusal({ [DCV_SETTINGS.smtpUrl]: 'smtp://user:pw@mail.example.com:25' })).toMatch(
      /must not carry a user or password/
    )
    expect(await refusal({ [DCV_SETTINGS.smtpUrl]: 'http://mail.example.com' })).toMatch(
      /must start with smtp:\/\/ or smtps:\/\//
    )
    expect(await refusal({ [DCV_SETTINGS.smtpUrl]: 'smtp://mail.example.com:25/x?y' })).toMatch(/without a path/)
    expect(await refusal({ [DCV_SETTINGS.smtpUrl]: 'smtps://mail.example.com:465' })).toBeNull()
    // A refused password never comes back in the message, even in a URL that does not parse.
    expect(await refusal({ [DCV_SETTINGS.smtpUrl]: 'smtp://user:hunter2@mail.example.com' })).not.toContain('hunter2')
    expect(await refusal({ [DCV_SETTINGS.smtpUrl]: 'smtp://user:hunter2@mail example.com' })).toBe(
      'could not save setting smtp.url: must be a URL such as smtp://127.0.0.1:25'
    )
  })

  it('saves all values or none, names every refused one, and treats empty as the default', async () => {
    await settings.update({ [DCV_SETTINGS.httpPort]: '8080', [DCV_SETTINGS.smtpFrom]: 'a@example.com' })
    const message = await refusal({
      [DCV_SETTINGS.httpPort]: '99999',
      [DCV_SETTINGS.httpsPort]: '8443',
      [DCV_SETTINGS.smtpFrom]: 'not an email'
    })
    expect(message).toMatch(/^could not save setting dcv\.http_port: .+; could not save setting smtp\.from: .+$/)
    expect(await settings.get(DCV_SETTINGS.httpPort)).toBe('8080')
    expect(await settings.get(DCV_SETTINGS.httpsPort)).toBeNull()
    expect(await settings.get(DCV_SETTINGS.smtpFrom)).toBe('a@example.com')
    expect(await refusal({ [DCV_SETTINGS.httpPort]: '', [DCV_SETTINGS.smtpFrom]: '' })).toBeNull()
    expect(await settings.get(DCV_SETTINGS.httpPort)).toBe('')
  })

  it('refuses a key that is not a setting a person may change', async () => {
    expect(await refusal({ 'dcv.http_prot': '80' })).toMatch(
      /^could not save setting dcv\.http_prot: it is not a setting; known: dcv\.dns_resolver, /
    )
    expect(await refusal({ install_id: 'x' })).toMatch(/install_id: it is not a setting/)
    expect(settingProblems({ constructor: '1' })).toEqual({ constructor: expect.stringMatching(/it is not a setting/) })
  })
})
