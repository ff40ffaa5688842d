/**
 * The key of the ACME server's own HTTPS listener, made anew at every start; its certificate
 * comes from the CertDesk CA through the core (AcmeServerCore.listenerCertificate).
 */
import { generateKeyPairSync } from 'node:crypto'
import { nodeCrypto, x509 } from '../core/x509'

/** A fresh P-256 key and its CSR, for the ACME listener's own HTTPS certificate. */
export async function listenerKeyAndCsr(names: string[]): Promise<{ keyPem: string; csrDer: Buffer }> {
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }
  const keys = {
    privateKey: await nodeCrypto.subtle.importKey(
      'pkcs8',
      pair.privateKey.export({ type: 'pkcs8', format: 'der' }),
      alg,
      false,
      ['sign']
    ),
    publicKey: await nodeCrypto.subtle.importKey(
      'spki',
      pair.publicKey.export({ type: 'spki', format: 'der' }),
      alg,
      true,
      ['verify']
    )
  }
  const csr = await x509.Pkcs10CertificateRequestGenerator.create(
    {
      name: `CN=${names[0]}`,
      keys: keys as never,
      signingAlgorithm: alg,
      extensions: [new x509.SubjectAlternativeNameExtension(names.map((value) => ({ type: 'dns' as const, value })))]
    },
    nodeCrypto as never
  )
  return {
    keyPem: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    csrDer: Buffer.from(csr.rawData)
  }
}
