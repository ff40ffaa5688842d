/**
 * Certificate exports made in the renderer: PEM pieces, a private key as PKCS#8 PEM (optionally
 * password-encrypted: PBES2 with PBKDF2-HMAC-SHA256 and AES-256-CBC), and PKCS#12/PFX with a
 * password via pkijs. The private key comes from the main process's vault for the desktop user
 * only; nothing here talks to the reseller API.
 */
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import * as pkijs from 'pkijs'

/**
 * PBKDF2 iterations for exported keys and PFX files. OWASP's 2023 guidance for
 * PBKDF2-HMAC-SHA256 is 600,000; 100,000 keeps an export under a second on a laptop while
 * staying above what OpenSSL 3 uses by default for PKCS#12 (2048).
 */
const KDF_ITERATIONS = 100_000

export const pemToDer = (pem: string): ArrayBuffer => {
  const b64 = pem.replace(/-----(BEGIN|END) [A-Z0-9 ]+-----/g, '').replace(/\s+/g, '')
  const bin = atob(b64)
  const out = new Uint8Array(bin.length)
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i)
  return out.buffer
}

export const derToPem = (label: string, der: ArrayBuffer): string => {
  let bin = ''
  for (const b of new Uint8Array(der)) bin += String.fromCharCode(b)
  return `-----BEGIN ${label}-----\n${btoa(bin).replace(/.{1,64}/g, '$&\n')}-----END ${label}-----\n`
}

/** The PEM blocks of a bundle, in order. */
export const splitPem = (bundle: string): string[] =>
  bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []

const utf8 = (s: string): ArrayBuffer => new TextEncoder().encode(s).buffer as ArrayBuffer

async function shroud(pkcs8Pem: string, password: string): Promise<pkijs.PKCS8ShroudedKeyBag> {
  const bag = new pkijs.PKCS8ShroudedKeyBag({ parsedValue: pkijs.PrivateKeyInfo.fromBER(pemToDer(pkcs8Pem)) })
  await bag.makeInternalValues({
    password: utf8(password),
    // pkijs derives the IV itself for AES-CBC; its type asks for the GCM shape too.
    contentEncryptionAlgorithm: { name: 'AES-CBC', length: 256 } as unknown as Parameters<
      pkijs.PKCS8ShroudedKeyBag['makeInternalValues']
    >[0]['contentEncryptionAlgorithm'],
    hmacHashAlgorithm: 'SHA-256',
    iterationCount: KDF_ITERATIONS
  })
  return bag
}

/** PKCS#8 PEM; with a password, an "ENCRYPTED PRIVATE KEY" that `openssl pkey -passin` opens. */
export async function privateKeyPem(pkcs8Pem: string, password: string): Promise<string> {
  if (!password) return pkcs8Pem
  const bag = await shroud(pkcs8Pem, password)
  return derToPem('ENCRYPTED PRIVATE KEY', bag.toSchema().toBER(false))
}

/** PKCS#12 with the key (shrouded), the certificate and its chain, MAC'd with the same password. */
export async function pfx(
  pkcs8Pem: string,
  certificatePem: string,
  chainPem: string,
  password: string
): Promise<ArrayBuffer> {
  if (!password) throw new Error('could not create the PFX: it needs a password')
  const keyBag = await shroud(pkcs8Pem, password)
  const certs = [certificatePem, ...splitPem(chainPem)].map((p) => pkijs.Certificate.fromBER(pemToDer(p)))
  const p12 = new pkijs.PFX({
    parsedValue: {
      integrityMode: 0,
      authenticatedSafe: new pkijs.AuthenticatedSafe({
        parsedValue: {
          safeContents: [
            {
              privacyMode: 0,
              value: new pkijs.SafeContents({
                safeBags: [
                  new pkijs.SafeBag({ bagId: '1.2.840.113549.1.12.10.1.2', bagValue: keyBag }),
                  ...certs.map(
                    (c) =>
                      new pkijs.SafeBag({
                        bagId: '1.2.840.113549.1.12.10.1.3',
                        bagValue: new pkijs.CertBag({ parsedValue: c })
                      })
                  )
                ]
              })
            }
          ]
        }
      })
    }
  })
  await p12.parsedValue!.authenticatedSafe!.makeInternalValues({ safeContents: [{}] })
  await p12.makeInternalValues({
    password: utf8(password),
    iterations: KDF_ITERATIONS,
    pbkdf2HashAlgorithm: 'SHA-256',
    hmacHashAlgorithm: 'SHA-256'
  })
  return p12.toSchema().toBER(false)
}

export interface CertificateFacts {
  subject: string
  issuer: string
  serial: string
  notBefore: Date
  notAfter: Date
  names: string[]
  keyAlgorithm: string
  sha256: string
}

/** Details decoded from the PEM itself, not from what the store says about it. */
export async function certificateFacts(pem: string): Promise<CertificateFacts> {
  const c = new x509.X509Certificate(pem)
  const san = c.extensions.find(
    (e): e is x509.SubjectAlternativeNameExtension => e instanceof x509.SubjectAlternativeNameExtension
  )
  const alg = c.publicKey.algorithm as RsaHashedKeyAlgorithm & EcKeyAlgorithm
  const thumb = new Uint8Array(await c.getThumbprint('SHA-256'))
  return {
    subject: c.subject,
    issuer: c.issuer,
    serial: c.serialNumber,
    notBefore: c.notBefore,
    notAfter: c.notAfter,
    names: san ? san.names.toJSON().map((n) => n.value) : [],
    keyAlgorithm: alg.modulusLength
      ? `RSA ${alg.modulusLength}`
      : alg.namedCurve
        ? `ECDSA ${alg.namedCurve}`
        : alg.name,
    sha256: Array.from(thumb, (b) => b.toString(16).padStart(2, '0'))
      .join(':')
      .toUpperCase()
  }
}
