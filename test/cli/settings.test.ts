import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { certdesk } from '../support/cli'

const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-cli-settings-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))
const settings = (...args: string[]) => certdesk(['admin', '--data-dir', dataDir, 'settings', ...args])

describe('certdesk admin settings', () => {
  it('refuses an out-of-range port and a sender that is not an email with the reason and a non-zero exit, keeping the old values', () => {
    expect(settings('set', 'dcv.http_port', '8080').code).toBe(0)
    expect(settings('set', 'smtp.from', 'certs@example.com').code).toBe(0)

    const port = settings('set', 'dcv.http_port', '99999')
    expect(port.code).toBe(1)
    expect(port.json).toEqual({
      success: false,
      error: 'could not save setting dcv.http_port: must be a port number from 1 to 65535, not "99999"'
    })
    const sender = settings('set', 'smtp.from', 'not an email')
    expect(sender.code).toBe(1)
    expect(sender.json.error).toMatch(/^could not save setting smtp\.from: must be an email address/)
    const header = settings('set', 'smtp.from', 'certs@example.com\r\nBcc: everyone@example.org')
    expect(header.code).toBe(1)

    expect(settings('get').json.settings).toMatchObject({ 'dcv.http_port': '8080', 'smtp.from': 'certs@example.com' })
  })

  it('takes a good value, and empty for the default', () => {
    expect(settings('set', 'dcv.https_port', '8443').json).toEqual({
      success: true,
      settings: { 'dcv.https_port': '8443' }
    })
    expect(settings('set', 'dcv.https_port', '').code).toBe(0)
    expect(settings('get', 'dcv.https_port').json.settings).toEqual({ 'dcv.https_port': '' })
    const unknown = settings('set', 'dcv.http_prot', '80')
    expect(unknown.code).toBe(1)
    expect(unknown.json.error).toMatch(/dcv\.http_prot: it is not a setting/)
  })
})
