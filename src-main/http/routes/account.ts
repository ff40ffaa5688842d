import type { Service } from '../../core/service'
import { caller } from '../auth'
import { resellerJson, statsJson } from '../present'
import type { ApiRouter } from '../router'
import { ok, ResellerJson, StatsResponse } from '../schemas'
import { ErrorRef } from './common'

export function registerAccountRoutes(r: ApiRouter, service: Service): void {
  r.get(
    '/account',
    { summary: 'Account information', response: { 200: ok({ reseller: ResellerJson }), ...ErrorRef } },
    async (request) => {
      const reseller = service.resellers.get(caller(request).id)
      const group = reseller.groupId === null ? undefined : service.catalogue.group(reseller.groupId)
      return {
        success: true as const,
        reseller: resellerJson(reseller, group?.name ?? null, service.stats.revenue(reseller.id))
      }
    }
  )

  r.get(
    '/stats',
    {
      summary: 'Statistics and chart data',
      response: { 200: StatsResponse, ...ErrorRef }
    },
    async (request) => ({ success: true as const, ...statsJson(service.stats.stats(caller(request).id)) })
  )
}
