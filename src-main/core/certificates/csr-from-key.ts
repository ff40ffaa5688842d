/**
 * A PKCS #10 request (RFC 2986) signed by a key CertDesk keeps: a reissue with the same key for
 * other names needs a request that proves possession of that key for the new names. The names
 * go into the subjectAltName extension, the first also into the CN, as the app's own generator
 * writes them (CAs take the names from the SAN, BR §7.1.2.7.12).
 */
import { createPrivateKey, createPublicKey, type webcrypto } from 'node:crypto'
import { nodeCrypto, x509, type CryptoProvider } from './x509'

/** The signature each key type is used with: SHA-256 for RSA and P-256, SHA-384 for P-384. */
function algorithmOf(pkcs8Pem: string): {
  key: webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams
  sign: webcrypto.Algorithm | webcrypto.EcdsaParams
} {
  const key = createPrivateKey(pkcs8Pem)
  if (key.asymmetricKeyType === 'rsa') {
    return { key: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, sign: { name: 'RSASSA-PKCS1-v1_5' } }
  }
  const curve = key.asymmetricKeyDetails?.namedCurve
  if (key.asymmetricKeyType === 'ec' && (curve === 'prime256v1' || curve === 'secp384r1')) {
    const namedCurve = curve === 'prime256v1' ? 'P-256' : 'P-384'
    return {
      key: { name: 'ECDSA', namedCurve },
      sign: { name: 'ECDSA', hash: namedCurve === 'P-256' ? 'SHA-256' : 'SHA-384' }
    }
  }
  throw new Error(`could not sign a CSR: a ${key.asymmetricKeyType} key is not one CertDesk signs requests with`)
}

export async function csrFromKey(
  pkcs8Pem: string,
  names: string[],
  crypto: CryptoProvider = nodeCrypto
): Promise<string> {
  if (names.length === 0) throw new Error('could not sign a CSR: it needs at least one name')
  const alg = algorithmOf(pkcs8Pem)
  const der = (k: ReturnType<typeof createPrivateKey>, type: 'pkcs8' | 'spki'): Buffer =>
    k.export({ type, format: 'der' } as never) as Buffer
  const privateObject = createPrivateKey(pkcs8Pem)
  const privateKey = await crypto.subtle.importKey('pkcs8', der(privateObject, 'pkcs8'), alg.key, false, ['sign'])
  const publicKey = await crypto.subtle.importKey('spki', der(createPublicKey(privateObject), 'spki'), alg.key, true, [
    'verify'
  ])
  const csr = await x509.Pkcs10CertificateRequestGenerator.create(
    {
      name: [{ CN: [names[0]] }],
      keys: { privateKey, publicKey },
      signingAlgorithm: alg.sign,
      extensions: [new x509.SubjectAlternativeNameExtension(names.map((value) => ({ type: 'dns' as const, value })))]
    },
    crypto
  )
  return csr.toString('pem') + '\n'
}
