/**
 * What a reissue would do, before it is asked for (the desktop app's confirmation): the names of
 * the new certificate within what the order paid for, which of them need domain validation
 * again (a validation is reused only within the BR §4.2.1 period and for the same method), how
 * long the new certificate would be valid, which deploy targets would receive it, and what
 * happens to the current certificate (it stays valid until it expires; a reissue revokes nothing).
 */
import { autoReissues } from '../billing/catalogue'
import type { DcvMethod } from '../dcv/dcv'
import type { CommandConfig } from '../deploy/command'
import type { FolderConfig } from '../deploy/folder'
import type { WebhookConfig } from '../deploy/webhook'
import { listTargets } from '../deploy/targets'
import { isDomainName } from '../dcv/domains'
import { conflict, invalid } from '../errors'
import { validityWindow } from './lifecycle'
import { isoTimestamp, parseDate } from '../time'
import { coveredNames, productFor } from './csr-policy'
import { normalName } from './name-methods'
import { latestCertificate, readChecks, readRequest } from './records'
import type { CertificatesScope } from './scope'
import { freshlyValid } from './validation'

export interface ReissuePlan {
  /** The new certificate's names, the order domain first. */
  names: string[]
  added: string[]
  removed: string[]
  /** Names the product covers at no charge (the domain and its www form, the bare domain of a wildcard). */
  included: string[]
  /** Multi-domain orders: extra names and wildcard names in use against those paid for. */
  allowance: { names: { used: number; paid: number }; wildcards: { used: number; paid: number } } | null
  /** Each name: validated again (by its method) or its earlier validation reused. */
  validation: { name: string; method: DcvMethod; reused: boolean }[]
  /** The new certificate's validity if it is issued now (BR §6.3.2, and the subscription's end). */
  validFrom: string
  validTill: string
  /** Targets that would receive the new certificate once it is issued. */
  deploys: { kind: string; target: string }[]
  /** The certificate in place now: it stays valid until it expires (or was revoked). */
  current: { serial: string; validTill: string; revokedAt: string | null }
}

const www = (n: string): string => (n.startsWith('www.') ? n.slice(4) : `www.${n}`)

export async function reissuePlan(
  scope: CertificatesScope,
  resellerId: number,
  orderId: number,
  wanted?: string[]
): Promise<ReissuePlan> {
  const db = scope.ctx.store
  const order = await scope.orders.get(resellerId, orderId)
  const product = await productFor(scope.catalogue, order)
  const now = scope.ctx.clock()
  const current = await latestCertificate(db, order.id)
  if (order.status !== 'completed' || !current || parseDate(current.validTill).getTime() <= now.getTime()) {
    throw conflict(
      `could not plan a reissue of order ${order.orderNumber}: it has no active certificate (status ${order.status})`
    )
  }
  const req = await readRequest(db, order.id)
  const oldNames = JSON.parse(req.names) as string[]
  const asked = [...new Set((wanted ?? oldNames).map(normalName).filter(Boolean))]
  // The names come from a person here, not from a CSR: each is checked as a CSR's would be.
  const bad = asked.find((n) => !isDomainName(n, true))
  if (bad !== undefined) {
    throw invalid(
      `could not plan a reissue: ${JSON.stringify(bad.slice(0, 253))} is not a domain name (an internationalised name goes in as its A-label)`
    )
  }
  const names = product.type === 'code-signing' ? [] : coveredNames(order, product, asked)
  const checks = new Map((await readChecks(db, order.id)).map((c) => [c.name, c]))
  const fallback: DcvMethod = req.dcv_method === 'none' ? 'email' : req.dcv_method
  const bare = order.domain.replace(/^\*\./, '')
  const included = [...new Set([order.domain, www(order.domain), ...(product.type === 'wildcard' ? [bare] : [])])]
  const extra = names.filter((n) => !included.includes(n))
  const window = validityWindow(product, now, parseDate(order.purchaseEndDate), autoReissues(product))
  return {
    names,
    added: names.filter((n) => !oldNames.includes(n)),
    removed: oldNames.filter((n) => !names.includes(n)),
    included,
    allowance:
      product.type === 'multi-domain'
        ? {
            names: {
              used: extra.filter((n) => !n.startsWith('*.')).length,
              paid: product.includedSans + order.sanCount
            },
            wildcards: { used: extra.filter((n) => n.startsWith('*.')).length, paid: order.sanWildcardCount }
          }
        : null,
    validation: names.map((name) => {
      const check = checks.get(name)
      const method = check?.method ?? fallback
      return { name, method, reused: check !== undefined && freshlyValid(check, now) }
    }),
    validFrom: isoTimestamp(window.validFrom),
    validTill: isoTimestamp(window.validTill),
    deploys: (await listTargets(db, order.id)).map((t) => ({
      kind: t.kind,
      target:
        t.kind === 'folder'
          ? (t.config as FolderConfig).path
          : t.kind === 'webhook'
            ? (t.config as WebhookConfig).url
            : (t.config as CommandConfig).command.slice(0, 120)
    })),
    current: { serial: current.serial, validTill: current.validTill, revokedAt: current.revokedAt }
  }
}
