/**
 * The local CA's CRL over HTTP, at the address every leaf of the local CA names in its CRL
 * Distribution Points (RFC 5280 §4.2.1.13: an HTTP URI serves the DER CRL, `application/
 * pkix-crl` per RFC 2585 §4.2). It is public like a CA's CRL: no API key.
 */
import type { FastifyRequest } from 'fastify'
import { ServiceError } from '../../core/errors'
import { CRL_PATH } from '../../core/certificates/local-ca-crl'
import type { Service } from '../../core/service'
import type { ApiRouter } from '../router'

/** The CRL needs no API key: relying parties fetch it without one. */
export const isCrlPath = (request: FastifyRequest): boolean =>
  request.method === 'GET' && request.url.split('?')[0] === CRL_PATH

export function registerCrlRoutes(r: ApiRouter, service: Service): void {
  r.get(CRL_PATH, { hide: true }, async (_request, reply) => {
    const crl = await service.crl.current()
    if (!crl) throw new ServiceError('not_found', 'the local CA has signed no certificate yet, so it has no CRL')
    // Cached by clients at most until the next one CertDesk will sign, never past nextUpdate.
    const seconds = Math.max(0, Math.floor((crl.nextUpdate.getTime() - service.ctx.clock().getTime()) / 1000))
    return reply
      .type('application/pkix-crl')
      .header('cache-control', `public, max-age=${Math.min(seconds, 3600)}`)
      .header('last-modified', crl.thisUpdate.toUTCString())
      .send(crl.der)
  })
}
