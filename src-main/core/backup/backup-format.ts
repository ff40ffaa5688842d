/**
 * The backup file: the store's SQLite image inside an envelope whose last 32 bytes are an
 * HMAC-SHA256 (RFC 2104, FIPS 198-1) over every byte before them, under a key that is not in
 * the file. Restore checks that code before it uses a single byte of the store, so a file
 * changed on the backup disk (a command deploy target or an SQL trigger added, one bit flipped
 * in a certificate) is refused as a whole.
 *
 *   offset 0   16 bytes  "CertDesk backup\n"
 *   16         4 bytes   header length L, big-endian, at most 64 KiB
 *   20         L bytes   header, JSON (format, version, how it is authenticated, install id,
 *                        store version, payload length, KDF parameters for a passphrase)
 *   20 + L     P bytes   the SQLite store (journal mode DELETE, one self-contained file)
 *   end - 32   32 bytes  HMAC-SHA256 over bytes 0 .. end - 33
 *
 * The key is either the backup key of the data dir's keychain entry (random, 256 bits, made on
 * the first backup) or one derived from a passphrase with scrypt (RFC 7914; N = 2^17, r = 8,
 * p = 1, a random 16-byte salt in the header) for a backup that moves to another machine. The
 * file is authenticated, not encrypted: the store holds no secret (secrets-export.ts).
 */
import { createHmac, randomBytes, scrypt as scryptCb, timingSafeEqual, type Hmac } from 'node:crypto'
import type { FileHandle } from 'node:fs/promises'
import { promisify } from 'node:util'
import { secretOnce } from '../cluster/leadership'
import { invalid, type ServiceError } from '../errors'
import type { SecretStore } from '../secrets'
import type { Store } from '../store'

const MAGIC = Buffer.from('CertDesk backup\n', 'latin1')
const FORMAT = 'certdesk-backup'
export const BACKUP_FORMAT_VERSION = 1
const PREFIX_BYTES = MAGIC.length + 4
const MAX_HEADER_BYTES = 64 * 1024
const TAG_BYTES = 32
/** Read and write in 1 MiB steps, so a large store never sits in memory whole. */
const CHUNK = 1024 * 1024
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1')

/** The keychain entry of a data dir's backup key. */
export const BACKUP_KEY_SECRET = 'backup:hmac-key'
/** scrypt cost for a passphrase backup (RFC 7914 §2's guidance, raised for a file kept long). */
const SCRYPT = { N: 131_072, r: 8, p: 1 } as const
/** Most work a backup may ask of restore, so a crafted header cannot make it run for hours. */
const MAX_SCRYPT_N = 1_048_576
/** A passphrase guessable in an afternoon protects nothing kept on a backup disk. */
export const MIN_BACKUP_PASSPHRASE_LENGTH = 12

export type BackupAuthKind = 'keychain' | 'passphrase'

export interface BackupHeader {
  format: typeof FORMAT
  version: number
  auth: BackupAuthKind
  install_id: string
  store_version: number
  created_at: string
  payload_bytes: number
  mac: 'hmac-sha256'
  /** Keychain backups: which backup key made it (not secret; tells "another key" from "changed"). */
  key_id?: string
  /** Passphrase backups: how the key is derived. */
  kdf?: { name: 'scrypt'; N: number; r: number; p: number; salt: string }
}

/** A key to write a backup with, and what goes into the header about it. */
export interface BackupKey {
  key: Buffer
  header: Pick<BackupHeader, 'auth' | 'key_id' | 'kdf'>
}

const scrypt = promisify(scryptCb) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number }
) => Promise<Buffer>

const deriveKey = (passphrase: string, salt: Buffer, k: { N: number; r: number; p: number }): Promise<Buffer> =>
  scrypt(passphrase.normalize('NFC'), salt, 32, { N: k.N, r: k.r, p: k.p, maxmem: 256 * k.N * k.r + 1024 * 1024 })

const keyId = (key: Buffer): string =>
  createHmac('sha256', key).update('certdesk backup key id').digest().subarray(0, 8).toString('hex')

/**
 * The data dir's backup key from its keychain, made on the first backup. Read-or-create under
 * SQLite's write lock, so the CLI and the app backing up at the same moment make one key.
 */
export async function keychainBackupKey(db: Store, secrets: SecretStore): Promise<BackupKey> {
  // Made once, by one process, even when the nodes of a team back up together (cluster/leadership.ts).
  const b64 = await secretOnce({ store: db, secrets }, BACKUP_KEY_SECRET, () => randomBytes(32).toString('base64'))
  const key = Buffer.from(b64, 'base64')
  return { key, header: { auth: 'keychain', key_id: keyId(key) } }
}

/** A key from `passphrase` and a new salt, for a backup that moves to another machine. */
export async function passphraseBackupKey(passphrase: string): Promise<BackupKey> {
  if (passphrase.length < MIN_BACKUP_PASSPHRASE_LENGTH)
    throw invalid(
      `could not write the backup: the passphrase must be at least ${MIN_BACKUP_PASSPHRASE_LENGTH} characters`
    )
  const salt = randomBytes(16)
  return {
    key: await deriveKey(passphrase, salt, SCRYPT),
    header: { auth: 'passphrase', kdf: { name: 'scrypt', ...SCRYPT, salt: salt.toString('base64') } }
  }
}

/** Writes the envelope around the SQLite file open as `payload` to `out`, from its first byte. */
export async function writeBackup(
  out: FileHandle,
  payload: FileHandle,
  key: BackupKey,
  about: Pick<BackupHeader, 'install_id' | 'store_version' | 'created_at'>
): Promise<number> {
  const { size } = await payload.stat()
  const header: BackupHeader = {
    format: FORMAT,
    version: BACKUP_FORMAT_VERSION,
    ...key.header,
    ...about,
    payload_bytes: size,
    mac: 'hmac-sha256'
  }
  const json = Buffer.from(JSON.stringify(header), 'utf8')
  const length = Buffer.alloc(4)
  length.writeUInt32BE(json.length)
  const mac = createHmac('sha256', key.key)
  let written = 0
  const put = async (bytes: Buffer): Promise<void> => {
    mac.update(bytes)
    for (let at = 0; at < bytes.length;) at += (await out.write(bytes, at, bytes.length - at)).bytesWritten
    written += bytes.length
  }
  await put(Buffer.concat([MAGIC, length, json]))
  const buf = Buffer.alloc(CHUNK)
  for (let pos = 0; pos < size;) {
    const { bytesRead } = await payload.read(buf, 0, Math.min(CHUNK, size - pos), pos)
    if (bytesRead === 0) throw new Error('could not read the store copy: it ended early')
    await put(buf.subarray(0, bytesRead))
    pos += bytesRead
  }
  const tag = mac.digest()
  for (let at = 0; at < tag.length;) at += (await out.write(tag, at, tag.length - at)).bytesWritten
  return written + tag.length
}

/** What the first bytes of a file say it is. */
export type BackupKind = { kind: 'envelope'; header: BackupHeader } | { kind: 'bare-sqlite' }

/**
 * Reads and checks the prefix and header of the file open as `file` (named `name` in messages).
 * The header is not trusted yet: only its shape is checked here, its bytes by the code later.
 */
export async function readBackupKind(file: FileHandle, name: string): Promise<BackupKind> {
  const bad = (why: string): ServiceError => invalid(`could not restore ${name}: ${why}`)
  const { size } = await file.stat()
  const head = Buffer.alloc(PREFIX_BYTES)
  const { bytesRead } = await file.read(head, 0, PREFIX_BYTES, 0)
  if (bytesRead >= SQLITE_HEADER.length && head.subarray(0, SQLITE_HEADER.length).equals(SQLITE_HEADER))
    return { kind: 'bare-sqlite' }
  if (bytesRead < PREFIX_BYTES || !head.subarray(0, MAGIC.length).equals(MAGIC))
    throw bad('it is not a CertDesk backup')
  const length = head.readUInt32BE(MAGIC.length)
  if (length === 0 || length > MAX_HEADER_BYTES || PREFIX_BYTES + length + TAG_BYTES > size)
    throw bad('its header is not one CertDesk writes')
  const json = Buffer.alloc(length)
  await file.read(json, 0, length, PREFIX_BYTES)
  let h: BackupHeader
  try {
    h = JSON.parse(json.toString('utf8')) as BackupHeader
  } catch {
    throw bad('its header is not one CertDesk writes')
  }
  if (!h || typeof h !== 'object' || h.format !== FORMAT) throw bad('its header is not one CertDesk writes')
  if (h.version !== BACKUP_FORMAT_VERSION)
    throw bad(`it has backup format version ${String(h.version)}; this CertDesk reads version ${BACKUP_FORMAT_VERSION}`)
  const kdfOk =
    h.auth === 'passphrase'
      ? !!h.kdf &&
        h.kdf.name === 'scrypt' &&
        Number.isInteger(h.kdf.N) &&
        h.kdf.N >= 2 &&
        h.kdf.N <= MAX_SCRYPT_N &&
        (h.kdf.N & (h.kdf.N - 1)) === 0 &&
        Number.isInteger(h.kdf.r) &&
        h.kdf.r >= 1 &&
        h.kdf.r <= 32 &&
        Number.isInteger(h.kdf.p) &&
        h.kdf.p >= 1 &&
        h.kdf.p <= 16 &&
        typeof h.kdf.salt === 'string'
      : h.auth === 'keychain' && typeof h.key_id === 'string'
  if (
    !kdfOk ||
    h.mac !== 'hmac-sha256' ||
    typeof h.install_id !== 'string' ||
    !/^[A-Za-z0-9-]{1,64}$/.test(h.install_id) ||
    !Number.isSafeInteger(h.store_version) ||
    !Number.isSafeInteger(h.payload_bytes) ||
    h.payload_bytes < 0
  )
    throw bad('its header is not one CertDesk writes')
  if (PREFIX_BYTES + length + h.payload_bytes + TAG_BYTES !== size)
    throw bad(
      `it is not the file CertDesk wrote (its length does not match its header: it was cut short or changed); nothing was restored`
    )
  return { kind: 'envelope', header: h }
}

/** Where a backup's key comes from when it is restored. */
export interface RestoreKeys {
  /** The keychain of the data dir a backup was made from (its install id is in the header). */
  keychainFor(installId: string): SecretStore | Promise<SecretStore>
  /** Said in the refusal when that keychain has no key for the backup (e.g. "--secrets FILE"). */
  keychainHint?: string
  /** Asked for only when the backup was made with a passphrase. */
  passphrase(): Promise<string>
}

/** The key a backup with `header` was made with, or a refusal that says where to find it. */
export async function keyForRestore(header: BackupHeader, keys: RestoreKeys, name: string): Promise<Buffer> {
  if (header.auth === 'passphrase') {
    const kdf = header.kdf as NonNullable<BackupHeader['kdf']>
    return deriveKey(await keys.passphrase(), Buffer.from(kdf.salt, 'base64'), kdf)
  }
  const elsewhere =
    `restore it on the machine that made it${keys.keychainHint ? `, ${keys.keychainHint}` : ''}, ` +
    'or make the backup there with --with-passphrase'
  const b64 = await (await keys.keychainFor(header.install_id)).get(BACKUP_KEY_SECRET)
  if (!b64)
    throw invalid(`could not restore ${name}: this keychain does not hold the key it was made with; ${elsewhere}`)
  const key = Buffer.from(b64, 'base64')
  if (keyId(key) !== header.key_id)
    throw invalid(`could not restore ${name}: it was made with another backup key than this keychain's; ${elsewhere}`)
  return key
}

/**
 * Reads the whole envelope through `file` and checks its code under `key`; each payload chunk
 * goes to `sink` on the way (nothing when null). Returns whether the code matched. What `sink`
 * received is only to be used when it did.
 */
export async function verifyBackup(
  file: FileHandle,
  header: BackupHeader,
  key: Buffer,
  sink: ((chunk: Buffer) => Promise<void>) | null
): Promise<boolean> {
  const { size } = await file.stat()
  const payloadAt = size - TAG_BYTES - header.payload_bytes
  const mac: Hmac = createHmac('sha256', key)
  const buf = Buffer.alloc(CHUNK)
  for (let pos = 0; pos < size - TAG_BYTES;) {
    const { bytesRead } = await file.read(buf, 0, Math.min(CHUNK, size - TAG_BYTES - pos), pos)
    if (bytesRead === 0) return false
    const chunk = buf.subarray(0, bytesRead)
    mac.update(chunk)
    if (sink) {
      // Only the payload's part of the chunk: the prefix and header come first.
      const from = Math.max(0, payloadAt - pos)
      if (from < bytesRead) await sink(chunk.subarray(from))
    }
    pos += bytesRead
  }
  const tag = Buffer.alloc(TAG_BYTES)
  const { bytesRead } = await file.read(tag, 0, TAG_BYTES, size - TAG_BYTES)
  return bytesRead === TAG_BYTES && timingSafeEqual(tag, mac.digest())
}
