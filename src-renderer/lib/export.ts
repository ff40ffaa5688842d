/**
 * What the certificate page shows of a certificate, decoded from its PEM in the renderer. The
 * password-protected exports (encrypted PKCS#8, PKCS#12) are built in the main process
 * (src-main/core/deploy/pfx.ts) and asked for over the bridge.
 */
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'

export interface CertificateFacts {
  subject: string
  issuer: string
  serial: string
  notBefore: Date
  notAfter: Date
  names: string[]
  keyAlgorithm: string
  sha256: string
  /** Where the certificate says its revocation list is (RFC 5280 §4.2.1.13). */
  crlUrls: string[]
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
      .toUpperCase(),
    crlUrls:
      c
        .getExtension(x509.CRLDistributionPointsExtension)
        ?.distributionPoints.flatMap((p) => p.distributionPoint?.fullName ?? [])
        .flatMap((n) => (n.uniformResourceIdentifier ? [n.uniformResourceIdentifier] : [])) ?? []
  }
}
