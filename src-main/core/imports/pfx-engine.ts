/**
 * The crypto engine a PFX is opened with: pkijs' own, with a bound on the work a file may ask
 * for and every key derivation off the event loop.
 *
 * A PKCS#12 file names its own iteration counts (the MAC's, RFC 7292 Appendix B; each PBES2
 * key's, RFC 8018 §6.2), so a file of a few hundred bytes can ask for millions of hash rounds.
 * Each count is checked before its derivation starts: at most MAX_PFX_ITERATIONS per derivation
 * and MAX_PFX_FILE_ITERATIONS for the whole file (docs/decisions.md, "PKCS#12 iteration limit").
 * The MAC key is derived in a worker thread (pkcs12-kdf.ts); PBKDF2 runs in Node's thread pool
 * through WebCrypto, as pkijs already does.
 */
import { createHmac, timingSafeEqual, webcrypto } from 'node:crypto'
import * as pkijs from 'pkijs'
import { bmpPassword, PKCS12_MAC_ID, pkcs12Derive, pkcs12HashSize } from './pkcs12-kdf'

/**
 * Most iterations one key derivation of an imported PFX may ask for: OpenSSL 3 writes 2,048,
 * Java's keytool 10,000, CertDesk's own exports 100,000, and tools that follow OWASP's
 * PBKDF2-HMAC-SHA256 guidance 600,000; 1,000,000 leaves headroom above all of them.
 */
export const MAX_PFX_ITERATIONS = 1_000_000
/** Most iterations all derivations of one file may ask for together: the MAC and three keys at the limit. */
export const MAX_PFX_FILE_ITERATIONS = 4 * MAX_PFX_ITERATIONS

/** A file that asks for more work than CertDesk does for one file; says which part and the limit. */
export class TooMuchWork extends Error {}

const PBES2 = '1.2.840.113549.1.5.13'

const count = (n: number): string => n.toLocaleString('en-US')

export class BoundedPfxEngine extends pkijs.CryptoEngine {
  private spent = 0

  constructor() {
    super({
      name: 'certdesk-import',
      crypto: webcrypto as unknown as ConstructorParameters<typeof pkijs.CryptoEngine>[0]['crypto']
    })
  }

  /** Counts a derivation of `iterations` against the limits before it starts. */
  private charge(iterations: number, part: string): void {
    if (!Number.isSafeInteger(iterations) || iterations < 1) {
      throw new TooMuchWork(`${part} has an iteration count that is not a positive whole number`)
    }
    if (iterations > MAX_PFX_ITERATIONS) {
      throw new TooMuchWork(
        `${part} asks for ${count(iterations)} iterations; CertDesk opens at most ${count(MAX_PFX_ITERATIONS)}`
      )
    }
    if (this.spent + iterations > MAX_PFX_FILE_ITERATIONS) {
      throw new TooMuchWork(
        `its key derivations ask for more than ${count(MAX_PFX_FILE_ITERATIONS)} iterations in all, the most CertDesk does for one file`
      )
    }
    this.spent += iterations
  }

  /** The MAC check of RFC 7292 §5.1 (password integrity mode), its key derived in a worker. */
  override async verifyDataStampedWithPassword(
    p: pkijs.CryptoEngineVerifyDataStampedWithPasswordParams
  ): Promise<boolean> {
    const size = pkcs12HashSize(p.hashAlgorithm)
    if (size === null) throw new Error(`unsupported MAC hash ${p.hashAlgorithm}`)
    this.charge(p.iterationCount, 'its MAC')
    const key = await pkcs12Derive({
      hash: p.hashAlgorithm,
      id: PKCS12_MAC_ID,
      password: bmpPassword(p.password),
      salt: new Uint8Array(p.salt),
      iterations: p.iterationCount,
      length: size
    })
    const mac = createHmac(p.hashAlgorithm.replace('-', '').toLowerCase(), key)
      .update(new Uint8Array(p.contentToVerify))
      .digest()
    const expected = Buffer.from(new Uint8Array(p.signatureToVerify))
    return mac.length === expected.length && timingSafeEqual(mac, expected)
  }

  /** PBES2 decryption (RFC 8018 §6.2), after its PBKDF2 iteration count is checked. */
  override async decryptEncryptedContentInfo(p: pkijs.CryptoEngineDecryptParams): Promise<ArrayBuffer> {
    const alg = p.encryptedContentInfo.contentEncryptionAlgorithm
    if (alg.algorithmId === PBES2) {
      const pbes2 = new pkijs.PBES2Params({ schema: alg.algorithmParams })
      const pbkdf2 = new pkijs.PBKDF2Params({ schema: pbes2.keyDerivationFunc.algorithmParams })
      this.charge(pbkdf2.iterationCount, 'an encrypted part')
    }
    return super.decryptEncryptedContentInfo(p)
  }
}
