/**
 * The PKCS#12 (PFX) file older Windows can import: Windows before Server 2019 / Windows 10 1709
 * and older Java keystores read only the RFC 7292 password-based encryption with SHA-1 and
 * triple DES (pbeWithSHAAnd3-KeyTripleDES-CBC, Appendix C) and an HMAC-SHA-1 integrity MAC, not
 * the PBES2/AES-256 of pfx.ts. That profile is weak by today's measure (SHA-1, 64-bit blocks),
 * so it is offered only beside AES-256, labelled as such, never by default; `openssl pkcs12
 * -legacy` reads it, as it reads what `openssl pkcs12 -export -legacy -descert` writes.
 *
 * Written by hand over der.ts: pkijs builds PBES2 only. Keys and IVs come from the RFC 7292
 * Appendix B key derivation (imports/pkcs12-kdf.ts, in a worker thread).
 */
import { createCipheriv, createHash, createHmac, randomBytes, type webcrypto } from 'node:crypto'
import { oid, seq, tlv, TAG, unsignedInteger } from '../certificates/der'
import { bmpPassword, pkcs12Derive, PKCS12_MAC_ID } from '../imports/pkcs12-kdf'
import type { PfxInput } from './pfx'

/** The iteration count `openssl pkcs12 -export -legacy` uses (2048), which old Windows accepts. */
const LEGACY_ITERATIONS = 2048

const OID = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  pbeSha1TripleDes: '1.2.840.113549.1.12.1.3',
  shroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  certBag: '1.2.840.113549.1.12.10.1.3',
  x509Certificate: '1.2.840.113549.1.9.22.1',
  friendlyName: '1.2.840.113549.1.9.20',
  localKeyId: '1.2.840.113549.1.9.21',
  sha1: '1.3.14.3.2.26'
}

/** RFC 7292 Appendix B.3: ID 1 derives the encryption key, 2 the IV. */
const KEY_ID = 1
const IV_ID = 2

const octets = (b: Buffer): Buffer => tlv(TAG.octetString, b)
const explicit0 = (b: Buffer): Buffer => tlv(0xa0, b)
const integer = (n: number): Buffer => unsignedInteger(Buffer.from(n.toString(16).padStart(8, '0'), 'hex'))
const derOf = (pem: string, label: string): Buffer[] =>
  [...pem.matchAll(new RegExp(`-----BEGIN ${label}-----([\\s\\S]*?)-----END ${label}-----`, 'g'))].map((m) =>
    Buffer.from(m[1].replace(/\s+/g, ''), 'base64')
  )

/** pbeWithSHAAnd3-KeyTripleDES-CBC over `plain` with a fresh salt; answers the AlgorithmIdentifier and the ciphertext. */
async function encrypt(plain: Buffer, password: Buffer): Promise<{ algorithm: Buffer; ciphertext: Buffer }> {
  const salt = randomBytes(8)
  const derive = (id: number, length: number): Promise<Buffer> =>
    pkcs12Derive({ hash: 'SHA-1', id, password, salt, iterations: LEGACY_ITERATIONS, length })
  const [key, iv] = await Promise.all([derive(KEY_ID, 24), derive(IV_ID, 8)])
  const cipher = createCipheriv('des-ede3-cbc', key, iv)
  return {
    algorithm: seq(oid(OID.pbeSha1TripleDes), seq(octets(salt), integer(LEGACY_ITERATIONS))),
    ciphertext: Buffer.concat([cipher.update(plain), cipher.final()])
  }
}

const attribute = (type: string, value: Buffer): Buffer => seq(oid(type), tlv(TAG.set, value))

export async function buildLegacyPfx(input: PfxInput, _crypto?: webcrypto.Crypto): Promise<Buffer> {
  if (!input.password) throw new Error('could not build PFX: it needs a password')
  const [keyDer] = derOf(input.privateKeyPem, 'PRIVATE KEY')
  if (!keyDer) throw new Error('could not build PFX: the private key is not PKCS#8 PEM (BEGIN PRIVATE KEY)')
  const [leafDer] = derOf(input.certificatePem, 'CERTIFICATE')
  if (!leafDer) throw new Error('could not build PFX: no certificate in the PEM')
  const password = bmpPassword(new TextEncoder().encode(input.password))

  // localKeyID ties the key to its certificate (RFC 7292 §4.2); Windows pairs them by it.
  const localKeyId = attribute(OID.localKeyId, octets(createHash('sha1').update(leafDer).digest()))
  const friendly = attribute(OID.friendlyName, tlv(0x1e, Buffer.from(input.friendlyName, 'utf16le').swap16()))
  const attrs = tlv(TAG.set, friendly, localKeyId)

  // The key: a PKCS8ShroudedKeyBag, i.e. an EncryptedPrivateKeyInfo (RFC 5958 §3).
  const shrouded = await encrypt(keyDer, password)
  const keyBag = seq(oid(OID.shroudedKeyBag), explicit0(seq(shrouded.algorithm, octets(shrouded.ciphertext))), attrs)
  const keySafe = seq(oid(OID.data), explicit0(octets(seq(keyBag))))

  // The certificates: leaf (with the attributes), then the chain, in one encrypted SafeContents.
  const certBag = (der: Buffer, withAttrs: boolean): Buffer =>
    seq(
      oid(OID.certBag),
      explicit0(seq(oid(OID.x509Certificate), explicit0(octets(der)))),
      ...(withAttrs ? [attrs] : [])
    )
  const certs = seq(certBag(leafDer, true), ...derOf(input.chainPem, 'CERTIFICATE').map((d) => certBag(d, false)))
  const sealed = await encrypt(certs, password)
  const certSafe = seq(
    oid(OID.encryptedData),
    explicit0(seq(integer(0), seq(oid(OID.data), sealed.algorithm, tlv(0x80, sealed.ciphertext))))
  )

  // Certificates first, then the key: the order `openssl pkcs12 -export` writes.
  const authSafe = seq(certSafe, keySafe)
  const macSalt = randomBytes(8)
  const macKey = await pkcs12Derive({
    hash: 'SHA-1',
    id: PKCS12_MAC_ID,
    password,
    salt: macSalt,
    iterations: LEGACY_ITERATIONS,
    length: 20
  })
  const mac = createHmac('sha1', macKey).update(authSafe).digest()
  const macData = seq(
    seq(seq(oid(OID.sha1), tlv(TAG.null, Buffer.alloc(0))), octets(mac)),
    octets(macSalt),
    integer(LEGACY_ITERATIONS)
  )
  return seq(integer(3), seq(oid(OID.data), explicit0(octets(authSafe))), macData)
}
