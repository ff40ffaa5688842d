/**
 * The one door of the bridge, for both transports (IPC and the browser-mode RPC): before a
 * handler runs, the caller's role is checked against the method's in the contract table
 * (`APP_API[m].access`, src-shared/app-api.ts) and the audit entry is written; after it, the
 * outcome. A refused call is kept too, whatever the method. While the desktop app works on a
 * team server's book, every method but the table's `local` ones goes there instead, and the team
 * server checks and audits it in its own gate.
 */
import { accessOf, type AppMethod, APP_API } from '../../src-shared/app-api'
import { roleAtLeast } from '../../src-shared/constants'
import type { AuditTargets } from '../../src-shared/admin-records'
import { AdminName } from '../../src-shared/admin-records'
import { Id } from '../../src-shared/schema-kit'
import type { ActionStart } from '../core/admins'
import type { Service } from '../core/service'
import { runAs, type Caller } from './caller'
import { callHandler, failureAnswer, type AppHandlers, type BridgeAnswer } from './bridge-answer'
import type { TeamConnection } from './team-client'

export interface BridgeGate {
  call(caller: Caller, method: AppMethod, args: unknown[]): Promise<BridgeAnswer>
}

const article = (role: string): string => (role === 'owner' || role === 'operator' ? 'an' : 'a')

/**
 * The ids and admin names a call names, read from its arguments by the table's schemas: an
 * argument that is a record id, a list of them, or an admin name, and the same one level inside
 * an object argument (`input.orderId`). Text of any other kind never reaches the log.
 */
export function auditTargets(method: AppMethod, args: readonly unknown[]): AuditTargets {
  const out: AuditTargets = {}
  const specs = APP_API[method].args
  const put = (label: string, schema: unknown, key: string, value: unknown): void => {
    if (typeof value === 'number' && Number.isSafeInteger(value) && (schema === Id || /(^| )id$|Id$/.test(key)))
      out[label] = value
    else if (schema === AdminName && typeof value === 'string' && value.length <= 64) out[label] = value
    else if (Array.isArray(value) && / ids$/.test(key) && value.every((v) => Number.isSafeInteger(v)))
      out[label] = value as number[]
  }
  specs.forEach((spec, i) => {
    const value = args[i]
    const schema = spec.schema as { properties?: Record<string, unknown> }
    put(spec.name, spec.schema, spec.name, value)
    if (schema.properties && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        if (Object.hasOwn(schema.properties, k)) put(`${spec.name}.${k}`, schema.properties[k], k, v)
      }
    }
  })
  return out
}

export function bridgeGate(service: Service, handlers: AppHandlers, team?: TeamConnection): BridgeGate {
  const audit = service.admins.audit
  return {
    async call(caller, method, args) {
      const access = accessOf(method)
      if (team?.active && !access.local) return team.forward(method, args)
      const start: ActionStart = {
        actor: { name: caller.actor, adminId: caller.adminId, role: caller.role, source: caller.source },
        action: method,
        targets: auditTargets(method, args)
      }
      if (!roleAtLeast(caller.role, access.role)) {
        try {
          await audit.record(start, 403)
        } catch (err) {
          return failureAnswer(err)
        }
        return {
          status: 403,
          body: {
            success: false,
            error: `could not call ${method}: it needs the ${access.role} role, and ${caller.actor} is ${article(caller.role)} ${caller.role}`
          }
        }
      }
      let entry: number | null = null
      if (access.audited) {
        // Before the action: an action whose entry cannot be written does not run.
        try {
          entry = await audit.begin(start)
        } catch (err) {
          return failureAnswer(err)
        }
      }
      const answer = await runAs(caller, () => callHandler(handlers, method, args))
      if (entry !== null) {
        try {
          await audit.finish(entry, answer.status)
        } catch (err) {
          // The action has run and its answer stands; the entry stays without an outcome
          // ("interrupted" on the audit screen), and the fault goes to the caller's log.
          answer.fault ??= err
        }
      }
      return answer
    }
  }
}
