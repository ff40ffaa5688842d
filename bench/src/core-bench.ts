/**
 * In-process figures of the core that have no HTTP in front of them: local CA issuance and CSR
 * decode against the bare WebCrypto sign they are built on, and one scheduler pass over a big
 * store. Built by scripts/bench.mjs with vite (the same bundling as the app) and run as:
 *   node core-bench.mjs crypto <fresh data dir> <seconds per figure>
 *   node core-bench.mjs scheduler <data dir> <passes>
 * Prints one JSON line.
 */
import { decodeCsr } from '../../src-main/core/csr'
import { openService } from '../../src-main/core/service'
import { nodeCrypto, x509, type CryptoKeyPair } from '../../src-main/core/x509'

const [mode, dataDir, arg] = process.argv.slice(2)
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

async function crypto(seconds: number): Promise<Record<string, number>> {
  const service = openService({ dataDir })
  try {
    // Baseline: the one WebCrypto operation every issuance needs, an ECDSA P-256 / SHA-256
    // signature by the intermediate's kind of key over a certificate-sized message.
    const caKeys = (await nodeCrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, [
      'sign'
    ])) as CryptoKeyPair
    const tbs = nodeCrypto.getRandomValues(new Uint8Array(600))
    const bareSign = await rate(seconds, () =>
      nodeCrypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, caKeys.privateKey, tbs)
    )
    await service.localCa.rootPem() // the CA is created on first use; not part of the figure
    const out: Record<string, number> = { bareSignPerSecond: bareSign }
    for (const alg of ['P-256', 'RSA'] as const) {
      const pem = await csrFor(alg)
      const der = Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64')
      const now = new Date()
      out[`issue${alg === 'RSA' ? 'Rsa2048' : 'P256'}PerSecond`] = await rate(seconds, () =>
        service.localCa.issue({
          csrDer: der,
          names: ['bench.example.com'],
          profile: 'tls',
          subject: { CN: 'bench.example.com' },
          validFrom: now,
          validTill: new Date(now.getTime() + 199 * DAY_MS)
        })
      )
      out[`decode${alg === 'RSA' ? 'Rsa2048' : 'P256'}PerSecond`] = await rate(seconds, () => decodeCsr(pem))
    }
    return out
  } finally {
    service.close()
  }
}

async function scheduler(passes: number): Promise<Record<string, unknown>> {
  const service = openService({ dataDir })
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
    service.close()
  }
}

const result = mode === 'crypto' ? await crypto(Number(arg ?? 3)) : await scheduler(Number(arg ?? 5))
process.stdout.write(`${JSON.stringify(result)}\n`)
