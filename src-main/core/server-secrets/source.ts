/**
 * Where a server's keys come from when there is no desktop keychain: a file only the server's
 * user can read (`--secrets file:/etc/certdesk/secrets`), or a systemd credential
 * (`--secrets systemd`: `$CREDENTIALS_DIRECTORY/certdesk-secrets`, which `LoadCredentialEncrypted=`
 * decrypts into a private, unswappable mount for the service alone). Both hold the same text,
 * one `name=value` line per key, so the file `certdesk admin secrets init` makes is what either
 * one is given, and every node of a team is given the same one.
 *
 * The file is refused when anyone but its owner may read or change it, when it is not owned by
 * the user CertDesk runs as, when its folder may be changed by others (they could swap the file),
 * and when it lies inside the data dir (a copy of the data dir alone must never decrypt anything).
 * These are OpenSSH's StrictModes rules for a private key, for the same reasons.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, realpathSync, statSync } from 'node:fs'
import { dirname, isAbsolute, join, relative, sep } from 'node:path'
import { invalid, ServiceError } from '../errors'
import { replaceFileSync } from '../exclusive-file'

/** What `--secrets` (or `CERTDESK_SECRETS`) names. */
export type SecretSourceSpec = { kind: 'keychain' } | { kind: 'file'; path: string } | { kind: 'systemd' }

/** The credential name `LoadCredentialEncrypted=` gives the file (systemd.exec(5), "Credentials"). */
export const SYSTEMD_CREDENTIAL = 'certdesk-secrets'

/** The secrets file holds a few keys; anything larger is not one. */
export const MAX_SECRETS_FILE_BYTES = 64 * 1024

const NAME = /^[a-z0-9][a-z0-9:._/-]{0,127}$/
const VALUE = /^[A-Za-z0-9+/=_-]{1,4096}$/

/** Reads `--secrets`: `keychain`, `file:/absolute/path` or `systemd`. */
export function parseSecretSource(value: string): SecretSourceSpec {
  const v = value.trim()
  if (v === 'keychain') return { kind: 'keychain' }
  if (v === 'systemd') return { kind: 'systemd' }
  if (v.startsWith('file:')) {
    const path = v.slice('file:'.length)
    if (!isAbsolute(path))
      throw invalid(
        `--secrets file: needs an absolute path, such as file:/etc/certdesk/secrets, not ${JSON.stringify(path)}`
      )
    return { kind: 'file', path }
  }
  throw invalid(`--secrets must be keychain, file:/absolute/path or systemd, not ${JSON.stringify(v.slice(0, 60))}`)
}

/** A source of a server's keys, read afresh on every call (a replaced file counts at once). */
export interface KeySource {
  /** `the secrets file /etc/certdesk/secrets`, for messages. */
  readonly describe: string
  /** Every key by name; throws ServiceError('unavailable') saying what is wrong with the source. */
  read(): Map<string, string>
  /**
   * Adds or replaces keys and removes those set to null, at once (atomically). A source that
   * cannot be written (a systemd credential) refuses, saying how to provision the key instead.
   */
  write(changes: Map<string, string | null>): void
}

/** The `name=value` text of a source; comments start with #. */
export function parseKeys(text: string, where: string): Map<string, string> {
  const keys = new Map<string, string>()
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) return
    const eq = line.indexOf('=')
    const name = eq < 0 ? '' : line.slice(0, eq).trim()
    const value = eq < 0 ? '' : line.slice(eq + 1).trim()
    // Never the line itself in the message: it may be a key.
    if (!NAME.test(name) || !VALUE.test(value))
      throw unavailable(`${where}, line ${i + 1}, is not name=value with a base64 value`)
    if (keys.has(name)) throw unavailable(`${where} names ${name} twice`)
    keys.set(name, value)
  })
  return keys
}

export function formatKeys(keys: Map<string, string>): string {
  const lines = [...keys].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`)
  return [
    '# CertDesk server secrets: the keys this server (every node of it) reads. Keep this file',
    '# mode 0600, owned by the user CertDesk runs as, outside the data dir, and back it up apart',
    '# from the database. docs/team-server.md says how to make, copy and provision it.',
    ...lines,
    ''
  ].join('\n')
}

const unavailable = (why: string): ServiceError =>
  new ServiceError('unavailable', `could not read the server secrets: ${why}`)

/**
 * Reads a whole file through one descriptor, opened without following a final link when asked
 * and without blocking (a FIFO named as the file must not hang the server), checked as a regular
 * file of bounded size before a byte is read.
 */
function readBounded(path: string, where: string): { text: string; uid: number; mode: number } {
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    throw unavailable(code === 'ENOENT' ? `${where} does not exist` : `${where} cannot be opened (${code ?? 'error'})`)
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) throw unavailable(`${where} is not a regular file`)
    if (st.size > MAX_SECRETS_FILE_BYTES) throw unavailable(`${where} is larger than ${MAX_SECRETS_FILE_BYTES} bytes`)
    const buf = Buffer.alloc(st.size)
    let at = 0
    while (at < buf.length) {
      const n = readSync(fd, buf, at, buf.length - at, at)
      if (n === 0) break
      at += n
    }
    return { text: buf.subarray(0, at).toString('utf8'), uid: st.uid, mode: st.mode }
  } finally {
    closeSync(fd)
  }
}

const isInside = (child: string, parent: string): boolean => {
  const rel = relative(parent, child)
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))
}

/** `file:PATH`: read on every call, written atomically (a new 0600 file renamed over the old). */
export class FileKeySource implements KeySource {
  readonly describe: string

  constructor(
    private readonly path: string,
    private readonly dataDir: string,
    /** The user the file must belong to: the one CertDesk runs as. */
    private readonly uid: number = process.geteuid?.() ?? -1
  ) {
    this.describe = `the secrets file ${path}`
  }

  read(): Map<string, string> {
    const real = this.checkPlace()
    let file
    try {
      file = readBounded(real, this.describe)
    } catch (err) {
      // No file yet: no keys yet. The first key CertDesk must make creates it (write).
      if (err instanceof ServiceError && /does not exist$/.test(err.message)) return new Map()
      throw err
    }
    this.checkOwnerAndMode(file.uid, file.mode)
    return parseKeys(file.text, this.describe)
  }

  write(changes: Map<string, string | null>): void {
    const keys = this.read()
    for (const [name, value] of changes) {
      if (value === null) keys.delete(name)
      else if (!NAME.test(name) || !VALUE.test(value))
        throw invalid(`could not keep ${name} in ${this.describe}: it is not a key name and base64 value`)
      else keys.set(name, value)
    }
    // Through the real path: a link to the file (a config manager's) stays a link to the new content.
    replaceFileSync(this.resolvedTarget(), formatKeys(keys), this.describe)
  }

  /** The file's real path, refused inside the data dir or in a folder others may change. */
  private checkPlace(): string {
    const real = this.resolvedTarget()
    let dataDir = this.dataDir
    try {
      dataDir = realpathSync(this.dataDir)
    } catch {
      // a data dir not made yet holds nothing
    }
    if (isInside(real, dataDir) || isInside(this.path, this.dataDir)) {
      throw unavailable(
        `${this.describe} is inside the data dir ${this.dataDir}; keep it elsewhere (such as /etc/certdesk/secrets), so that a copy of the data dir alone decrypts nothing`
      )
    }
    const folder = dirname(real)
    let st
    try {
      st = statSync(folder)
    } catch {
      throw unavailable(`the folder of ${this.describe} does not exist`)
    }
    // Others able to write the folder can replace the file with theirs (sticky /tmp aside, still refused).
    if ((st.mode & 0o022) !== 0 || (st.uid !== this.uid && st.uid !== 0)) {
      throw unavailable(
        `others may change the folder ${folder} of ${this.describe} (mode ${(st.mode & 0o7777).toString(8)}, owner uid ${st.uid}); keep it in a folder only root or uid ${this.uid} may write`
      )
    }
    return real
  }

  private checkOwnerAndMode(uid: number, mode: number): void {
    if (this.uid >= 0 && uid !== this.uid) {
      throw unavailable(
        `${this.describe} belongs to uid ${uid}, not to the user CertDesk runs as (uid ${this.uid}); chown it to that user`
      )
    }
    if ((mode & 0o077) !== 0) {
      throw unavailable(
        `group or others may read or change ${this.describe} (mode ${(mode & 0o777).toString(8)}); chmod 600 it`
      )
    }
  }

  /** The target to read and replace: the end of a symlink chain, or the path itself when nothing is there yet. */
  private resolvedTarget(): string {
    try {
      return realpathSync(this.path)
    } catch {
      try {
        lstatSync(this.path)
      } catch {
        // Not there yet: it is made at this path (inside its real folder).
        try {
          return join(realpathSync(dirname(this.path)), this.path.split(sep).pop() as string)
        } catch {
          return this.path
        }
      }
      throw unavailable(`${this.describe} is a link to nothing`)
    }
  }
}

/**
 * `systemd`: the credential systemd decrypted for this service (`LoadCredentialEncrypted=`), read
 * once; read-only, since systemd makes it anew from the encrypted file at each start.
 */
export class SystemdKeySource implements KeySource {
  readonly describe: string
  private keys: Map<string, string> | null = null
  private readonly file: string | null

  constructor(credentialsDirectory: string | undefined) {
    this.file = credentialsDirectory ? join(credentialsDirectory, SYSTEMD_CREDENTIAL) : null
    this.describe = `the systemd credential ${SYSTEMD_CREDENTIAL}`
  }

  read(): Map<string, string> {
    if (this.keys) return this.keys
    if (!this.file) {
      throw unavailable(
        `$CREDENTIALS_DIRECTORY is not set: run CertDesk from its systemd unit with LoadCredentialEncrypted=${SYSTEMD_CREDENTIAL} (docs/team-server.md)`
      )
    }
    const file = readBounded(this.file, this.describe)
    this.keys = parseKeys(file.text, this.describe)
    return this.keys
  }

  write(changes: Map<string, string | null>): void {
    const names = [...changes.keys()].join(', ')
    throw new ServiceError(
      'unavailable',
      `could not keep ${names} in ${this.describe}: systemd credentials are read-only. ` +
        'Make every server key once with `certdesk admin secrets init --out FILE`, then ' +
        `\`systemd-creds encrypt --name=${SYSTEMD_CREDENTIAL} FILE /etc/credstore.encrypted/${SYSTEMD_CREDENTIAL}\` ` +
        `and restart the unit (LoadCredentialEncrypted=${SYSTEMD_CREDENTIAL}); docs/team-server.md`
    )
  }
}
