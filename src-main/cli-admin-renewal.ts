/**
 * `certdesk admin acme-server renewal-window-past CERT`: the embedded ACME server moves one
 * certificate's renewal window (RFC 9773 §4.2) into the past, as a CA does before a mass
 * revocation, so every client that follows ARI renews it at its next look. CERT is the
 * certificate's RFC 9773 CertID or its serial number in hex. A thin adapter over the core.
 */
import { commandKey, print, UsageError, type Values } from './cli-args'
import { AcmeError } from './core/acme-server'
import { ServiceError } from './core/errors'
import type { Service } from './core/service'
import { isoTimestamp } from './core/time'

export const RENEWAL_USAGE = `  certdesk admin [--data-dir D] acme-server renewal-window-past CERT-ID|SERIAL`

export const isRenewalCommand = (noun: string | undefined): boolean => noun === 'acme-server'

export async function renewalAdmin(service: Service, words: string[], _v: Values): Promise<number> {
  const key = commandKey(words)
  if (key !== 'acme-server renewal-window-past') throw new UsageError(`unknown command ${words.join(' ')}`)
  const cert = words[2]
  if (!cert) throw new UsageError('acme-server renewal-window-past needs the certificate (CertID or serial)')
  const moved = await service.acmeServer.certificates.moveWindowToPast(cert).catch((err: unknown) => {
    throw err instanceof AcmeError ? new ServiceError('not_found', err.message) : err
  })
  print({
    success: true,
    cert_id: moved.certId,
    suggested_window: { start: isoTimestamp(moved.start), end: isoTimestamp(moved.end) }
  })
  return 0
}
