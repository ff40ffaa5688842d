/**
 * `certdesk admin scheduler|settings|ca|acme-issuer …`: the certificate side of the store. The
 * scheduler runs with the clock stopped at `--as-of` (UTC midnight), so a run applies the CA/B
 * Baseline Requirements' validity and reuse dates and the due dates of that day.
 */
import { readFileSync } from 'node:fs'
import { commandKey, databaseOf, need, print, secretSource, UsageError, type Values } from './cli-args'
import { writeNewFileSync } from './core/exclusive-file'
import { openService } from './core/service'
import { EDITABLE_SETTINGS } from './core/settings/settings'
import { fixedClock, isValidDate } from './core/time'

export const CERTIFICATE_USAGE = `  certdesk admin [--data-dir D] scheduler run [--as-of YYYY-MM-DD]
  certdesk admin [--data-dir D] settings get [KEY]
  certdesk admin [--data-dir D] settings set KEY VALUE
  certdesk admin [--data-dir D] ca root [--out FILE]
  certdesk admin [--data-dir D] acme-issuer set --directory URL [--eab-kid KID --eab-hmac-file FILE] [--ca-bundle FILE]
  certdesk admin [--data-dir D] acme-issuer show|off`

export const isCertificateCommand = (noun: string | undefined): boolean =>
  noun === 'scheduler' || noun === 'settings' || noun === 'ca' || noun === 'acme-issuer'

export async function certificateAdmin(dataDir: string, words: string[], v: Values): Promise<number> {
  const key = commandKey(words)
  const rest = words.slice(2)
  let asOf: string | undefined
  if (key === 'scheduler run') {
    asOf = v['as-of']
    if (asOf !== undefined && !isValidDate(asOf)) throw new UsageError('--as-of must be a calendar day, YYYY-MM-DD')
  }
  const service = await openService({
    dataDir,
    database: databaseOf(v),
    secretSource: secretSource(v),
    ...(asOf ? { clock: fixedClock(asOf) } : {})
  })
  try {
    switch (key) {
      case 'scheduler run':
        print({ success: true, ...(await service.scheduler.run()) })
        return 0
      case 'settings get': {
        const keys = rest[0] ? [rest[0]] : EDITABLE_SETTINGS
        const settings: Record<string, string | null> = {}
        for (const k of keys) settings[k] = await service.settings.get(k)
        print({ success: true, settings })
        return 0
      }
      case 'settings set': {
        const [k, value] = rest
        if (!k || value === undefined) throw new UsageError('settings set needs KEY VALUE')
        // The core refuses a value its rule refuses (exit 1, the reason on stderr) and keeps the old one.
        await service.settings.update({ [k]: value })
        print({ success: true, settings: { [k]: value } })
        return 0
      }
      case 'ca root': {
        const pem = await service.localCa.rootPem()
        if (v.out) {
          // A new file only; 0644, as a trust anchor is public and other tools must read it.
          writeNewFileSync(v.out, pem, 'the CA root', 0o644)
          print({
            success: true,
            path: v.out,
            note: 'the local CA root certificate; add it to a trust store to trust what CertDesk issues'
          })
        } else {
          print({ success: true, root_pem: pem })
        }
        return 0
      }
      // The external RFC 8555 CA that TLS orders are issued from. The EAB HMAC key is read from
      // a file, never from the command line (shell history, the process list), and goes to the
      // keychain, never to SQLite.
      case 'acme-issuer set': {
        const hmacFile = v['eab-hmac-file']
        const hmac = hmacFile ? readFileSync(hmacFile, 'utf8').trim() : null
        await service.acmeIssuer.configure(need(v, 'directory'), v['eab-kid'] ?? null, hmac, v['ca-bundle'] ?? null)
        print({ success: true, acme_issuer: await service.acmeIssuer.summary() })
        return 0
      }
      case 'acme-issuer show':
        print({ success: true, acme_issuer: await service.acmeIssuer.summary() })
        return 0
      case 'acme-issuer off':
        await service.acmeIssuer.disable()
        print({ success: true, acme_issuer: await service.acmeIssuer.summary() })
        return 0
      default:
        throw new UsageError(`unknown admin command: ${key || '(none)'}`)
    }
  } finally {
    await service.close()
  }
}
