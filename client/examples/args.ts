/**
 * What every example script reads first: where CertDesk is and the API key (environment), and
 * its own `--name value` options. Kept apart so each script shows only its work.
 */
import { certDesk, DEFAULT_BASE_URL, type CertDeskClient } from '../index'

export function connect(): CertDeskClient {
  const apiKey = process.env.CERTDESK_API_KEY
  if (!apiKey) {
    process.stderr.write('set CERTDESK_API_KEY to your reseller API key (cdk_…)\n')
    process.exit(64)
  }
  return certDesk({ baseUrl: process.env.CERTDESK_URL ?? DEFAULT_BASE_URL, apiKey })
}

/** `--domain shop.example.com --days 30` → { domain: 'shop.example.com', days: '30' } */
export function options(names: readonly string[]): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {}
  const argv = process.argv.slice(2)
  for (let i = 0; i < argv.length; i += 1) {
    const name = argv[i].replace(/^--/, '')
    if (!argv[i].startsWith('--') || !names.includes(name)) {
      process.stderr.write(`unknown option ${argv[i]}; options: ${names.map((n) => `--${n}`).join(' ')}\n`)
      process.exit(64)
    }
    out[name] = argv[i + 1]
    i += 1
  }
  return out
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
