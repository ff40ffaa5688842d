/**
 * The ACME server's signer takes the serial, the validity and the RFC 9773 CertID from the leaf
 * the local CA built, without parsing it back: each must be what a reader of the issued
 * certificate finds in it.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ariCertId, localCaSigner } from '../../../src-main/core/acme-server/signer'
import { decodeCsr } from '../../../src-main/core/certificates/csr'
import { CA_WRAPPING_KEY_SECRET } from '../../../src-main/core/certificates/local-ca'
import { type Service } from '../../../src-main/core/service'
import { openService } from '../../support/engine'
import { x509 } from '../../../src-main/core/certificates/x509'
import { manualClock } from '../../support/clock'
import { opensslCsr } from '../../support/csr'

const clock = manualClock('2026-11-21T10:00:00Z')
let dataDir: string
let service: Service

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'certdesk-signer-'))
  service = await openService({ dataDir, clock: clock.clock })
})
afterAll(async () => {
  await service.ctx.secrets.delete(CA_WRAPPING_KEY_SECRET)
  await service.close()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('ACME signer', () => {
  it('reports the serial, validity and CertID that the issued leaf carries', async () => {
    const signer = localCaSigner(service.localCa)
    for (const key of ['ec:P-256', 'rsa:2048'] as const) {
      for (let i = 0; i < 8; i++) {
        const csr = await decodeCsr(opensslCsr([`n${i}.example.com`], key))
        const from = new Date('2026-11-21T10:00:00.750Z')
        const till = new Date('2027-05-01T09:59:59.250Z')
        const issued = await signer.issue(csr.der, [`n${i}.example.com`], from, till)
        const leaf = new x509.X509Certificate(issued.chainPem.split(/(?<=-----END CERTIFICATE-----)/)[0])
        expect(issued.serialHex).toBe(leaf.serialNumber.toLowerCase())
        expect(issued.ariId).toBe(ariCertId(leaf))
        expect(issued.notBefore.getTime()).toBe(leaf.notBefore.getTime())
        expect(issued.notAfter.getTime()).toBe(leaf.notAfter.getTime())
      }
    }
  })
})
