/**
 * Extension endpoints (not in reseller API v3.0; same envelope, same key, same paging rules):
 * what the servers of an order really present, checked on demand, and the expiry report of
 * the caller's certificates, issued here or imported.
 *
 *   GET  /orders/{order_id}/installation          the newest results, without connecting
 *   POST /orders/{order_id}/installation/check    connect now, answer the new results
 *   GET  /reports/expiring?days=N                 certificates ending within N days
 */
import { Type } from '@sinclair/typebox'
import { VERDICTS, type InstallationReport } from '../../core/installations'
import { MAX_REPORT_DAYS, type ExpiringCertificate } from '../../core/reports'
import type { Service } from '../../core/service'
import { caller } from '../auth'
import type { ApiRouter } from '../router'
import { IdParam, ok, StringEnum } from '../schemas'
import { ErrorRef } from './common'

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()])

const InstallationJson = Type.Object({
  order_id: Type.Integer(),
  order_number: Type.String(),
  verdict: Type.Union([StringEnum(VERDICTS), Type.Null()]),
  label: Type.String(),
  checked_at: Nullable(Type.String()),
  results: Type.Array(
    Type.Object({
      host: Type.String(),
      port: Type.Integer(),
      verdict: StringEnum(VERDICTS),
      label: Type.String(),
      detail: Type.String(),
      served_serial: Nullable(Type.String()),
      served_valid_till: Nullable(Type.String()),
      checked_at: Type.String()
    })
  )
})

const ExpiringJson = Type.Object({
  kind: StringEnum(['issued', 'imported'] as const),
  reference: Type.String(),
  order_id: Type.Union([Type.Integer(), Type.Null()]),
  imported_id: Type.Union([Type.Integer(), Type.Null()]),
  domain: Type.String(),
  valid_till: Type.String(),
  days_left: Type.Integer(),
  renewal_planned_at: Nullable(Type.String()),
  contact: Type.String()
})

const installationJson = (r: InstallationReport) => ({
  order_id: r.orderId,
  order_number: r.orderNumber,
  verdict: r.verdict,
  label: r.label,
  checked_at: r.checkedAt,
  results: r.results.map((x) => ({
    host: x.host,
    port: x.port,
    verdict: x.verdict,
    label: x.label,
    detail: x.detail,
    served_serial: x.servedSerial,
    served_valid_till: x.servedValidTill,
    checked_at: x.checkedAt
  }))
})

const expiringJson = (r: ExpiringCertificate) => ({
  kind: r.kind,
  reference: r.reference,
  order_id: r.orderId,
  imported_id: r.importedId,
  domain: r.domain,
  valid_till: r.validTill,
  days_left: r.daysLeft,
  renewal_planned_at: r.renewalPlannedAt,
  contact: r.contact
})

export function registerInstallationRoutes(r: ApiRouter, service: Service): void {
  r.get(
    '/orders/:order_id/installation',
    {
      summary: 'Extension: what the servers of an order present, as last checked',
      params: IdParam('order_id'),
      response: { 200: ok({ installation: InstallationJson }), ...ErrorRef }
    },
    async (request) => ({
      success: true as const,
      installation: installationJson(service.installations.report(caller(request).id, request.params.order_id))
    })
  )

  r.post(
    '/orders/:order_id/installation/check',
    {
      summary: 'Extension: connect to each name and endpoint of an order now and compare what is served',
      params: IdParam('order_id'),
      response: { 200: ok({ installation: InstallationJson }), ...ErrorRef }
    },
    async (request) => ({
      success: true as const,
      installation: installationJson(await service.installations.check(caller(request).id, request.params.order_id))
    })
  )

  r.get(
    '/reports/expiring',
    {
      summary: 'Extension: certificates ending within `days`, issued here or imported, with who to contact',
      querystring: Type.Object({ days: Type.Integer({ minimum: 0, maximum: MAX_REPORT_DAYS }) }),
      response: { 200: ok({ certificates: Type.Array(ExpiringJson) }), ...ErrorRef }
    },
    async (request) => ({
      success: true as const,
      certificates: service.reports
        .expiring({ days: request.query.days, resellerId: caller(request).id })
        .map(expiringJson)
    })
  )
}
