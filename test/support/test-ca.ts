/**
 * Real certificates for the deploy tests, made with @peculiar/x509 over Node's WebCrypto: a
 * root, an intermediate and leaves with fresh ECDSA P-256 keys, so `openssl verify` and
 * `openssl pkcs12` can check what a deploy wrote. (Until the certificate lifecycle is merged,
 * the deploy tests issue with this instead of the local CA.)
 */
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import { webcrypto } from 'node:crypto'

const crypto = webcrypto
type CryptoKeyPair = webcrypto.CryptoKeyPair
const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const

export interface TestLeaf {
  certificatePem: string
  chainPem: string
  privateKeyPem: string
  serial: string
}

export interface TestCa {
  rootPem: string
  issue(domain: string, validFrom: Date, days: number): Promise<TestLeaf>
}

const pem = (der: ArrayBuffer, label: string): string =>
  `-----BEGIN ${label}-----\n${Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '')}\n-----END ${label}-----\n`

let serialCounter = 0x1000
const nextSerial = (): string => {
  serialCounter += 1
  return `7e${serialCounter.toString(16).padStart(6, '0')}${Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString('hex')}`
}

export async function createTestCa(): Promise<TestCa> {
  const rootKeys = (await crypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair
  const intKeys = (await crypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair
  const notBefore = new Date('2020-01-01T00:00:00Z')
  const notAfter = new Date('2040-01-01T00:00:00Z')
  const root = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: nextSerial(),
      name: 'CN=CertDesk Deploy Test Root',
      notBefore,
      notAfter,
      keys: rootKeys,
      signingAlgorithm: ALG,
      extensions: [
        new x509.BasicConstraintsExtension(true, 1, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(rootKeys.publicKey, false, crypto)
      ]
    },
    crypto
  )
  const intermediate = await x509.X509CertificateGenerator.create(
    {
      serialNumber: nextSerial(),
      subject: 'CN=CertDesk Deploy Test Intermediate',
      issuer: root.subject,
      notBefore,
      notAfter,
      publicKey: intKeys.publicKey,
      signingKey: rootKeys.privateKey,
      signingAlgorithm: ALG,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(intKeys.publicKey, false, crypto),
        await x509.AuthorityKeyIdentifierExtension.create(root, false, crypto)
      ]
    },
    crypto
  )
  return {
    rootPem: root.toString('pem') + '\n',
    async issue(domain, validFrom, days) {
      const keys = (await crypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair
      const serial = nextSerial()
      const leaf = await x509.X509CertificateGenerator.create(
        {
          serialNumber: serial,
          subject: `CN=${domain}`,
          issuer: intermediate.subject,
          notBefore: validFrom,
          notAfter: new Date(validFrom.getTime() + days * 86_400_000 - 1000),
          publicKey: keys.publicKey,
          signingKey: intKeys.privateKey,
          signingAlgorithm: ALG,
          extensions: [
            new x509.BasicConstraintsExtension(false, undefined, true),
            new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
            new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
            new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: domain }]),
            await x509.AuthorityKeyIdentifierExtension.create(intermediate, false, crypto)
          ]
        },
        crypto
      )
      return {
        certificatePem: leaf.toString('pem') + '\n',
        chainPem: intermediate.toString('pem') + '\n',
        privateKeyPem: pem(await crypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY'),
        serial: serial.toUpperCase()
      }
    }
  }
}
