/**
 * The keys of CertDesk's own HTTPS listeners (the loopback ACME server, the public listener),
 * made anew at every start and renewal; their certificates come from the CertDesk CA through the
 * core (AcmeServerCore.listenerCertificate).
 */
import { generateKeyPairSync } from 'node:crypto'
import type { Service } from '../core/service'
import { nodeCrypto, x509 } from '../core/certificates/x509'
import type { TlsPair } from '../common/tls-identity'

/** A fresh P-256 key and its CSR, for a listener's own HTTPS certificate. */
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

/**
 * A listener's pair issued by the CertDesk CA for `names`, with a key made for it alone and
 * kept in memory only: each renewal and each start makes a new one, so no listener key is ever
 * written anywhere.
 */
export const issuedPair =
  (service: Service, names: string[]): (() => Promise<TlsPair>) =>
  async () => {
    const k = await listenerKeyAndCsr(names)
    return { key: k.keyPem, cert: await service.acmeServer.listenerCertificate(k.csrDer, names) }
  }
