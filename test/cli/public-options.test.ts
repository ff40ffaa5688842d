/**
 * How `certdesk serve` reads the public listener's options: flags first, then the environment
 * (CERTDESK_PUBLIC_URL, CERTDESK_PUBLIC_LISTEN, CERTDESK_TLS_CERT, CERTDESK_TLS_KEY), and which
 * combinations are a usage error (exit 2) before anything starts.
 */
import { describe, expect, it } from 'vitest'
import { parse, UsageError } from '../../src-main/cli-args'
import { listenAddress, publicOptions } from '../../src-main/cli-serve'

const opts = (argv: string[], env: NodeJS.ProcessEnv = {}) => publicOptions(parse(['serve', ...argv]).values, env)

describe('serve’s public listener options', () => {
  it('are absent unless a public URL or address is given', () => {
    expect(opts([])).toBeUndefined()
  })

  it('come from the environment, and a flag wins over it', () => {
    const env = {
      CERTDESK_PUBLIC_URL: 'https://env.reseller.example',
      CERTDESK_PUBLIC_LISTEN: '0.0.0.0:8443',
      CERTDESK_TLS_CERT: '/etc/certdesk/tls/fullchain.pem',
      CERTDESK_TLS_KEY: '/etc/certdesk/tls/privkey.pem'
    }
    expect(opts([], env)).toEqual({
      url: 'https://env.reseller.example',
      listen: { host: '0.0.0.0', port: 8443 },
      tlsFiles: { cert: '/etc/certdesk/tls/fullchain.pem', key: '/etc/certdesk/tls/privkey.pem' },
      resellerApi: false,
      ui: false,
      rateLimit: undefined
    })
    expect(
      opts(['--public-url', 'https://flag.reseller.example', '--public-listen', '[::]:443', '--public-api'], env)
    ).toMatchObject({
      url: 'https://flag.reseller.example',
      listen: { host: '::', port: 443 },
      resellerApi: true
    })
  })

  it('take a rate per address, 0 for none', () => {
    expect(opts(['--public-listen', '0.0.0.0:443', '--public-rate-limit', '10'])?.rateLimit).toEqual({
      perSecond: 10,
      burst: 40
    })
    expect(opts(['--public-listen', '0.0.0.0:443', '--public-rate-limit', '0'])?.rateLimit).toBeNull()
    expect(() => opts(['--public-listen', '0.0.0.0:443', '--public-rate-limit', '1.5'])).toThrow(UsageError)
  })

  it('refuse what cannot start: a bad address, half a pair, listener options without a listener', () => {
    for (const bad of ['0.0.0.0', '0.0.0.0:99999', ':443', 'host:port', '[::1:443']) {
      expect(() => listenAddress(bad), bad).toThrow(/--public-listen must be ADDR:PORT/)
    }
    expect(() => opts(['--public-listen', '0.0.0.0:443', '--tls-cert', '/x.pem'])).toThrow(
      '--tls-cert and --tls-key go together'
    )
    for (const flag of [['--public-api'], ['--public-ui'], ['--tls-cert', '/a', '--tls-key', '/b']]) {
      expect(() => opts(['--public-url', 'https://certs.reseller.example', ...flag])).toThrow(/need --public-listen/)
    }
  })
})
