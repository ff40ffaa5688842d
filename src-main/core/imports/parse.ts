/**
 * Reading certificate files as servers and CAs hand them out: PEM (one or many certificates,
 * perhaps a key), DER (one certificate) and PKCS#12/PFX (RFC 7292) with its password. The answer
 * is the certificates found, leaf first, and whether a private key was in the file; the key
 * itself is returned only to a caller that asks for it (an explicit key import).
 */
import * as asn1js from 'asn1js'
import { createPrivateKey, X509Certificate } from 'node:crypto'
import * as pkijs from 'pkijs'
import { BoundedPfxEngine, TooMuchWork } from './pfx-engine'

/** A certificate file is a few kilobytes; a bundle of a hundred is still far under this. */
export const MAX_FILE_BYTES = 1024 * 1024

export interface ParsedFile {
  /** Leaf first, then the certificates that issued it, then anything else in the file. */
  certificates: X509Certificate[]
  /** The unencrypted PKCS#8 PEM of a key found in the file, when one was there. */
  keyPem: string | null
}

export class UnreadableFile extends Error {}

const BAG_KEY = '1.2.840.113549.1.12.10.1.1' // keyBag
const BAG_SHROUDED_KEY = '1.2.840.113549.1.12.10.1.2' // pkcs8ShroudedKeyBag
const BAG_CERT = '1.2.840.113549.1.12.10.1.3' // certBag
const CERT_X509 = '1.2.840.113549.1.9.22.1' // x509Certificate (RFC 7292 §4.2.3)

export async function parseCertificateFile(data: Buffer, name: string, password?: string): Promise<ParsedFile> {
  if (data.length > MAX_FILE_BYTES) throw new UnreadableFile(`${name} is larger than ${MAX_FILE_BYTES} bytes`)
  const text = data.toString('latin1')
  if (text.includes('-----BEGIN ')) return parsePem(text, name)
  if (/\.(p12|pfx)$/i.test(name) || looksLikePfx(data)) return parsePfx(data, name, password)
  try {
    return { certificates: [new X509Certificate(data)], keyPem: null }
  } catch {
    throw new UnreadableFile(`${name} is not a certificate (PEM, DER or PFX)`)
  }
}

function parsePem(text: string, name: string): ParsedFile {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
  const certificates: X509Certificate[] = []
  for (const b of blocks) {
    try {
      certificates.push(new X509Certificate(b))
    } catch {
      throw new UnreadableFile(`${name} holds a certificate block that does not parse`)
    }
  }
  const keyBlock = /-----BEGIN (?:RSA |EC )?PRIVATE KEY-----[\s\S]+?-----END (?:RSA |EC )?PRIVATE KEY-----/.exec(text)
  let keyPem: string | null = null
  if (keyBlock) {
    try {
      keyPem = createPrivateKey(keyBlock[0]).export({ type: 'pkcs8', format: 'pem' }) as string
    } catch {
      keyPem = null
    }
  }
  if (certificates.length === 0 && !keyPem) throw new UnreadableFile(`${name} holds no certificate`)
  return { certificates: orderChain(certificates), keyPem }
}

/** A DER SEQUENCE whose first element is INTEGER 3: the PFX version (RFC 7292 §4). */
function looksLikePfx(data: Buffer): boolean {
  try {
    const parsed = asn1js.fromBER(new Uint8Array(data))
    const seq = parsed.result as asn1js.Sequence
    const first = seq.valueBlock?.value?.[0]
    return first instanceof asn1js.Integer && first.valueBlock.valueDec === 3
  } catch {
    return false
  }
}

async function parsePfx(data: Buffer, name: string, password = ''): Promise<ParsedFile> {
  try {
    return await openPfx(data, name, password)
  } catch (err) {
    if (err instanceof TooMuchWork) throw new UnreadableFile(`${name}: could not open the PFX: ${err.message}`)
    throw err
  }
}

async function openPfx(data: Buffer, name: string, password: string): Promise<ParsedFile> {
  // One engine per file: it counts the file's key derivations against the file's bound.
  const engine = new BoundedPfxEngine()
  const pwd = new TextEncoder().encode(password).buffer as ArrayBuffer
  let pfx: pkijs.PFX
  try {
    pfx = pkijs.PFX.fromBER(new Uint8Array(data).buffer)
    await pfx.parseInternalValues({ password: pwd, checkIntegrity: true }, engine)
  } catch (err) {
    if (err instanceof TooMuchWork) throw err
    throw new UnreadableFile(
      `${name}: could not open the PFX: ${/integrity|MAC|hmac/i.test(String(err)) ? 'wrong password' : 'not a PKCS#12 file this version can read'}`
    )
  }
  const auth = pfx.parsedValue?.authenticatedSafe
  if (!auth) throw new UnreadableFile(`${name}: the PFX holds nothing`)
  try {
    await auth.parseInternalValues({ safeContents: auth.safeContents.map(() => ({ password: pwd })) }, engine)
  } catch (err) {
    if (err instanceof TooMuchWork) throw err
    throw new UnreadableFile(
      `${name}: could not decrypt the PFX: wrong password, or legacy RC2/3DES encryption (re-export it with AES, e.g. openssl pkcs12 -export)`
    )
  }
  const certificates: X509Certificate[] = []
  let keyPem: string | null = null
  for (const contents of auth.parsedValue?.safeContents ?? []) {
    for (const bag of contents.value.safeBags) {
      if (bag.bagId === BAG_CERT) {
        const cert = bag.bagValue as pkijs.CertBag
        if (cert.certId !== CERT_X509) continue
        const der = Buffer.from((cert.parsedValue as pkijs.Certificate).toSchema().toBER(false))
        certificates.push(new X509Certificate(der))
      } else if (bag.bagId === BAG_SHROUDED_KEY || bag.bagId === BAG_KEY) {
        keyPem = await keyFromBag(bag, pwd, engine)
      }
    }
  }
  if (certificates.length === 0) throw new UnreadableFile(`${name}: the PFX holds no certificate`)
  return { certificates: orderChain(certificates), keyPem }
}

async function keyFromBag(bag: pkijs.SafeBag, pwd: ArrayBuffer, engine: pkijs.CryptoEngine): Promise<string | null> {
  try {
    let info: pkijs.PrivateKeyInfo
    if (bag.bagId === BAG_SHROUDED_KEY) {
      const shrouded = bag.bagValue as pkijs.PKCS8ShroudedKeyBag
      // Public in pkijs' JavaScript, typed protected: it decrypts the bag with the password.
      const open = shrouded as unknown as {
        parseInternalValues(p: { password: ArrayBuffer }, e: pkijs.CryptoEngine): Promise<void>
      }
      await open.parseInternalValues({ password: pwd }, engine)
      info = shrouded.parsedValue as pkijs.PrivateKeyInfo
    } else {
      info = bag.bagValue as unknown as pkijs.PrivateKeyInfo
    }
    const der = Buffer.from(info.toSchema().toBER(false))
    return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({
      type: 'pkcs8',
      format: 'pem'
    }) as string
  } catch (err) {
    if (err instanceof TooMuchWork) throw err
    return null
  }
}

/**
 * The leaf (a certificate that issued none of the others) first, then its issuers in order,
 * then whatever is left: files list certificates in any order.
 */
export function orderChain(certs: X509Certificate[]): X509Certificate[] {
  if (certs.length < 2) return certs
  const issuedOthers = (c: X509Certificate): boolean => certs.some((o) => o !== c && o.checkIssued(c))
  const leaf = certs.find((c) => !issuedOthers(c) && !c.ca) ?? certs.find((c) => !issuedOthers(c)) ?? certs[0]
  const out = [leaf]
  let cur = leaf
  for (;;) {
    const issuer = certs.find((c) => !out.includes(c) && cur.checkIssued(c))
    if (!issuer) break
    out.push(issuer)
    cur = issuer
  }
  return [...out, ...certs.filter((c) => !out.includes(c))]
}
