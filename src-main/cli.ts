/**
 * The `certdesk` command: `serve` runs the service and the reseller API without Electron;
 * `admin …` changes the store and prints JSON. Admin commands work while `serve` runs on the
 * same store (SQLite WAL, or PostgreSQL). bin/certdesk.cjs requires this module and exits with
 * what `main` returns: 0, 1 when the core refused, 2 on a usage error, and a sysexits code
 * (64, 69, 77, 78) when the PostgreSQL store named by --database cannot be opened.
 */
import { ACCOUNT_USAGE, accountAdmin } from './cli-admin-accounts'
import { ADMINS_USAGE, adminsAdmin, isAdminsCommand } from './cli-admin-admins'
import { ALERTS_USAGE, alertsAdmin, isAlertsCommand } from './cli-admin-alerts'
import { BACKUP_USAGE, backupAdmin, isBackupCommand, isBooklessCommand } from './cli-admin-backup'
import { CERTIFICATE_USAGE, certificateAdmin, isCertificateCommand } from './cli-admin-certificates'
import { DEPLOY_USAGE, deployAdmin, isDeployCommand } from './cli-admin-deploy'
import { databaseOf, parse, secretSource, UsageError } from './cli-args'
import { audited } from './cli-audit'
import { INSTALLATION_USAGE, installationAdmin, isInstallationCommand } from './cli-admin-installations'
import { isRenewalCommand, RENEWAL_USAGE, renewalAdmin } from './cli-admin-renewal'
import { SERVE_USAGE, serve } from './cli-serve'
import { isStoreCommand, STORE_USAGE, storeAdmin } from './cli-admin-store'
import { ServiceError } from './core/errors'
import { storageFault } from './core/store/store-faults'
import { defaultDataDir } from './core/paths'
import { openService, StoreOpenError } from './core/service'
import { fixedClock } from './core/time'

const USAGE = `usage:
${SERVE_USAGE}
${ACCOUNT_USAGE}
${CERTIFICATE_USAGE}
${DEPLOY_USAGE}
${INSTALLATION_USAGE}
${BACKUP_USAGE}
${STORE_USAGE}
${RENEWAL_USAGE}
${ALERTS_USAGE}
${ADMINS_USAGE}
  Headless Linux (no desktop keyring): [--keyring-dir D] [--keyring-password-file F] on any command
  choose the private keyring's folder (outside the data dir) and the file holding its password.
  PostgreSQL: [--database postgres://user@host/db] on any command (or CERTDESK_DATABASE) keeps the
  book in that database instead of the data dir's SQLite file.
  A server: [--secrets file:/etc/certdesk/secrets | --secrets systemd] on any command (or CERTDESK_SECRETS)
  reads its keys from that file or systemd credential instead of a keychain (docs/team-server.md).`

export async function main(argv: string[]): Promise<number> {
  let parsed
  try {
    parsed = parse(argv)
  } catch (err) {
    process.stderr.write(`certdesk: ${(err as Error).message}\n${USAGE}\n`)
    return 2
  }
  const { values, positionals } = parsed
  if (values.help || positionals.length === 0) {
    process.stdout.write(`${USAGE}\n`)
    return values.help ? 0 : 2
  }
  const dataDir = values['data-dir'] ?? defaultDataDir()
  try {
    if (positionals[0] === 'serve') return await serve(dataDir, values)
    // `admin store copy` opens its source and its target itself.
    if (positionals[0] === 'admin' && isStoreCommand(positionals[1]))
      return await storeAdmin(dataDir, positionals.slice(1), values)
    if (positionals[0] === 'admin') {
      const words = positionals.slice(1)
      if (isBooklessCommand(words)) return await backupAdmin(dataDir, words, values)
      // Every admin command is an admin action: kept in the audit log before it runs (cli-audit.ts).
      return await audited(dataDir, words, values, async () => {
        // These open the store themselves: the scheduler with its own `--as-of` day.
        if (isCertificateCommand(words[0])) return await certificateAdmin(dataDir, words, values)
        // Backup and restore: backup and restore open the store themselves (restore into an empty dir).
        if (isBackupCommand(words[0])) return await backupAdmin(dataDir, words, values)
        // `--as-of` moves the clock of the others too (`deploy retry` as of a later time).
        const service = await openService({
          dataDir,
          database: databaseOf(values),
          clock: values['as-of'] ? fixedClock(values['as-of']) : undefined,
          secretSource: secretSource(values)
        })
        try {
          if (isDeployCommand(words[0])) return await deployAdmin(service, words, values)
          if (isInstallationCommand(words[0])) return await installationAdmin(service, words, values)
          if (isRenewalCommand(words[0])) return await renewalAdmin(service, words, values)
          if (isAlertsCommand(words[0])) return await alertsAdmin(service, words, values)
          if (isAdminsCommand(words[0])) return await adminsAdmin(service, words, values)
          return await accountAdmin(service, words, values)
        } finally {
          await service.close()
        }
      })
    }
    throw new UsageError(`unknown command ${positionals[0]}`)
  } catch (err) {
    // A wrong URL, a refused password, a server that does not answer: one line, never a stack.
    if (err instanceof StoreOpenError) {
      process.stderr.write(`certdesk: ${err.message}\n`)
      return err.exitCode
    }
    if (err instanceof UsageError) {
      process.stderr.write(`certdesk: ${err.message}\n${USAGE}\n`)
      return 2
    }
    if (err instanceof ServiceError || err instanceof RangeError) {
      process.stderr.write(`${JSON.stringify({ success: false, error: err.message })}\n`)
      return 1
    }
    // A full disk, a failing write, a store locked past the busy timeout: say so, and that a retry will do.
    const fault = storageFault(err)
    if (fault) {
      process.stderr.write(`${JSON.stringify({ success: false, error: fault.message })}\n`)
      return 1
    }
    throw err
  }
}
