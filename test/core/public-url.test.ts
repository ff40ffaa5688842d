/**
 * The public base URL (core/public-url.ts): what `serve --public-url`, CERTDESK_PUBLIC_URL and the
 * `public.base_url` setting accept, and the one form every shown address is then built from.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { shownAcmeUrls } from '../../src-main/core/acme-server/client-setup'
import { parsePublicUrl, PUBLIC_URL_SETTING, publicUrlOf } from '../../src-main/core/public-url'
import { openService } from '../support/engine'

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

describe('a public base URL', () => {
  it('is written one way: https, the host lower-case, no trailing slash, no default port', () => {
    expect(parsePublicUrl('https://certs.reseller.example')).toEqual({
      base: 'https://certs.reseller.example',
      host: 'certs.reseller.example'
    })
    expect(parsePublicUrl(' https://Certs.Reseller.Example/ ')).toEqual({
      base: 'https://certs.reseller.example',
      host: 'certs.reseller.example'
    })
    expect(parsePublicUrl('https://certs.reseller.example:443/')).toMatchObject({
      base: 'https://certs.reseller.example'
    })
    expect(parsePublicUrl('https://certs.reseller.example:8443')).toMatchObject({
      base: 'https://certs.reseller.example:8443',
      host: 'certs.reseller.example'
    })
  })

  it('refuses what clients could not use or the Host check could not compare', () => {
    const problem = (v: string): string => (parsePublicUrl(v) as { problem: string }).problem
    expect(problem('http://certs.reseller.example')).toMatch(/https:\/\/.*RFC 8555 §6\.1/)
    expect(problem('https://certs.reseller.example/acme')).toMatch(/without a path/)
    expect(problem('https://certs.reseller.example/?x=1')).toMatch(/without a path or query/)
    expect(problem('https://certs.reseller.example/#top')).toMatch(/without a path or query/)
    expect(problem('https://admin:pw@certs.reseller.example')).toMatch(/user or password/)
    expect(problem('https://192.0.2.10')).toMatch(/DNS name/)
    expect(problem('https://[2001:db8::1]')).toMatch(/DNS name/)
    expect(problem('https://certs')).toMatch(/DNS name/)
    expect(problem('certs.reseller.example')).toMatch(/must be a URL/)
    expect(problem(`https://${'a'.repeat(64)}.example`)).toMatch(/DNS name/)
  })

  it('is a setting: refused values change nothing; every shown ACME address follows a saved one', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-public-url-'))
    dirs.push(dataDir)
    const service = await openService({ dataDir })
    try {
      const loopback = await shownAcmeUrls(service.settings, 'http://127.0.0.1:7780')
      expect(loopback.serverUrl).toBe('https://localhost:7781/acme/directory')
      expect(loopback.rootCaUrl).toBe('http://127.0.0.1:7780/acme/root-ca.pem')

      await expect(service.settings.update({ [PUBLIC_URL_SETTING]: 'http://certs.reseller.example' })).rejects.toThrow(
        /could not save setting public\.base_url: must start with https:\/\//
      )
      expect(await service.settings.get(PUBLIC_URL_SETTING)).toBeNull()

      await service.settings.update({ [PUBLIC_URL_SETTING]: 'https://Certs.Reseller.Example:8443/' })
      expect((await publicUrlOf(service.settings))?.base).toBe('https://certs.reseller.example:8443')
      const shown = await shownAcmeUrls(service.settings, 'http://127.0.0.1:7780')
      expect(shown.serverUrl).toBe('https://certs.reseller.example:8443/acme/directory')
      expect(shown.accountUrl(7)).toBe('https://certs.reseller.example:8443/acme/acct/7')
      expect(shown.rootCaUrl).toBe('https://certs.reseller.example:8443/acme/root-ca.pem')
      expect(shown.setupUrl('tok')).toBe('https://certs.reseller.example:8443/acme/setup/tok')

      // Empty means "unset": the loopback addresses again.
      await service.settings.update({ [PUBLIC_URL_SETTING]: '' })
      expect((await shownAcmeUrls(service.settings, 'http://127.0.0.1:7780')).serverUrl).toBe(
        'https://localhost:7781/acme/directory'
      )
    } finally {
      await service.close()
    }
  })
})
