import type { Service } from '../../core/service'
import { caller } from '../auth'
import { resellerJson, statsJson } from '../present'
import type { ApiRouter } from '../router'
import { AccountResponse, StatsResponse } from '../schemas'

export function registerAccountRoutes(r: ApiRouter, service: Service): void {
  r.get(
    '/account',
    {
      operationId: 'getAccount',
      tags: ['Account'],
      summary: 'Show your reseller account',
      description: 'Your account: name, company, discount rate, credit balance, group and totals.',
      response: { 200: AccountResponse }
    },
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
      operationId: 'getStats',
      tags: ['Account'],
      summary: 'Show your sales statistics',
      description:
        'Order counts, revenue (all time and this month, UTC), your balance, and chart data: sales per day for the last 30 days, orders per brand and per status.',
      response: { 200: StatsResponse }
    },
    async (request) => ({ success: true as const, ...statsJson(service.stats.stats(caller(request).id)) })
  )
}
