/**
 * `certdesk admin reseller|credit|apikey|group|product …`: the reseller accounts, their credit
 * and API keys, and the catalogue. Records the reseller API also shows (a reseller, a credit
 * transaction, a product) are printed through its presenters (src-main/http/present.ts), with
 * what only the desktop user may see added beside them.
 */
import { commandKey, int, need, print, UsageError, type Values } from './cli-args'
import { centsToUsd, usdToCents } from './core/billing/money'
import type { ApiKeyInfo, Reseller } from './core/billing/resellers'
import { inOrder } from './core/pool'
import type { Service } from './core/service'
import { catalogueProductJson, resellerJson, transactionJson } from './http/present'

export const ACCOUNT_USAGE = `  certdesk admin [--data-dir D] reseller add --name N --email E [--company C] [--group ID] [--discount PCT]
  certdesk admin [--data-dir D] reseller list
  certdesk admin [--data-dir D] reseller api-access --reseller ID --enable|--disable
  certdesk admin [--data-dir D] reseller set-group --reseller ID --group ID|none
  certdesk admin [--data-dir D] credit add --reseller ID --amount USD [--description TEXT]
  certdesk admin [--data-dir D] apikey create --reseller ID [--label TEXT]
  certdesk admin [--data-dir D] apikey list --reseller ID
  certdesk admin [--data-dir D] apikey revoke --key-id ID
  certdesk admin [--data-dir D] group list
  certdesk admin [--data-dir D] product list`

export async function accountAdmin(service: Service, words: string[], v: Values): Promise<number> {
  const key = commandKey(words)
  /** GET /account's reseller, plus its status (suspended accounts cannot call the API at all). */
  const resellerOut = async (r: Reseller) => {
    const group = r.groupId === null ? undefined : await service.catalogue.group(r.groupId)
    return { ...resellerJson(r, group?.name ?? null, await service.stats.revenue(r.id)), status: r.status }
  }
  switch (key) {
    case 'reseller add': {
      // Without --group the core puts the reseller in its default group.
      const group = v.group === undefined ? undefined : v.group === 'none' ? null : int(v, 'group')
      const discount = v.discount === undefined ? 0 : Number(v.discount)
      if (Number.isNaN(discount)) throw new UsageError('--discount must be a number')
      const r = await service.resellers.create({
        name: need(v, 'name'),
        email: need(v, 'email'),
        company: v.company,
        groupId: group,
        discountRate: discount
      })
      print({ success: true, reseller: await resellerOut(r) })
      return 0
    }
    case 'reseller list':
      print({ success: true, resellers: await inOrder(await service.resellers.list(), resellerOut) })
      return 0
    case 'reseller api-access': {
      if (v.enable === v.disable) throw new UsageError('give exactly one of --enable or --disable')
      print({
        success: true,
        reseller: await resellerOut(await service.resellers.setApiAccess(int(v, 'reseller'), Boolean(v.enable)))
      })
      return 0
    }
    case 'reseller set-group': {
      const g = need(v, 'group')
      const r = await service.resellers.setGroup(int(v, 'reseller'), g === 'none' ? null : int(v, 'group'))
      print({ success: true, reseller: await resellerOut(r) })
      return 0
    }
    case 'credit add': {
      const amount = Number(need(v, 'amount'))
      if (!Number.isFinite(amount)) throw new UsageError('--amount must be a number of USD, such as 250 or 99.50')
      const tx = await service.ledger.topUp(int(v, 'reseller'), usdToCents(amount), v.description ?? 'Credit top-up')
      print({ success: true, transaction: transactionJson(tx), new_balance: centsToUsd(tx.balanceAfter) })
      return 0
    }
    case 'apikey create': {
      const { key: apiKey, info } = await service.resellers.createApiKey(int(v, 'reseller'), v.label ?? '')
      print({
        success: true,
        api_key: apiKey,
        key_id: info.id,
        reseller_id: info.resellerId,
        note: 'This key is shown once. CertDesk keeps it with its secrets (the OS keychain, or sealed under a server key source); the database holds only its hash.'
      })
      return 0
    }
    case 'apikey list':
      print({ success: true, api_keys: (await service.resellers.apiKeys(int(v, 'reseller'))).map(apiKeyOut) })
      return 0
    case 'apikey revoke':
      print({ success: true, api_key: apiKeyOut(await service.resellers.revokeApiKey(int(v, 'key-id'))) })
      return 0
    case 'group list':
      print({ success: true, groups: await service.catalogue.groups() })
      return 0
    case 'product list':
      print({ success: true, products: (await service.catalogue.allProducts()).map(catalogueProductJson) })
      return 0
    default:
      throw new UsageError(`unknown admin command: ${key || '(none)'}`)
  }
}

/** API keys are the desktop user's to manage; the reseller API has no endpoint that lists them. */
const apiKeyOut = (k: ApiKeyInfo) => ({
  id: k.id,
  reseller_id: k.resellerId,
  prefix: k.prefix,
  label: k.label,
  created_at: k.createdAt,
  revoked_at: k.revokedAt
})
