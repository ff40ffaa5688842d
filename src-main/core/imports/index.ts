/**
 * Certificates bought elsewhere: brought in from files (PEM, DER, PFX), a folder scanned
 * recursively, or what live endpoints serve; deduplicated by SHA-256 fingerprint per reseller,
 * tied to a reseller and a domain, tracked for expiry (reports.ts), and offered as a
 * replacement order here ("renew with CertDesk").
 *
 * A private key found with a certificate (in its PFX or PEM bundle, or in a key file beside it:
 * `site.key` beside `site.crt`, certbot's `privkey.pem` beside `cert.pem`) stays where it is and
 * is only reported; the admin imports keys explicitly (`withKeys`), and then only a key whose
 * public key is the certificate's, wrapped by the key vault like every other kept key.
 */
import { createPrivateKey, createPublicKey, type KeyObject, type X509Certificate } from 'node:crypto'
import { isIP } from 'node:net'
import { basename, dirname, join, resolve } from 'node:path'
import type { Catalogue, PricedProduct } from '../billing/catalogue'
import type { CoreContext } from '../context'
import { baseDomain, isDomainName, isWildcard } from '../dcv/domains'
import { invalid, notFound } from '../errors'
import { recordEvent } from '../events'
import { probe, PROBE_TIMEOUT_MS } from '../installations/probe'
import type { KeyVault } from '../certificates/key-vault'
import type { CreatedOrder, Orders } from '../orders/orders'
import { pool } from '../pool'
import type { Reseller, Resellers } from '../billing/resellers'
import { isPresent } from '../exclusive-file'
import { isoTimestamp } from '../time'
import { x509 } from '../certificates/x509'
import type {
  ImportedCertificate,
  ImportOptions,
  ImportOutcome,
  ReplacementQuote,
  ValidationLevel
} from '../../../src-shared/records'
import { parseCertificateFile, UnreadableFile, type ParsedFile } from './parse'
import { readImportFile } from './read-file'
import { besideKeyNames, scanFolder, type Candidate } from './scan'

/** Addresses one endpoint scan may cover: a /22 (1,024 addresses) at most. */
export const MAX_SCAN_ADDRESSES = 1024
const SCAN_CONCURRENCY = 32

/** CA/Browser Forum reserved policy identifiers (BR §7.1.6.1): what a certificate says it validated. */
const POLICY_LEVELS: Record<string, 'dv' | 'ov' | 'ev'> = {
  '2.23.140.1.2.1': 'dv',
  '2.23.140.1.2.2': 'ov',
  '2.23.140.1.2.3': 'ov',
  '2.23.140.1.1': 'ev'
}

export type {
  ImportedCertificate,
  ImportOptions,
  ImportOutcome,
  ReplacementQuote,
  ValidationLevel
} from '../../../src-shared/records'

interface Row {
  id: number
  reseller_id: number
  fingerprint: string
  common_name: string | null
  names: string
  domain: string
  issuer: string
  serial: string
  valid_from: string
  valid_till: string
  validation_level: ValidationLevel
  source: string
  key_kept: number
  replacement_order_id: number | null
  created_at: string
}

export class Imports {
  constructor(
    private readonly ctx: CoreContext,
    private readonly orders: Orders,
    private readonly resellers: Resellers,
    private readonly catalogue: Catalogue,
    private readonly keyVault: KeyVault
  ) {}

  /**
   * Imports each file; a PFX opens with `password`. A file named here is read where it leads,
   * through a link too (the admin named it). With `withKeys`, the key file beside each
   * certificate (besideKeyNames) is read as well.
   */
  async importFiles(resellerId: number, paths: string[], opts: ImportOptions = {}): Promise<ImportOutcome> {
    await this.reseller(resellerId)
    const named = paths.map((p) => resolve(p))
    const candidates: Candidate[] = named.map((p) => ({ path: p, open: p, dir: dirname(p), follow: true }))
    if (opts.withKeys) {
      const known = new Set(named)
      for (const p of named) {
        for (const k of besideKeyNames(p)) {
          const beside = join(dirname(p), k)
          if (known.has(beside) || !isPresent(beside)) continue
          known.add(beside)
          candidates.push({ path: beside, open: beside, dir: dirname(p), follow: true, besideOnly: true })
        }
      }
    }
    const out = emptyOutcome()
    await this.importCandidates(resellerId, candidates, null, opts, out)
    return out
  }

  /** Imports a file the user picked in the UI (its bytes, not a path). */
  async importUpload(resellerId: number, name: string, data: Buffer, opts: ImportOptions = {}): Promise<ImportOutcome> {
    await this.reseller(resellerId)
    const out = emptyOutcome()
    const shown =
      basename(String(name))
        .replace(/[^\w.@+-]/g, '_')
        .slice(0, 120) || 'upload'
    const source = `upload:${shown}`
    try {
      const parsed = await parseCertificateFile(data, shown, opts.password)
      if (parsed.certificates.length === 0) {
        out.skipped.push({
          source,
          reason: `${shown} holds a key but no certificate; keys are imported only with their certificate`
        })
      } else await this.add(resellerId, parsed, source, opts, out)
    } catch (err) {
      if (!(err instanceof UnreadableFile)) throw err
      out.skipped.push({ source, reason: err.message })
    }
    return out
  }

  /**
   * Imports every certificate file under `dir` (scan.ts says which). Symbolic links are listed
   * under `skipped` with why; with `followLinks`, those that stay inside `dir` are followed.
   * Each file is opened once and checked through the opened handle (read-file.ts).
   */
  async importFolder(resellerId: number, dir: string, opts: ImportOptions = {}): Promise<ImportOutcome> {
    const scan = scanFolder(resolve(dir), opts.followLinks === true)
    await this.reseller(resellerId)
    const out = emptyOutcome()
    out.skipped.push(...scan.skipped)
    await this.importCandidates(resellerId, scan.candidates, scan.realRoot, opts, out)
    return out
  }

  /**
   * Imports what live endpoints serve: `host:port`, `address:port`, or a range the admin
   * entered (`192.168.1.0/24:443`, at most MAX_SCAN_ADDRESSES addresses). The admin names these
   * targets, so local addresses are allowed here, unlike the automatic checks.
   */
  async importEndpoints(resellerId: number, specs: string[], timeoutMs = PROBE_TIMEOUT_MS): Promise<ImportOutcome> {
    await this.reseller(resellerId)
    const targets = specs.flatMap(expandSpec)
    if (targets.length > MAX_SCAN_ADDRESSES) {
      throw invalid(`could not scan: ${targets.length} endpoints is more than ${MAX_SCAN_ADDRESSES} in one scan`)
    }
    const served = await pool(targets, SCAN_CONCURRENCY, async (t) => {
      const address = isIP(t.host) ? t.host : await lookupAddress(t.host)
      if (!address) return { reachable: false as const, reason: `${t.host} does not resolve` }
      return probe({ host: t.host, address, port: t.port }, timeoutMs)
    })
    const out = emptyOutcome()
    for (const [i, r] of served.entries()) {
      const source = `endpoint:${targets[i].host}:${targets[i].port}`
      if (!r.reachable) out.skipped.push({ source, reason: r.reason })
      else await this.add(resellerId, { certificates: r.sent, keyPem: null }, source, {}, out)
    }
    return out
  }

  async list(resellerId: number): Promise<ImportedCertificate[]> {
    await this.reseller(resellerId)
    return (
      (await this.ctx.store.all(
        'SELECT * FROM imported_certificates WHERE reseller_id = ? ORDER BY valid_till, id',
        resellerId
      )) as Row[]
    ).map(imported)
  }

  async get(resellerId: number, id: number): Promise<ImportedCertificate> {
    const row = (await this.ctx.store.get(
      'SELECT * FROM imported_certificates WHERE id = ? AND reseller_id = ?',
      id,
      resellerId
    )) as Row | undefined
    if (!row) throw notFound(`imported certificate ${id} not found`)
    return imported(row)
  }

  /** The imported certificate with its chain as PEM, for download. */
  async pem(resellerId: number, id: number): Promise<{ certificatePem: string; chainPem: string }> {
    await this.get(resellerId, id)
    const row = (await this.ctx.store.get(
      'SELECT certificate_pem, chain_pem FROM imported_certificates WHERE id = ?',
      id
    )) as { certificate_pem: string; chain_pem: string }
    return { certificatePem: row.certificate_pem, chainPem: row.chain_pem }
  }

  /** The cheapest product here that covers the same names at the same validation level, priced for this reseller. */
  async replacementQuote(resellerId: number, id: number): Promise<ReplacementQuote> {
    const c = await this.get(resellerId, id)
    const reseller = await this.reseller(resellerId)
    const wildcardNames = c.names.filter(isWildcard)
    const primary = c.commonName && c.names.includes(c.commonName) ? c.commonName : c.names[0]
    const others = c.names.filter((n) => n !== primary)
    // `www.` beside the bare name comes free with single-name products, as CAs issue them.
    const single = others.length === 0 || (others.length === 1 && others[0] === `www.${primary}`)
    const shape =
      isWildcard(primary) && others.every((n) => n === baseDomain(primary)) ? 'wildcard' : single ? 'single' : 'multi'
    const level = c.validationLevel === 'unknown' ? 'dv' : c.validationLevel
    const candidates = (await this.products(reseller)).filter(
      (p) => p.fulfillment === 'certificate' && p.validationType === level && p.domainType === shape
    )
    let best: ReplacementQuote | null = null
    for (const p of candidates) {
      const input = {
        productId: p.id,
        domain: primary,
        period: 12,
        sanCount:
          shape === 'multi' ? Math.max(0, others.length - wildcardNames.filter((n) => n !== primary).length) : 0,
        sanWildcardCount: shape === 'multi' ? wildcardNames.filter((n) => n !== primary).length : 0
      }
      try {
        const quote = await this.orders.quoteView(reseller, input)
        if (!best || quote.total < best.quote.total) best = { importedId: c.id, productId: p.id, quote, input }
      } catch {
        // A product that cannot take these names (too many SANs, no wildcard SANs) is no offer.
      }
    }
    if (!best) {
      throw invalid(
        `could not offer a replacement for ${c.domain}: no ${level.toUpperCase()} ${shape} product here covers its names`
      )
    }
    return best
  }

  /** Places the replacement order in one step and ties it to the imported certificate. */
  async renew(resellerId: number, id: number, payment: 'credit' | 'invoice' = 'credit'): Promise<CreatedOrder> {
    const c = await this.get(resellerId, id)
    if (c.replacementOrderId !== null) {
      throw invalid(`could not renew ${c.domain}: order ${c.replacementOrderId} already replaces it`)
    }
    const q = await this.replacementQuote(resellerId, id)
    const created = await this.orders.create(await this.reseller(resellerId), q.input, payment)
    await this.ctx.store.run(
      'UPDATE imported_certificates SET replacement_order_id = ? WHERE id = ? AND replacement_order_id IS NULL',
      created.order.id,
      id
    )
    return created
  }

  /**
   * Reads the candidates one folder at a time, pairs each certificate without a key of its own
   * with the key file of the same folder whose public key is the certificate's, and adds them.
   */
  private async importCandidates(
    resellerId: number,
    candidates: Candidate[],
    within: string | null,
    opts: ImportOptions,
    out: ImportOutcome
  ): Promise<void> {
    const byDir = new Map<string, Candidate[]>()
    for (const c of candidates) byDir.set(c.dir, [...(byDir.get(c.dir) ?? []), c])
    for (const group of byDir.values()) {
      const read: { c: Candidate; parsed: ParsedFile }[] = []
      for (const c of group) {
        try {
          const data = readImportFile(c.open, { follow: c.follow, within })
          read.push({ c, parsed: await parseCertificateFile(data, basename(c.path), opts.password) })
        } catch (err) {
          if (!(err instanceof UnreadableFile)) throw err
          if (!c.besideOnly) out.skipped.push({ source: `file:${c.path}`, reason: err.message })
        }
      }
      const keys = new Map<string, { c: Candidate; keyPem: string; kept: boolean }>()
      for (const { c, parsed } of read) {
        const spki = parsed.certificates.length === 0 && parsed.keyPem ? spkiOf(createPrivateKey(parsed.keyPem)) : null
        if (spki && parsed.keyPem) keys.set(spki, { c, keyPem: parsed.keyPem, kept: false })
      }
      const certs = read.filter((r) => r.parsed.certificates.length > 0 && !r.c.besideOnly)
      for (const { c, parsed } of certs) {
        const beside = !parsed.keyPem && opts.withKeys ? keys.get(spkiOf(parsed.certificates[0].publicKey)) : undefined
        const keyKept = await this.add(
          resellerId,
          beside ? { ...parsed, keyPem: beside.keyPem } : parsed,
          `file:${c.path}`,
          opts,
          out
        )
        if (beside && keyKept) beside.kept = true
      }
      // Keys not kept stay where they are and are listed; one named like a certificate here but
      // holding another key is said to be so.
      for (const k of keys.values()) {
        if (k.kept) continue
        if (!k.c.besideOnly) out.keysLeftInPlace.push(k.c.path)
        const partner = certs.find((r) => besideKeyNames(r.c.path).includes(basename(k.c.path)))
        if (opts.withKeys && partner) {
          out.skipped.push({
            source: `file:${k.c.path}`,
            reason: `${basename(k.c.path)} does not belong to ${basename(partner.c.path)} (another public key); the key was not kept`
          })
        }
      }
    }
  }

  /** Adds one certificate; answers whether its key was kept. */
  private async add(
    resellerId: number,
    parsed: ParsedFile,
    source: string,
    opts: ImportOptions,
    out: ImportOutcome
  ): Promise<boolean> {
    const [leaf, ...rest] = parsed.certificates
    const fingerprint = leaf.fingerprint256.replace(/:/g, '').toLowerCase()
    const existing = (await this.ctx.store.get(
      'SELECT id FROM imported_certificates WHERE reseller_id = ? AND fingerprint = ?',
      resellerId,
      fingerprint
    )) as { id: number } | undefined
    if (existing) {
      out.duplicates.push({ source, id: existing.id })
      return false
    }
    if (leaf.ca) {
      // certbot's chain.pem, a CA bundle: issuers only, nothing a server presents as its own.
      out.skipped.push({ source, reason: 'it holds only CA certificates (issuers), no server certificate' })
      return false
    }
    const names = dnsNames(leaf)
    const cn = commonName(leaf)
    const domain = (cn && isDomainName(cn, true) ? cn : names[0]) ?? null
    if (!domain) {
      out.skipped.push({ source, reason: 'the certificate names no domain (no DNS name in its subject or SANs)' })
      return false
    }
    const keyMatches = parsed.keyPem !== null && sameKey(parsed.keyPem, leaf)
    const keep = opts.withKeys === true && keyMatches && parsed.keyPem !== null
    if (parsed.keyPem && !opts.withKeys) out.keysLeftInPlace.push(source.replace(/^(file|upload):/, ''))
    const now = this.ctx.clock()
    const db = this.ctx.store
    const id = await db.tx(async () => {
      const info = await db.insert(
        `INSERT INTO imported_certificates (reseller_id, fingerprint, common_name, names, domain, issuer, serial, valid_from,
             valid_till, validation_level, certificate_pem, chain_pem, source, key_kept, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`,
        resellerId,
        fingerprint,
        cn,
        JSON.stringify(names.length ? names : [domain]),
        domain,
        leaf.issuer.split('\n').join(', '),
        leaf.serialNumber.toUpperCase(),
        isoTimestamp(new Date(leaf.validFrom)),
        isoTimestamp(new Date(leaf.validTo)),
        validationLevel(leaf),
        leaf.toString(),
        rest.map((c) => c.toString()).join(''),
        source,
        isoTimestamp(now)
      )
      const newId = info
      if (keep && parsed.keyPem) {
        await db.run(
          'INSERT INTO imported_keys (certificate_id, wrapped_key, created_at) VALUES (?, ?, ?)',
          newId,
          await this.keyVault.wrapImported(newId, parsed.keyPem),
          isoTimestamp(now)
        )
        await db.run('UPDATE imported_certificates SET key_kept = 1 WHERE id = ?', newId)
      }
      await recordEvent(db, now, {
        type: 'certificate.imported',
        resellerId,
        message: `imported the certificate of ${domain} (valid till ${isoTimestamp(new Date(leaf.validTo))})`,
        data: { imported_id: newId, fingerprint, source_kind: source.split(':')[0] }
      })
      return newId
    })
    if (opts.withKeys && parsed.keyPem && !keyMatches) {
      out.skipped.push({ source, reason: 'the key beside the certificate does not belong to it; the key was not kept' })
    }
    out.imported.push(await this.get(resellerId, id))
    return keep
  }

  private async reseller(resellerId: number): Promise<Reseller> {
    return await this.resellers.get(resellerId)
  }

  private async products(reseller: Reseller): Promise<PricedProduct[]> {
    return await this.catalogue.list(reseller.groupId)
  }
}

function emptyOutcome(): ImportOutcome {
  return { imported: [], duplicates: [], skipped: [], keysLeftInPlace: [] }
}

const imported = (r: Row): ImportedCertificate => ({
  id: r.id,
  resellerId: r.reseller_id,
  fingerprint: r.fingerprint,
  commonName: r.common_name,
  names: JSON.parse(r.names) as string[],
  domain: r.domain,
  issuer: r.issuer,
  serial: r.serial,
  validFrom: r.valid_from,
  validTill: r.valid_till,
  validationLevel: r.validation_level,
  source: r.source,
  keyKept: r.key_kept === 1,
  replacementOrderId: r.replacement_order_id,
  createdAt: r.created_at
})

function dnsNames(c: X509Certificate): string[] {
  const san = c.subjectAltName ?? ''
  return [...san.matchAll(/DNS:([^,\s]+)/g)].map((m) => m[1].toLowerCase()).filter((n) => isDomainName(n, true))
}

function commonName(c: X509Certificate): string | null {
  const m = /^CN=(.+)$/m.exec(c.subject)
  return m ? m[1].trim().toLowerCase() : null
}

function validationLevel(c: X509Certificate): ValidationLevel {
  try {
    const cert = new x509.X509Certificate(c.raw)
    const ext = cert.getExtension(x509.CertificatePolicyExtension)
    for (const p of ext?.policies ?? []) if (POLICY_LEVELS[p]) return POLICY_LEVELS[p]
  } catch {
    // An unreadable policies extension tells nothing about the level.
  }
  return 'unknown'
}

/** The DER SubjectPublicKeyInfo of a key, as hex: what a certificate and its private key share. */
function spkiOf(key: KeyObject): string {
  return (key.type === 'public' ? key : createPublicKey(key)).export({ type: 'spki', format: 'der' }).toString('hex')
}

function sameKey(keyPem: string, leaf: X509Certificate): boolean {
  try {
    return spkiOf(createPrivateKey(keyPem)) === spkiOf(leaf.publicKey)
  } catch {
    return false
  }
}

/** `host:port`, `address:port`, `[v6]:port` or `a.b.c.d/nn:port` as the targets they name. */
export function expandSpec(spec: string): { host: string; port: number }[] {
  const s = spec.trim()
  const m = /^(?:\[([0-9a-f:.]+)\]|([^:\s/]+)(?:\/(\d{1,2}))?):(\d{1,5})$/i.exec(s)
  const bad = (): never => {
    throw invalid(
      `could not scan ${JSON.stringify(s).slice(0, 80)}: write host:port, address:port or a range such as 192.168.1.0/24:443`
    )
  }
  if (!m) return bad()
  const port = Number(m[4])
  if (port < 1 || port > 65535) return bad()
  if (m[1]) return isIP(m[1]) === 6 ? [{ host: m[1], port }] : bad()
  const host = m[2].toLowerCase()
  if (m[3] === undefined) return isIP(host) === 4 || isDomainName(host) ? [{ host, port }] : bad()
  const bits = Number(m[3])
  if (isIP(host) !== 4 || bits > 32) return bad()
  const size = 2 ** (32 - bits)
  if (size > MAX_SCAN_ADDRESSES) {
    throw invalid(
      `could not scan ${s}: a /${bits} holds ${size} addresses; at most ${MAX_SCAN_ADDRESSES} (a /22) in one scan`
    )
  }
  const ip = host.split('.').reduce((n, p) => n * 256 + Number(p), 0)
  const start = ip - (ip % size)
  const out: { host: string; port: number }[] = []
  for (let i = 0; i < size; i++) {
    const n = start + i
    out.push({ host: [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.'), port })
  }
  return out
}

async function lookupAddress(host: string): Promise<string | null> {
  const { lookup } = await import('node:dns/promises')
  try {
    return (await lookup(host)).address
  } catch {
    return null
  }
}
