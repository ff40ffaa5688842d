/**
 * Extension endpoints (not in reseller API v3.0; same envelope, same key, same paging rules):
 * what the servers of an order really present, checked on demand, and the expiry report of
 * the caller's certificates, issued here or imported.
 *
 *   GET  /orders/{order_id}/installation          the newest results, without connecting
 *   POST /orders/{order_id}/installation/check    connect now, answer the new results
 *   GET  /reports/expiring?days=N                 certificates ending within N days
 */
import type { Static } from '@sinclair/typebox'
import type { InstallationReport } from '../../core/installations'
import type { ExpiringCertificate } from '../../core/certificates/reports'
import type { Service } from '../../core/service'
import { caller } from '../auth'
import type { ApiRouter } from '../router'
import {
  ExpiringQuery,
  ExpiringResponse,
  IdParams,
  InstallationResponse,
  type ExpiringJson,
  type InstallationJson
} from '../schemas'

const installationJson = (r: InstallationReport): Static<typeof InstallationJson> => ({
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

const expiringJson = (r: ExpiringCertificate): Static<typeof ExpiringJson> => ({
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
      operationId: 'getInstallation',
      tags: ['Installations'],
      summary: "Show what an order's servers presented when last checked",
      description:
        'The newest installation check of each name and endpoint of the order, compared with the certificate issued here, without connecting anywhere.',
      params: IdParams('order_id', 'The order.'),
      response: { 200: InstallationResponse }
    },
    async (request) => ({
      success: true as const,
      installation: installationJson(await service.installations.report(caller(request).id, request.params.order_id))
    })
  )

  r.post(
    '/orders/:order_id/installation/check',
    {
      operationId: 'checkInstallation',
      tags: ['Installations'],
      summary: "Check now what an order's servers present",
      description:
        'Connects to each name and endpoint of the order now, compares what is served with the certificate issued here, and answers the new results.',
      params: IdParams('order_id', 'The order.'),
      response: { 200: InstallationResponse }
    },
    async (request) => ({
      success: true as const,
      installation: installationJson(await service.installations.check(caller(request).id, request.params.order_id))
    })
  )

  r.get(
    '/reports/expiring',
    {
      operationId: 'listExpiringCertificates',
      tags: ['Reports'],
      summary: 'List certificates that end soon',
      description:
        'Your certificates ending within the given number of days, issued here or imported, soonest first, with the planned renewal and who to contact.',
      querystring: ExpiringQuery,
      response: { 200: ExpiringResponse }
    },
    async (request) => ({
      success: true as const,
      certificates: (await service.reports.expiring({ days: request.query.days, resellerId: caller(request).id })).map(
        expiringJson
      )
    })
  )
}
