/**
 * PKCS#12 (PFX) for IIS and Windows certificate stores, and the password-encrypted PKCS#8 key
 * file, built with pkijs over an injected WebCrypto (the caller passes the crypto provider, as
 * @peculiar/x509 does). The one builder of both: the folder deploy writes it and the desktop
 * user's export asks for it over the bridge. RFC 7292 layout as OpenSSL writes it: the key in a
 * PKCS8ShroudedKeyBag (PBES2, AES-256-CBC, PBKDF2-HMAC-SHA-256), the certificates in a
 * password-encrypted SafeContents, and a password-based HMAC-SHA-256 integrity MAC. Windows
 * Server 2019+ and OpenSSL 1.1.1+/3 read this; the 3DES/SHA-1 profile of older Windows is in
 * pfx-legacy.ts, offered beside this one only.
 */
import * as asn1js from 'asn1js'
import { webcrypto } from 'node:crypto'
import * as pkijs from 'pkijs'

/** PBKDF2 iterations: OpenSSL 3's `pkcs12 -export` default since 3.0 is 2048; NIST SP 800-132 asks for far more. */
const PBKDF2_ITERATIONS = 100_000

const BAG_KEY = '1.2.840.113549.1.12.10.1.2' // pkcs8ShroudedKeyBag
const BAG_CERT = '1.2.840.113549.1.12.10.1.3' // certBag
const ATTR_FRIENDLY_NAME = '1.2.840.113549.1.9.20'
const ATTR_LOCAL_KEY_ID = '1.2.840.113549.1.9.21'

const pemBlocks = (pem: string, label: string): ArrayBuffer[] => {
  const re = new RegExp(`-----BEGIN ${label}-----([\\s\\S]*?)-----END ${label}-----`, 'g')
  return [...pem.matchAll(re)].map((m) => {
    const der = Buffer.from(m[1].replace(/\s+/g, ''), 'base64')
    return der.buffer.slice(der.byteOffset, der.byteOffset + der.byteLength) as ArrayBuffer
  })
}

export interface PfxInput {
  certificatePem: string
  /** Intermediates, leaf-side first. */
  chainPem: string
  /** PKCS#8 (`BEGIN PRIVATE KEY`). */
  privateKeyPem: string
  password: string
  friendlyName: string
}

const engineOver = (crypto: webcrypto.Crypto): pkijs.CryptoEngine =>
  new pkijs.CryptoEngine({
    name: 'certdesk',
    crypto: crypto as unknown as ConstructorParameters<typeof pkijs.CryptoEngine>[0]['crypto']
  })

/** PBES2 (RFC 8018 §6.2) with AES-256-CBC and PBKDF2-HMAC-SHA-256, for the key bag and the encrypted key file. */
const pbes2Of = (password: ArrayBuffer) => ({
  password,
  contentEncryptionAlgorithm: { name: 'AES-CBC', length: 256 },
  hmacHashAlgorithm: 'SHA-256',
  iterationCount: PBKDF2_ITERATIONS
})

const utf8 = (text: string): ArrayBuffer => new TextEncoder().encode(text).buffer as ArrayBuffer

async function shroud(
  keyDer: ArrayBuffer,
  password: ArrayBuffer,
  engine: pkijs.CryptoEngine
): Promise<pkijs.PKCS8ShroudedKeyBag> {
  const bag = new pkijs.PKCS8ShroudedKeyBag({ parsedValue: pkijs.PrivateKeyInfo.fromBER(keyDer) })
  await bag.makeInternalValues(pbes2Of(password), engine)
  return bag
}

/**
 * The key as an RFC 5958 EncryptedPrivateKeyInfo PEM ("BEGIN ENCRYPTED PRIVATE KEY"), encrypted
 * like the PFX's key bag; `openssl pkey -passin` opens it.
 */
export async function encryptPrivateKeyPem(
  privateKeyPem: string,
  password: string,
  crypto: webcrypto.Crypto = webcrypto
): Promise<string> {
  if (!password) throw new Error('could not encrypt the private key: it needs a password')
  const keyDer = pemBlocks(privateKeyPem, 'PRIVATE KEY')[0]
  if (!keyDer) throw new Error('could not encrypt the private key: it is not PKCS#8 PEM (BEGIN PRIVATE KEY)')
  const bag = await shroud(keyDer, utf8(password), engineOver(crypto))
  const b64 = Buffer.from(bag.toSchema().toBER(false)).toString('base64')
  return `-----BEGIN ENCRYPTED PRIVATE KEY-----\n${b64.replace(/.{1,64}/g, '$&\n')}-----END ENCRYPTED PRIVATE KEY-----\n`
}

export async function buildPfx(input: PfxInput, crypto: webcrypto.Crypto = webcrypto): Promise<Buffer> {
  if (!input.password) throw new Error('could not build PFX: it needs a password')
  const engine = engineOver(crypto)
  const keyDer = pemBlocks(input.privateKeyPem, 'PRIVATE KEY')[0]
  if (!keyDer) throw new Error('could not build PFX: the private key is not PKCS#8 PEM (BEGIN PRIVATE KEY)')
  const leafDer = pemBlocks(input.certificatePem, 'CERTIFICATE')[0]
  if (!leafDer) throw new Error('could not build PFX: no certificate in the PEM')
  const chainDers = pemBlocks(input.chainPem, 'CERTIFICATE')
  const password = utf8(input.password)

  // localKeyID ties the key to its certificate (RFC 7292 §4.2); Windows pairs them by it.
  const leaf = pkijs.Certificate.fromBER(leafDer)
  const localKeyId = await crypto.subtle.digest('SHA-1', leafDer)
  const attrs = (withFriendlyName: boolean): pkijs.Attribute[] => [
    ...(withFriendlyName
      ? [
          new pkijs.Attribute({
            type: ATTR_FRIENDLY_NAME,
            values: [new asn1js.BmpString({ value: input.friendlyName })]
          })
        ]
      : []),
    new pkijs.Attribute({ type: ATTR_LOCAL_KEY_ID, values: [new asn1js.OctetString({ valueHex: localKeyId })] })
  ]

  const pbes2 = pbes2Of(password)
  const keyBag = await shroud(keyDer, password, engine)

  const certBags = [
    new pkijs.SafeBag({
      bagId: BAG_CERT,
      bagValue: new pkijs.CertBag({ parsedValue: leaf }),
      bagAttributes: attrs(true)
    }),
    ...chainDers.map(
      (der) =>
        new pkijs.SafeBag({
          bagId: BAG_CERT,
          bagValue: new pkijs.CertBag({ parsedValue: pkijs.Certificate.fromBER(der) })
        })
    )
  ]
  const pfx = new pkijs.PFX({
    parsedValue: {
      integrityMode: 0,
      authenticatedSafe: new pkijs.AuthenticatedSafe({
        parsedValue: {
          safeContents: [
            {
              privacyMode: 0,
              value: new pkijs.SafeContents({
                safeBags: [new pkijs.SafeBag({ bagId: BAG_KEY, bagValue: keyBag, bagAttributes: attrs(true) })]
              })
            },
            { privacyMode: 1, value: new pkijs.SafeContents({ safeBags: certBags }) }
          ]
        }
      })
    }
  })
  const safe = pfx.parsedValue?.authenticatedSafe
  if (!safe) throw new Error('could not build PFX: no authenticated safe')
  await safe.makeInternalValues({ safeContents: [{}, pbes2] }, engine)
  await pfx.makeInternalValues(
    { password, iterations: PBKDF2_ITERATIONS, pbkdf2HashAlgorithm: 'SHA-256', hmacHashAlgorithm: 'SHA-256' },
    engine
  )
  return Buffer.from(pfx.toSchema().toBER(false))
}
