/**
 * Settings the desktop user changes: where domain validation looks (a resolver and the HTTP
 * port, so tests can point them at loopback servers) and the SMTP relay for email DCV. Kept
 * in the settings table, so never a secret: an SMTP URL carrying a password is refused.
 */
import { invalid } from './errors'
import type { Settings } from './settings'

export interface DcvSettings {
  dcvResolver: string
  dcvHttpPort: number
  smtpUrl: string
}

const KEYS = { dcvResolver: 'dcv.resolver', dcvHttpPort: 'dcv.http_port', smtpUrl: 'smtp.url' } as const
/** Empty means the system resolver (the OS's /etc/resolv.conf). */
const DEFAULT_RESOLVER = ''
/** BR §3.2.2.4.18/19: the file must be fetched on port 80 (http) or 443 (https). */
const DEFAULT_HTTP_PORT = 80

export function readDcvSettings(s: Settings): DcvSettings {
  return {
    dcvResolver: s.get(KEYS.dcvResolver) ?? DEFAULT_RESOLVER,
    dcvHttpPort: Number(s.get(KEYS.dcvHttpPort) ?? DEFAULT_HTTP_PORT),
    smtpUrl: s.get(KEYS.smtpUrl) ?? ''
  }
}

export function updateDcvSettings(s: Settings, input: Partial<DcvSettings>): DcvSettings {
  if (input.dcvResolver !== undefined) {
    const r = input.dcvResolver.trim()
    if (r !== '' && !/^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:]+\])(:\d{1,5})?$/.test(r)) {
      throw invalid('could not save the DCV resolver: give an IP address such as 127.0.0.1:5353, or leave it empty')
    }
  }
  if (input.dcvHttpPort !== undefined) {
    if (!Number.isInteger(input.dcvHttpPort) || input.dcvHttpPort < 1 || input.dcvHttpPort > 65535) {
      throw invalid('could not save the DCV HTTP port: it must be a port number from 1 to 65535')
    }
  }
  if (input.smtpUrl !== undefined && input.smtpUrl.trim() !== '') {
    let u: URL
    try {
      u = new URL(input.smtpUrl.trim())
    } catch {
      throw invalid('could not save the SMTP relay: give a URL such as smtp://127.0.0.1:2525')
    }
    if (u.protocol !== 'smtp:' && u.protocol !== 'smtps:') throw invalid('could not save the SMTP relay: the URL must start with smtp:// or smtps://')
    if (u.password) throw invalid('could not save the SMTP relay: a password does not belong in the settings; leave it out of the URL')
  }
  // Validate everything before writing anything, so a bad field changes nothing.
  if (input.dcvResolver !== undefined) s.set(KEYS.dcvResolver, input.dcvResolver.trim())
  if (input.dcvHttpPort !== undefined) s.set(KEYS.dcvHttpPort, String(input.dcvHttpPort))
  if (input.smtpUrl !== undefined) s.set(KEYS.smtpUrl, input.smtpUrl.trim())
  return readDcvSettings(s)
}
