/**
 * Private keys a deploy pairs with a certificate: the key CertDesk keeps for the order, or a key
 * file the folder target names (a key the customer keeps on the server; CertDesk reads it to
 * compare and, for a PFX, to pack it, and never stores it). A key and a certificate belong
 * together when the key's public half is the certificate's SubjectPublicKeyInfo (RFC 5280
 * §4.1.2.7); a server refuses any other pair (nginx "key values mismatch", HAProxy "inconsistencies
 * between private key and certificate", Apache exits on a graceful restart).
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs'
import { createPrivateKey, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto'

/** A PEM private key is a few KiB (RSA 8192 is about 6.5 KiB); anything far larger is not one. */
export const MAX_KEY_FILE_BYTES = 64 * 1024

const spki = (k: KeyObject): Buffer => k.export({ type: 'spki', format: 'der' })

/** True when `keyPem` is the private key of `certificatePem`. */
export function keyMatchesCertificate(keyPem: string, certificatePem: string): boolean {
  try {
    return spki(createPublicKey(createPrivateKey(keyPem))).equals(spki(new X509Certificate(certificatePem).publicKey))
  } catch {
    return false
  }
}

/**
 * Reads a key file the admin named, safely: opened without blocking (a FIFO planted at the path
 * would otherwise hang the deploy), refused unless it is a regular file of at most
 * MAX_KEY_FILE_BYTES, and never more than that read. Returns the PEM or throws a message that
 * says what is wrong with the file, never its content.
 */
export function readKeyFile(path: string): string {
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0))
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    throw new Error(
      code === 'ENOENT'
        ? `the key file ${path} does not exist`
        : code === 'EACCES'
          ? `the key file ${path} is not readable by CertDesk`
          : `could not open the key file ${path} (${code ?? 'error'})`,
      { cause: err }
    )
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) throw new Error(`the key file ${path} is not a regular file`)
    if (st.size > MAX_KEY_FILE_BYTES)
      throw new Error(`the key file ${path} is larger than ${MAX_KEY_FILE_BYTES / 1024} KiB, so not a PEM private key`)
    const buf = Buffer.alloc(MAX_KEY_FILE_BYTES + 1)
    let len = 0
    for (;;) {
      const n = readSync(fd, buf, len, buf.length - len, null)
      if (n === 0) break
      len += n
      if (len > MAX_KEY_FILE_BYTES)
        throw new Error(
          `the key file ${path} is larger than ${MAX_KEY_FILE_BYTES / 1024} KiB, so not a PEM private key`
        )
    }
    const pem = buf.subarray(0, len).toString('utf8')
    try {
      createPrivateKey(pem)
    } catch (err) {
      throw new Error(`the key file ${path} is not an unencrypted PEM private key`, { cause: err })
    }
    return pem
  } finally {
    closeSync(fd)
  }
}
