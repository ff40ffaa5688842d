/**
 * Key pairs and CSRs made in the renderer with WebCrypto and @peculiar/x509: the private key
 * is created here and leaves only to the main process's key vault (encrypted there with a key
 * from the OS keychain), never to the reseller API.
 */
// @peculiar/x509 resolves its ASN.1 classes through tsyringe, which needs the Reflect metadata API first.
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'

import { parseDomainInput } from './domain-input'
import type { KeyType } from './key-types'

function algorithm(t: KeyType): { gen: RsaHashedKeyGenParams | EcKeyGenParams; sign: Algorithm | EcdsaParams } {
  if (t.startsWith('RSA')) {
    const bits = Number(t.slice(4))
    return {
      gen: {
        name: 'RSASSA-PKCS1-v1_5',
        modulusLength: bits,
        publicExponent: new Uint8Array([1, 0, 1]),
        hash: 'SHA-256'
      },
      sign: { name: 'RSASSA-PKCS1-v1_5' }
    }
  }
  const curve = t === 'ECDSA-P256' ? 'P-256' : 'P-384'
  return {
    gen: { name: 'ECDSA', namedCurve: curve },
    sign: { name: 'ECDSA', hash: curve === 'P-256' ? 'SHA-256' : 'SHA-384' }
  }
}

const pem = (label: string, der: ArrayBuffer): string => {
  const b64 = btoa(String.fromCharCode(...new Uint8Array(der)))
  return `-----BEGIN ${label}-----\n${b64.replace(/.{1,64}/g, '$&\n')}-----END ${label}-----\n`
}

export interface GeneratedCsr {
  csrPem: string
  privateKeyPem: string
}

/** A name as a certificate carries it: lower-case LDH labels, a leading `*.` for a wildcard (RFC 5280 §4.2.1.6). */
const CERT_NAME = /^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)+$/

/**
 * The names as they go into a CSR: each typed name converted to its A-label form (RFC 5890
 * §2.3.2.1; the browser's own UTS #46 mapping, lib/domain-input.ts), because a dNSName is an
 * IA5String and holds ASCII only (RFC 5280 §4.2.1.6, §7.2). A name that is no domain name at all
 * is refused here, by name, rather than written into a request that the server must refuse.
 */
export function csrNames(typed: string[]): string[] {
  const out: string[] = []
  for (const t of typed) {
    const { ascii } = parseDomainInput(t)
    if (!CERT_NAME.test(ascii)) {
      throw new Error(`could not create the CSR: ${JSON.stringify(t)} is not a domain name`)
    }
    if (!out.includes(ascii)) out.push(ascii)
  }
  return out
}

/** CN is the first name; every name (the CN included, as CAs expect) goes in the SAN list, as A-labels. */
export async function generateCsr(keyType: KeyType, typed: string[]): Promise<GeneratedCsr> {
  if (typed.length === 0) throw new Error('could not create the CSR: give at least one domain name')
  const names = csrNames(typed)
  const { gen, sign } = algorithm(keyType)
  const keys = (await crypto.subtle.generateKey(gen, true, ['sign', 'verify'])) as CryptoKeyPair
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [{ CN: [names[0]] }],
    keys,
    signingAlgorithm: sign,
    extensions: [new x509.SubjectAlternativeNameExtension(names.map((value) => ({ type: 'dns' as const, value })))]
  })
  const pkcs8 = await crypto.subtle.exportKey('pkcs8', keys.privateKey)
  return { csrPem: csr.toString('pem') + '\n', privateKeyPem: pem('PRIVATE KEY', pkcs8) }
}

export interface DecodedCsr {
  commonName: string
  organization: string
  names: string[]
  /**
   * Names no certificate can carry as written, each with what to write instead: a name outside
   * ASCII (as a generator that does not convert to A-labels writes it). The server refuses the
   * CSR naming the first; the page says so before it is sent.
   */
  unusable: { name: string; aLabel: string | null }[]
  keyAlgorithm: string
  signatureValid: boolean
}

/**
 * An IA5String read by asn1js comes back one character per byte; bytes beyond ASCII are read as
 * UTF-8 where they are UTF-8 (as `openssl req` writes a typed ü), so the name shows as typed.
 */
function asTyped(value: string): string {
  const codes = [...value].map((c) => c.charCodeAt(0))
  if (codes.every((c) => c < 0x80) || codes.some((c) => c > 0xff)) return value
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(codes))
  } catch {
    return value
  }
}

/** Decodes a pasted CSR and checks its signature; throws with a readable message. */
export async function decodeCsr(text: string): Promise<DecodedCsr> {
  const trimmed = text.trim()
  if (!/^-----BEGIN (NEW )?CERTIFICATE REQUEST-----[\s\S]+-----END (NEW )?CERTIFICATE REQUEST-----$/.test(trimmed)) {
    throw new Error('not a PEM CSR: it must start with -----BEGIN CERTIFICATE REQUEST-----')
  }
  let csr: x509.Pkcs10CertificateRequest
  try {
    csr = new x509.Pkcs10CertificateRequest(
      trimmed
        .replace('NEW CERTIFICATE REQUEST', 'CERTIFICATE REQUEST')
        .replace('NEW CERTIFICATE REQUEST', 'CERTIFICATE REQUEST')
    )
  } catch (err) {
    throw new Error(`could not decode the CSR: ${(err as Error).message}`, { cause: err })
  }
  const san = csr.extensions.find(
    (e): e is x509.SubjectAlternativeNameExtension => e instanceof x509.SubjectAlternativeNameExtension
  )
  const sanNames = san
    ? san.names
        .toJSON()
        .filter((n) => n.type === 'dns')
        .map((n) => asTyped(n.value).toLowerCase())
    : []
  const commonName = csr.subjectName.getField('CN')[0] ?? ''
  const alg = csr.publicKey.algorithm as RsaHashedKeyAlgorithm & EcKeyAlgorithm
  const keyAlgorithm = alg.modulusLength
    ? `RSA ${alg.modulusLength}`
    : alg.namedCurve
      ? `ECDSA ${alg.namedCurve}`
      : alg.name
  const names = [...new Set([commonName, ...sanNames].filter(Boolean))]
  const unusable = sanNames
    .filter((n) => /[^\x21-\x7e]/.test(n))
    .map((name) => {
      const { ascii } = parseDomainInput(name)
      return { name, aLabel: CERT_NAME.test(ascii) ? ascii : null }
    })
  return {
    commonName,
    organization: csr.subjectName.getField('O')[0] ?? '',
    names,
    unusable,
    keyAlgorithm,
    signatureValid: await csr.verify()
  }
}
