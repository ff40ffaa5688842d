/**
 * `certdesk admin store copy --to …`: the whole book copied into an empty PostgreSQL database
 * or a new SQLite file (docs/store.md, "Moving a book"). Progress goes to stderr, one
 * line per table and every tenth of a large one; the answer is one JSON object on stdout. A
 * refusal or a copy that does not match its source is one line on stderr and a sysexits code.
 */
import { cliActionStart } from './cli-audit'
import { commandKey, databaseOf, need, print, UsageError, type Values } from './cli-args'
import { storageFault } from './core/store/store-faults'
import { copyBook, StoreCopyError, type CopyProgress } from './core/store/store-copy'
import { StoreOpenError } from './core/service'

export const STORE_USAGE = `  certdesk admin [--data-dir D | --database URL] store copy --to postgres://user@host/db | --to FILE
                 (the whole book into an empty PostgreSQL database or a new SQLite file, ids kept, then
                  checked: rows per table and every balance against its ledger and the source; the
                  keychain's secrets are not in the store: move them with secrets export / import)`

export const isStoreCommand = (noun: string | undefined): boolean => noun === 'store'

/** sysexits(3): a passing failure (connection lost, disk full): the same command may succeed later. */
const EXIT_TEMPFAIL = 75
const EXIT_SOFTWARE = 70
/** Rows from which a table's progress is shown in tenths as well. */
const LARGE_TABLE = 10_000

/** What the answer says of the secrets, which the store does not hold (docs/store.md). */
export const SECRETS_NOTE =
  "the keychain's secrets (plain API keys, the wrapping keys of the local CA and of kept private keys, EAB HMAC keys, deploy and alert secrets) are not in the store and were not copied. " +
  'The copy keeps the install id, so on this machine it finds them in the same keychain; for another machine run ' +
  '`certdesk admin secrets export --out FILE` here and `certdesk admin --database URL secrets import --from FILE` there. ' +
  'Secrets a team server sealed into its book (rows of sealed_secrets) were copied with it, and open only under the same server keys (--secrets)'

export async function storeAdmin(dataDir: string, words: string[], v: Values): Promise<number> {
  if (commandKey(words) !== 'store copy') throw new UsageError(`unknown command: admin ${words.join(' ')}`)
  const to = need(v, 'to')
  let tenth = -1
  const onProgress = (p: CopyProgress): void => {
    const where = `${p.table} (${p.index + 1}/${p.tables})`
    if (p.rows === p.total) {
      process.stderr.write(`certdesk: copied ${where}: ${p.total} rows\n`)
      tenth = -1
      return
    }
    // A large table also says how far it is, each tenth.
    const now = Math.floor((p.rows / p.total) * 10)
    if (p.total >= LARGE_TABLE && now !== tenth && p.rows > 0)
      process.stderr.write(`certdesk: copying ${where}: ${p.rows} of ${p.total} rows\n`)
    tenth = now
  }
  let result
  try {
    result = await copyBook({
      dataDir,
      database: databaseOf(v),
      to,
      onProgress,
      // The copy's own entry goes into the copy's audit log (the source is never written to).
      audit: { start: cliActionStart(words, v), clock: () => new Date() }
    })
  } catch (err) {
    if (err instanceof StoreOpenError) throw err
    // Whatever else stops a copy mid-way (a lost connection, a full disk, a value the target
    // refuses) is one line too; the copy's transaction was rolled back, so nothing was kept.
    const passing = storageFault(err, 'copy the store')
    const message = (passing ?? (err as Error)).message.split('\n')[0]
    throw new StoreCopyError(
      message.startsWith('could not') ? message : `could not copy the store: ${message}; nothing was kept`,
      passing ? EXIT_TEMPFAIL : EXIT_SOFTWARE
    )
  }
  print({
    success: true,
    from: result.from,
    to: result.to,
    tables: Object.fromEntries(result.tables.map((t) => [t.name, t.rows])),
    rows: result.rows,
    checked: `rows of every table equal the source's; the balances of ${result.resellers} resellers (${(result.balanceCents / 100).toFixed(2)} USD in all) equal their ledger sums and the source's`,
    secrets: SECRETS_NOTE
  })
  return 0
}
