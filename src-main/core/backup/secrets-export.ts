/**
 * The keychain's CertDesk secrets (API keys, EAB HMAC keys, the wrapping keys of stored private
 * keys and of the local CA, deploy-target passwords) as one file encrypted under a passphrase,
 * so a backup of the store can be restored on another machine. A store backup alone never
 * decrypts anything: the secrets travel separately, under a passphrase only the user knows.
 *
 * Format (JSON): scrypt (RFC 7914) derives a 256-bit key from the passphrase and a random
 * 16-byte salt; AES-256-GCM (NIST SP 800-38D) with a random 96-bit IV encrypts the secrets; the
 * header (format, version, KDF parameters, salt) is the additional authenticated data, so a
 * changed parameter fails authentication like a changed ciphertext.
 */
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto'
import { invalid, ServiceError } from '../errors'
import type { SecretStore } from '../secrets'

const FORMAT = 'certdesk-secrets'
const VERSION = 1
/** scrypt cost: N = 2^17, r = 8, p = 1 (RFC 7914 §2's interactive-use guidance, raised for a file kept long). */
const SCRYPT = { N: 131_072, r: 8, p: 1 } as const
/** Most work an imported file may ask for, so a crafted file cannot make import run for hours. */
const MAX_SCRYPT_N = 1_048_576
/** A passphrase guessable in an afternoon protects nothing kept on a backup disk. */
export const MIN_PASSPHRASE_LENGTH = 12

interface Header {
  format: typeof FORMAT
  version: number
  kdf: 'scrypt'
  N: number
  r: number
  p: number
  salt: string
  cipher: 'aes-256-gcm'
}

export interface SecretsFile extends Header {
  iv: string
  tag: string
  data: string
}

const aad = (h: Header): Buffer =>
  Buffer.from(JSON.stringify([h.format, h.version, h.kdf, h.N, h.r, h.p, h.salt, h.cipher]))

const deriveKey = (passphrase: string, salt: Buffer, h: Pick<Header, 'N' | 'r' | 'p'>): Buffer =>
  scryptSync(passphrase.normalize('NFC'), salt, 32, { N: h.N, r: h.r, p: h.p, maxmem: 256 * h.N * h.r + 1024 * 1024 })

async function listOf(secrets: SecretStore): Promise<{ name: string; value: string }[]> {
  if (!secrets.list)
    throw new ServiceError('unavailable', 'could not export the secrets: this keychain cannot list them')
  return await secrets.list()
}

/** Encrypts every secret of the data dir's keychain service under `passphrase`. */
export async function exportSecrets(
  secrets: SecretStore,
  passphrase: string,
  installId: string
): Promise<{ file: SecretsFile; count: number }> {
  if (passphrase.length < MIN_PASSPHRASE_LENGTH)
    throw invalid(`could not export the secrets: the passphrase must be at least ${MIN_PASSPHRASE_LENGTH} characters`)
  const items = await listOf(secrets)
  const header: Header = {
    format: FORMAT,
    version: VERSION,
    kdf: 'scrypt',
    ...SCRYPT,
    salt: randomBytes(16).toString('base64'),
    cipher: 'aes-256-gcm'
  }
  const key = deriveKey(passphrase, Buffer.from(header.salt, 'base64'), header)
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(aad(header))
  const plain = Buffer.from(JSON.stringify({ install_id: installId, secrets: items }))
  const data = Buffer.concat([cipher.update(plain), cipher.final()])
  plain.fill(0)
  key.fill(0)
  return {
    file: {
      ...header,
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      data: data.toString('base64')
    },
    count: items.length
  }
}

/** Decrypts a secrets file and stores each secret in the data dir's keychain service. */
export async function importSecrets(
  secrets: SecretStore,
  text: string,
  passphrase: string,
  installId: string
): Promise<{ count: number }> {
  const bad = (why: string): ServiceError => invalid(`could not import the secrets file: ${why}`)
  let f: SecretsFile
  try {
    f = JSON.parse(text) as SecretsFile
  } catch {
    throw bad('it is not a CertDesk secrets export (not JSON)')
  }
  if (!f || typeof f !== 'object' || f.format !== FORMAT) throw bad('it is not a CertDesk secrets export')
  if (f.version !== VERSION)
    throw bad(`it has format version ${String(f.version)}; this CertDesk reads version ${VERSION}`)
  if (
    f.kdf !== 'scrypt' ||
    f.cipher !== 'aes-256-gcm' ||
    !Number.isInteger(f.N) ||
    f.N < 2 ||
    f.N > MAX_SCRYPT_N ||
    (f.N & (f.N - 1)) !== 0 ||
    !Number.isInteger(f.r) ||
    f.r < 1 ||
    f.r > 32 ||
    !Number.isInteger(f.p) ||
    f.p < 1 ||
    f.p > 16 ||
    [f.salt, f.iv, f.tag, f.data].some((v) => typeof v !== 'string')
  )
    throw bad('its encryption parameters are not ones CertDesk writes')
  let plain: Buffer
  try {
    const key = deriveKey(passphrase, Buffer.from(f.salt, 'base64'), f)
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(f.iv, 'base64'))
    decipher.setAAD(aad(f))
    decipher.setAuthTag(Buffer.from(f.tag, 'base64'))
    plain = Buffer.concat([decipher.update(Buffer.from(f.data, 'base64')), decipher.final()])
    key.fill(0)
  } catch {
    throw bad('the passphrase is wrong or the file was changed')
  }
  const body = JSON.parse(plain.toString('utf8')) as { install_id: string; secrets: { name: string; value: string }[] }
  plain.fill(0)
  // The wrapping keys fit only the store they were made for: restore that store's backup first.
  if (body.install_id !== installId)
    throw bad('it holds the secrets of another data dir; restore the backup of that data dir first, then import')
  for (const s of body.secrets) await secrets.set(s.name, s.value)
  return { count: body.secrets.length }
}
