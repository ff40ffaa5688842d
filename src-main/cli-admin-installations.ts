/**
 * `certdesk admin installations …`, `import …`, `imports …` and `report expiring`: what servers
 * really present for an order, certificates bought elsewhere, and the expiry report. Thin
 * adapters over src-main/core/installations, imports and reports; JSON on stdout like every
 * admin command, CSV to a file with `--out`.
 */
import { readFileSync } from 'node:fs'
import { commandKey, int, need, optionalInt, print, UsageError, type Values } from './cli-args'
import type { ImportOptions } from './core/imports'
import { writeNewFileSync } from './core/exclusive-file'
import type { StartTls } from './core/installations'
import { expiringCsv } from './core/certificates/reports'
import type { Service } from './core/service'

export const INSTALLATION_USAGE = `  certdesk admin [--data-dir D] installations check --order ID
  certdesk admin [--data-dir D] installations show --order ID
  certdesk admin [--data-dir D] installations due
  certdesk admin [--data-dir D] installations endpoint add --order ID --host NAME [--port N] [--address IP] [--starttls smtp|imap|pop3]
  certdesk admin [--data-dir D] installations endpoint remove --order ID --target ID
  certdesk admin [--data-dir D] import files --reseller ID --file F [--file F …] [--password-file P] [--with-keys]
  certdesk admin [--data-dir D] import folder --reseller ID --folder DIR [--password-file P] [--with-keys] [--follow-links]
  certdesk admin [--data-dir D] import endpoints --reseller ID --endpoint HOST:PORT|A.B.C.D/NN:PORT [--endpoint …]
  certdesk admin [--data-dir D] imports list --reseller ID
  certdesk admin [--data-dir D] imports quote|renew --reseller ID --imported ID
  certdesk admin [--data-dir D] report expiring --days N [--reseller ID] [--out FILE.csv]`

export const isInstallationCommand = (noun: string | undefined): boolean =>
  noun === 'installations' || noun === 'import' || noun === 'imports' || noun === 'report'

/** Exit 1 when a check found a problem, so a cron job notices. */
export async function installationAdmin(service: Service, words: string[], v: Values): Promise<number> {
  const inst = service.installations
  const key = words[1] === 'endpoint' ? `${commandKey(words)} ${words[2] ?? ''}` : commandKey(words)
  switch (key) {
    case 'installations check': {
      const orderId = int(v, 'order')
      const report = await inst.check(await inst.ownerOf(orderId), orderId)
      print({ success: true, installation: report })
      return report.verdict === 'ok' ? 0 : 1
    }
    case 'installations show': {
      const orderId = int(v, 'order')
      print({ success: true, installation: await inst.report(await inst.ownerOf(orderId), orderId) })
      return 0
    }
    case 'installations due':
      print({ success: true, checked: await inst.checkDue(1000) })
      return 0
    case 'installations endpoint add': {
      const orderId = int(v, 'order')
      const starttls = v.starttls as StartTls | undefined
      const endpoint = await inst.addEndpoint(await inst.ownerOf(orderId), orderId, {
        host: need(v, 'host'),
        port: v.port === undefined ? undefined : Number(v.port),
        address: v.address ?? null,
        starttls: starttls ?? null
      })
      print({ success: true, endpoint })
      return 0
    }
    case 'installations endpoint remove': {
      const orderId = int(v, 'order')
      await inst.removeEndpoint(await inst.ownerOf(orderId), orderId, int(v, 'target'))
      print({ success: true })
      return 0
    }
    case 'import files': {
      const files = v.file ?? []
      if (files.length === 0) throw new UsageError('--file is required')
      print({ success: true, ...(await service.imports.importFiles(int(v, 'reseller'), files, importOptions(v))) })
      return 0
    }
    case 'import folder':
      print({
        success: true,
        ...(await service.imports.importFolder(int(v, 'reseller'), need(v, 'folder'), importOptions(v)))
      })
      return 0
    case 'import endpoints': {
      const specs = v.endpoint ?? []
      if (specs.length === 0) throw new UsageError('--endpoint is required')
      print({ success: true, ...(await service.imports.importEndpoints(int(v, 'reseller'), specs)) })
      return 0
    }
    case 'imports list':
      print({ success: true, imported: await service.imports.list(int(v, 'reseller')) })
      return 0
    case 'imports quote':
      print({
        success: true,
        replacement: await service.imports.replacementQuote(int(v, 'reseller'), int(v, 'imported'))
      })
      return 0
    case 'imports renew': {
      const created = await service.imports.renew(int(v, 'reseller'), int(v, 'imported'))
      print({ success: true, order: created.order, credit_used: created.creditUsed, new_balance: created.newBalance })
      return 0
    }
    case 'report expiring': {
      const rows = await service.reports.expiring({
        days: int(v, 'days'),
        resellerId: optionalInt(v, 'reseller') ?? null
      })
      if (v.out) {
        // A new file only: an existing one (perhaps another report, perhaps not a report) stays.
        writeNewFileSync(v.out, expiringCsv(rows), 'the report')
        print({ success: true, rows: rows.length, out: v.out })
      } else print({ success: true, certificates: rows })
      return 0
    }
    default:
      throw new UsageError(`unknown command ${words.join(' ')}`)
  }
}

/** The PFX password comes from a file (never the command line, which other users can read). */
function importOptions(v: Values): ImportOptions {
  const file = v['password-file']
  return {
    password: file ? readFileSync(file, 'utf8').replace(/\r?\n$/, '') : undefined,
    withKeys: Boolean(v['with-keys']),
    followLinks: Boolean(v['follow-links'])
  }
}
