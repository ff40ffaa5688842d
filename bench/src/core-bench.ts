/**
 * In-process figures of the core that have no HTTP in front of them: local CA issuance and CSR
 * decode against the bare node:crypto sign and verify they are built on, and one scheduler pass
 * over a big store. Built by scripts/bench.mjs with vite (the same bundling as the app) and run as:
 *   node core-bench.mjs crypto <fresh data dir> <seconds per figure and round> <rounds>
 *   node core-bench.mjs scheduler <data dir> <passes>
 * Prints one JSON line.
 */
import { createPublicKey, generateKeyPairSync, randomBytes, sign, verify } from 'node:crypto'
import { decodeCsr } from '../../src-main/core/certificates/csr'
import { bytesOf, children, contentsOf, readNode } from '../../src-main/core/certificates/der'
import { openService } from '../../src-main/core/service'
import { nodeCrypto, x509, type CryptoKeyPair } from '../../src-main/core/certificates/x509'

const [mode, dataDir, arg, ...rest] = process.argv.slice(2)
const DAY_MS = 86_400_000

/** Runs `op` for about `seconds` after a short warm-up; returns operations per second. */
async function rate(seconds: number, op: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 20; i++) await op()
  let n = 0
  const start = process.hrtime.bigint()
  const end = start + BigInt(Math.round(seconds * 1e9))
  while (process.hrtime.bigint() < end) {
    await op()
    n++
  }
  return n / (Number(process.hrtime.bigint() - start) / 1e9)
}

async function csrFor(alg: 'RSA' | 'P-256'): Promise<string> {
  const params =
    alg === 'RSA'
      ? { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 }
      : { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }
  const keys = (await nodeCrypto.subtle.generateKey(params, true, ['sign', 'verify'])) as CryptoKeyPair
  const csr = await x509.Pkcs10CertificateRequestGenerator.create(
    {
      name: 'CN=bench.example.com',
      keys,
      signingAlgorithm: params,
      extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'bench.example.com' }])]
    },
    nodeCrypto
  )
  return csr.toString('pem')
}

const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]

/**
 * Each figure against the bare node:crypto operation it is built on, with the same key type, in
 * alternating rounds (every figure once per round, `seconds` each); the median round is reported
 * for each rate, and the median of the per-round ratios for each ratio.
 * - Issuance signs with the CA intermediate's key (ECDSA P-256), whatever the leaf's key: its
 *   baseline is a bare P-256 / SHA-256 sign over a TBSCertificate of the same size.
 * - CSR decode checks the request's signature with the request's key: its baseline is one bare
 *   node:crypto verify of that very signature from the key bytes the request carries.
 */
async function crypto(seconds: number, rounds: number): Promise<Record<string, unknown>> {
  const service = await openService({ dataDir })
  try {
    await service.localCa.rootPem() // the CA is created on first use; not part of the figure
    const intermediateKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
    const now = new Date()
    const leaves: Record<string, { der: Buffer; pem: string }> = {}
    for (const alg of ['P-256', 'RSA'] as const) {
      const pem = await csrFor(alg)
      leaves[alg] = { pem, der: Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64') }
    }
    const issue = (alg: 'P-256' | 'RSA') => () =>
      service.localCa.issue({
        csrDer: leaves[alg].der,
        names: ['bench.example.com'],
        profile: 'tls',
        subject: { CN: 'bench.example.com' },
        validFrom: now,
        validTill: new Date(now.getTime() + 199 * DAY_MS)
      })
    const tbsSize = (await issue('P-256')()).certificateDer.length - 80
    const tbs = randomBytes(tbsSize)
    /**
     * The CSR's own signature checked by one bare node:crypto call, from the key bytes the CSR
     * carries (its SubjectPublicKeyInfo), as any program holding only the request must; and, for
     * context, with the key imported beforehand.
     */
    const bareVerify = (alg: 'P-256' | 'RSA', imported: boolean) => {
      const der = leaves[alg].der
      const [info, , sigBits] = children(der, readNode(der, 0))
      const signed = Buffer.from(bytesOf(der, info))
      const signature = contentsOf(der, sigBits).subarray(1)
      const spki = Buffer.from(bytesOf(der, children(der, info)[2]))
      const key = imported ? createPublicKey({ key: spki, format: 'der', type: 'spki' }) : null
      return async () => {
        const ok = verify('sha256', signed, key ?? { key: spki, format: 'der', type: 'spki' }, signature)
        if (!ok) throw new Error('could not verify the bench CSR')
      }
    }
    const figures: Record<string, () => Promise<unknown>> = {
      bareSignP256: async () => sign('sha256', tbs, intermediateKey),
      issueP256: issue('P-256'),
      issueRsa2048: issue('RSA'),
      bareVerifyP256: bareVerify('P-256', false),
      importedVerifyP256: bareVerify('P-256', true),
      decodeP256: () => decodeCsr(leaves['P-256'].pem),
      bareVerifyRsa2048: bareVerify('RSA', false),
      importedVerifyRsa2048: bareVerify('RSA', true),
      decodeRsa2048: () => decodeCsr(leaves.RSA.pem)
    }
    const perRound: Record<string, number[]> = Object.fromEntries(Object.keys(figures).map((k) => [k, []]))
    for (let r = 0; r < rounds; r++) {
      // Alternate the order too, so a slow stretch of a shared machine does not always hit one side.
      const names = r % 2 === 0 ? Object.keys(figures) : Object.keys(figures).reverse()
      for (const name of names) perRound[name].push(await rate(seconds, figures[name]))
    }
    const ratio = (x: string, base: string): number => median(perRound[x].map((v, i) => v / perRound[base][i]))
    const out: Record<string, unknown> = { rounds, secondsPerFigure: seconds, perRound }
    for (const name of Object.keys(figures)) out[`${name}PerSecond`] = median(perRound[name])
    out.issueP256Ratio = ratio('issueP256', 'bareSignP256')
    out.issueRsa2048Ratio = ratio('issueRsa2048', 'bareSignP256')
    out.decodeP256Ratio = ratio('decodeP256', 'bareVerifyP256')
    out.decodeRsa2048Ratio = ratio('decodeRsa2048', 'bareVerifyRsa2048')
    out.decodeP256ToImportedRatio = ratio('decodeP256', 'importedVerifyP256')
    out.decodeRsa2048ToImportedRatio = ratio('decodeRsa2048', 'importedVerifyRsa2048')
    return out
  } finally {
    await service.close()
  }
}

async function scheduler(passes: number): Promise<Record<string, unknown>> {
  const service = await openService({ dataDir })
  try {
    const times: number[] = []
    let report: Awaited<ReturnType<typeof service.scheduler.run>> | null = null
    for (let i = 0; i < passes; i++) {
      const t = process.hrtime.bigint()
      report = await service.scheduler.run()
      times.push(Number(process.hrtime.bigint() - t) / 1e6)
    }
    times.sort((a, b) => a - b)
    const done = report
      ? report.issued.length + report.expired.length + report.validation_needed.length + report.errors.length
      : 0
    return {
      medianMs: times[Math.floor(times.length / 2)],
      maxMs: times[times.length - 1],
      passes,
      actionsInLastPass: done
    }
  } finally {
    await service.close()
  }
}

const result =
  mode === 'crypto' ? await crypto(Number(arg ?? 1), Number(rest[0] ?? 5)) : await scheduler(Number(arg ?? 5))
process.stdout.write(`${JSON.stringify(result)}\n`)
