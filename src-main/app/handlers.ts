/**
 * The bridge's handler table: one thin adapter per `AppApi` method, calling core service
 * functions only. Its type is derived from the contract, so a method without a handler (or a
 * handler with other arguments) does not compile. Served over IPC (src-main/index.ts) and over
 * the browser-mode RPC (./browser-ui.ts).
 */
import type { PricedProduct } from '../core/catalogue'
import { conflict, invalid, notFound, ServiceError } from '../core/errors'
import { buildPfx, encryptPrivateKeyPem } from '../core/deploy/pfx'
import { STATUS_OF } from '../http/errors'
// Pages as the reseller API pages them (reseller API v3.0 "Limits": default 50, at most 100).
import { DEFAULT_LIMIT, MAX_LIMIT } from '../http/paging'
import type { Invoice } from '../core/invoices'
import type { CreditTransaction, Page } from '../core/ledger'
import type { Order } from '../core/orders'
import type { ApiKeyInfo, Reseller } from '../core/resellers'
import type { Service } from '../core/service'
import { DCV_SETTINGS } from '../core/dcv'
import { settingProblems } from '../core/settings'
import type { SslStatus, StoredCertificate } from '../core/certificates'
import {
  ACME_DIRECTORY_URL_SETTING,
  acmeSetup,
  acmeUrls,
  type AcmeClientCommands,
  type AcmeUrls
} from '../core/acme-subscriptions'
import type { DeployRun, DeployTarget, TargetInput } from '../core/deploy/deploys'
import type { CommandConfig } from '../core/deploy/command'
import type { FolderConfig } from '../core/deploy/folder'
import type { WebhookConfig } from '../core/deploy/webhook'
import type {
  AcmeCommandsView,
  AcmeSubscriptionView,
  ApiKeyView,
  AppApi,
  DeployRunView,
  DeployTargetView,
  CertificateView,
  DcvSettingsView,
  SslStatusView,
  AppMethod,
  InvoiceView,
  OrderInput,
  OrderView,
  PageRequest,
  PageView,
  ProductView,
  ResellerView,
  SettingsInput,
  TransactionView
} from '../../src-preload/contract'
import { HMAC_KEY_PLACEHOLDER } from '../../src-preload/contract'

export type AppHandlers = {
  [K in AppMethod]: (...args: Parameters<AppApi[K]>) => Awaited<ReturnType<AppApi[K]>> | ReturnType<AppApi[K]>
}

export interface AppEnvironment {
  transport: 'electron' | 'browser'
  /** The reseller API's base URL, once the listener runs. */
  listenerUrl: () => string
  apiVersion: string
}

// The renderer is trusted less than main: ids and pages are checked here before the core sees them.
const id = (v: unknown, what: string): number => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw invalid(`${what} must be a positive whole number`)
  return v
}
const page = (p: PageRequest | undefined): PageRequest => {
  const limit = p?.limit ?? DEFAULT_LIMIT
  const offset = p?.offset ?? 0
  if (!Number.isInteger(limit) || limit < 1) throw invalid('limit must be 1 or more')
  if (!Number.isInteger(offset) || offset < 0) throw invalid('offset must be 0 or more')
  return { limit: Math.min(limit, MAX_LIMIT), offset }
}
/** The order fields a renderer sends, each checked for its type; the core checks the values. */
const orderInput = (v: unknown): OrderInput => {
  const o = (v ?? {}) as Record<string, unknown>
  const optInt = (k: string): number | undefined => {
    if (o[k] === undefined || o[k] === null) return undefined
    if (typeof o[k] !== 'number' || !Number.isInteger(o[k])) throw invalid(`${k} must be a whole number`)
    return o[k] as number
  }
  if (o.domain !== undefined && typeof o.domain !== 'string') throw invalid('domain must be text')
  if (o.contactEmail !== undefined && typeof o.contactEmail !== 'string') throw invalid('contact email must be text')
  return {
    productId: id(o.productId, 'product id'),
    domain: o.domain as string | undefined,
    period: optInt('period'),
    sanCount: optInt('sanCount'),
    sanWildcardCount: optInt('sanWildcardCount'),
    contactEmail: (o.contactEmail as string | undefined)?.trim() || undefined
  }
}
/** Optional text from the renderer: undefined when absent or empty. */
const optText = (v: unknown, what: string): string | undefined => {
  if (v === undefined || v === null || v === '') return undefined
  if (typeof v !== 'string') throw invalid(`${what} must be text`)
  return v
}
/** An export password: required, and bounded so a pasted file cannot become one. */
const exportPassword = (v: unknown, what: string): string => {
  if (typeof v !== 'string' || v === '') throw invalid(`could not export the ${what}: it needs a password`)
  if (v.length > 1024) throw invalid(`could not export the ${what}: the password is longer than 1024 characters`)
  return v
}
/** Email approvers per name as the renderer sends them; the core checks names and addresses. */
const approversInput = (v: unknown): Record<string, string> | undefined => {
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'object' || Array.isArray(v)) throw invalid('approvers must map each name to an approver address')
  const entries = Object.entries(v as Record<string, unknown>)
  if (entries.some(([, a]) => typeof a !== 'string')) throw invalid('each approver must be an email address')
  return Object.fromEntries(entries) as Record<string, string>
}
/** A deploy target as the renderer sends it, each field checked for its type; the core checks the values. */
const targetInput = (v: unknown): TargetInput => {
  const o = (v ?? {}) as Record<string, unknown>
  const text = (k: string): string => {
    if (typeof o[k] !== 'string') throw invalid(`${k} must be text`)
    return o[k] as string
  }
  if (o.kind === 'folder') {
    if (o.layout !== undefined && typeof o.layout !== 'string') throw invalid('layout must be text')
    return {
      kind: 'folder',
      path: text('path').trim(),
      layout: o.layout as (TargetInput & { kind: 'folder' })['layout'],
      pfx: o.pfx === true
    }
  }
  if (o.kind === 'command') {
    const t = o.timeoutSeconds
    if (t !== undefined && t !== null && (typeof t !== 'number' || !Number.isInteger(t)))
      throw invalid('timeoutSeconds must be a whole number')
    return { kind: 'command', command: text('command').trim(), timeoutSeconds: (t as number | null) ?? undefined }
  }
  if (o.kind === 'webhook') return { kind: 'webhook', url: text('url').trim() }
  throw invalid('kind must be folder, command or webhook')
}
const pageOf = <A, B>(p: Page<A>, f: (a: A) => B): PageView<B> => ({
  items: p.items.map(f),
  total: p.total,
  limit: p.limit,
  offset: p.offset
})

export function createHandlers(service: Service, env: AppEnvironment): AppHandlers {
  const vault = service.keyVault
  const watch = service.watchlist

  const resellerView = (r: Reseller): ResellerView => ({
    id: r.id,
    name: r.name,
    email: r.email,
    company: r.company,
    groupId: r.groupId,
    groupName: r.groupId === null ? null : (service.catalogue.group(r.groupId)?.name ?? null),
    discountRate: r.discountRate,
    status: r.status,
    apiAccess: r.apiAccess,
    creditBalance: r.creditBalance
  })
  const orderView = (o: Order, keys?: Set<number>): OrderView => ({
    id: o.id,
    orderNumber: o.orderNumber,
    productId: o.productId,
    productName: o.productName,
    brand: o.brand,
    productType: o.productType,
    domain: o.domain,
    periodMonths: o.periodMonths,
    sanCount: o.sanCount,
    sanWildcardCount: o.sanWildcardCount,
    basePrice: o.basePrice,
    sanTotal: o.sanTotal,
    discountAmount: o.discountAmount,
    total: o.total,
    status: o.status,
    paymentStatus: o.paymentStatus,
    autoReissue: o.autoReissue,
    maxValidityDays: o.maxValidityDays,
    purchaseEndDate: o.purchaseEndDate,
    reissueCount: o.reissueCount,
    certValidFrom: o.certValidFrom,
    certValidTill: o.certValidTill,
    nextReissueAt: o.nextReissueAt,
    statusNote: o.statusNote,
    invoiceNumber: o.invoiceNumber,
    invoiceStatus: o.invoiceStatus,
    createdAt: o.createdAt,
    updatedAt: o.updatedAt,
    hasStoredKey: keys ? keys.has(o.id) : vault.has(o.id)
  })
  const productView = (p: PricedProduct): ProductView => ({
    id: p.id,
    name: p.name,
    brand: p.brand,
    type: p.type,
    validationType: p.validationType,
    maxYears: p.maxYears,
    warranty: p.warranty,
    sanEnabled: p.sanEnabled,
    wildcardSanEnabled: p.wildcardSanEnabled,
    includedSans: p.includedSans,
    maxSans: p.maxSans,
    description: p.description,
    acme: p.fulfillment === 'acme_subscription',
    acmeType: p.acmeType,
    prices: Object.entries(p.pricing).map(([years, x]) => ({
      years: Number(years),
      price: x.price,
      listPrice: p.listPricing[Number(years)]?.price ?? x.price,
      sanPrice: x.sanPrice,
      wildcardSanPrice: x.wildcardSanPrice
    }))
  })
  const invoiceView = (i: Invoice): InvoiceView => ({
    id: i.id,
    invoiceNumber: i.invoiceNumber,
    orderId: i.orderId,
    orderNumber: i.orderNumber,
    domain: i.domain,
    productName: i.productName,
    total: i.total,
    status: i.status,
    dueDate: i.dueDate,
    createdAt: i.createdAt,
    paidAt: i.paidAt
  })
  const txView = (t: CreditTransaction): TransactionView => ({ ...t })
  const keyView = (k: ApiKeyInfo): ApiKeyView => ({
    id: k.id,
    prefix: k.prefix,
    label: k.label,
    createdAt: k.createdAt,
    revokedAt: k.revokedAt,
    lastUsedAt: k.lastUsedAt
  })
  const runView = (r: DeployRun): DeployRunView => ({
    id: r.id,
    targetId: r.targetId,
    kind: r.kind,
    serial: r.serial,
    trigger: r.trigger,
    status: r.status,
    attempts: r.attempts,
    nextAttemptAt: r.nextAttemptAt,
    lastError: r.lastError,
    summary: r.history.at(-1)?.summary ?? null,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt
  })
  const targetView = (t: DeployTarget, lastRun: DeployRun | null): DeployTargetView => {
    const folder = t.kind === 'folder' ? (t.config as FolderConfig) : null
    const command = t.kind === 'command' ? (t.config as CommandConfig) : null
    return {
      id: t.id,
      kind: t.kind,
      path: folder?.path ?? null,
      layout: folder?.layout ?? null,
      pfx: folder?.pfx ?? false,
      command: command?.command ?? null,
      timeoutSeconds: command?.timeoutSeconds ?? null,
      url: t.kind === 'webhook' ? (t.config as WebhookConfig).url : null,
      createdAt: t.createdAt,
      lastRun: lastRun && runView(lastRun)
    }
  }
  /** The order of this reseller (404 otherwise), so one account's page cannot act on another's orders. */
  const ownOrder = (resellerId: number, orderId: number): Order =>
    service.orders.get(reseller(resellerId).id, id(orderId, 'order id'))
  const reseller = (resellerId: number): Reseller => service.resellers.get(id(resellerId, 'reseller id'))
  const acmeUrlsNow = (): AcmeUrls => acmeUrls(service.settings.get(ACME_DIRECTORY_URL_SETTING), env.listenerUrl())
  const commandsView = (c: AcmeClientCommands): AcmeCommandsView => ({
    rootCa: c.root_ca,
    certbot: c.certbot,
    lego: c.lego,
    acmeSh: c.acme_sh
  })
  /** An API key of this reseller, so one account's page cannot act on another's keys. */
  const ownKey = (resellerId: number, keyId: number): ApiKeyInfo => {
    const k = service.resellers.apiKey(id(keyId, 'key id'))
    if (k.resellerId !== reseller(resellerId).id) throw notFound(`API key ${keyId} not found`)
    return k
  }
  const certView = (c: StoredCertificate): CertificateView => ({
    id: c.id,
    serial: c.serial,
    issuer: c.issuer,
    certificatePem: c.certificatePem,
    chainPem: c.chainPem,
    names: c.names,
    validFrom: c.validFrom,
    validTill: c.validTill,
    reason: c.reason,
    createdAt: c.createdAt
  })
  const sslView = (s: SslStatus): SslStatusView => ({
    order: orderView(s.order),
    dcvMethod: s.dcvMethod,
    approverEmail: s.approverEmail,
    names: s.names,
    validation: s.validation.map((v) => ({ ...v })),
    certificate: s.certificate ? certView(s.certificate) : null
  })
  // The UI's names for the core's setting keys (src-main/core/dcv.ts owns keys and checks).
  const SETTING_OF: Record<keyof DcvSettingsView, string> = {
    dcvResolver: DCV_SETTINGS.resolver,
    dcvHttpPort: DCV_SETTINGS.httpPort,
    dcvHttpsPort: DCV_SETTINGS.httpsPort,
    smtpUrl: DCV_SETTINGS.smtpUrl,
    smtpFrom: DCV_SETTINGS.smtpFrom,
    dcvAllowPrivateAddresses: DCV_SETTINGS.allowPrivateAddresses
  }
  const settingFields = Object.keys(SETTING_OF) as (keyof DcvSettingsView)[]
  /** The typed values by core key; empty means "the default" (the core reads '' like an unset key). */
  const settingChanges = (input: SettingsInput | undefined): Record<string, string> =>
    Object.fromEntries(
      settingFields.filter((f) => input?.[f] !== undefined).map((f) => [SETTING_OF[f], String(input?.[f]).trim()])
    )
  const settingsView = (): Awaited<ReturnType<AppApi['settings']>> => ({
    dataDir: service.dataDir,
    listenerUrl: env.listenerUrl(),
    apiVersion: env.apiVersion,
    transport: env.transport,
    ...(Object.fromEntries(
      settingFields.map((f) => [f, service.settings.get(SETTING_OF[f]) ?? ''])
    ) as unknown as DcvSettingsView),
    dcvAllowPrivateAddresses: service.settings.flag(DCV_SETTINGS.allowPrivateAddresses)
  })

  return {
    settings: settingsView,
    // The core checks every value and writes all or none; a refused one is a 400.
    updateSettings: (input) => {
      service.settings.update(settingChanges(input))
      return settingsView()
    },
    checkSettings: (input) => {
      const problems = settingProblems(settingChanges(input))
      return Object.fromEntries(
        settingFields.filter((f) => problems[SETTING_OF[f]]).map((f) => [f, problems[SETTING_OF[f]]])
      )
    },

    listResellers: () => service.resellers.list().map(resellerView),
    createReseller: (input) =>
      resellerView(
        service.resellers.create({
          name: String(input?.name ?? ''),
          email: String(input?.email ?? ''),
          company: input?.company,
          groupId: input?.groupId === undefined ? 1 : input.groupId,
          discountRate: input?.discountRate
        })
      ),

    dashboard: (resellerId) => {
      const r = reseller(resellerId)
      return {
        stats: service.stats.stats(r.id),
        expiringSoon: watch.expiringSoon(r.id).map((o) => orderView(o)),
        waitingForValidation: watch.waitingForValidation(r.id).map((o) => orderView(o))
      }
    },

    listProducts: (resellerId, filter) =>
      service.catalogue.list(reseller(resellerId).groupId, filter ?? {}).map(productView),
    quoteOrder: (resellerId, input) => {
      const r = reseller(resellerId)
      const q = service.orders.quote(r, orderInput(input))
      const balance = service.ledger.balance(r.id)
      return {
        productName: q.product.name,
        domain: q.domain,
        periodMonths: q.periodMonths,
        basePrice: q.basePrice,
        sanTotal: q.sanTotal,
        discountRate: r.discountRate,
        discountAmount: q.discountAmount,
        total: q.total,
        balance,
        affordable: balance >= q.total
      }
    },
    createOrder: (resellerId, input, payment) => {
      if (payment !== 'credit' && payment !== 'invoice') throw invalid('payment must be credit or invoice')
      const created = service.orders.create(reseller(resellerId), orderInput(input), payment)
      return { order: orderView(created.order), creditUsed: created.creditUsed, newBalance: created.newBalance }
    },
    listOrders: (resellerId, filter, p) => {
      const result = service.orders.list(
        reseller(resellerId).id,
        { status: filter?.status, domain: filter?.domain?.trim() || undefined },
        page(p)
      )
      const keys = vault.withKeys(result.items.map((o) => o.id))
      return pageOf(result, (o) => orderView(o, keys))
    },
    getOrder: (resellerId, orderId) => orderView(service.orders.get(reseller(resellerId).id, id(orderId, 'order id'))),
    cancelOrder: (resellerId, orderId) => {
      const r = service.orders.cancel(reseller(resellerId).id, id(orderId, 'order id'))
      return { order: orderView(r.order), refunded: r.refunded, newBalance: r.newBalance }
    },
    payOrder: (resellerId, orderId) => {
      const r = service.orders.payFromCredit(reseller(resellerId).id, id(orderId, 'order id'))
      return { order: orderView(r.order), amountPaid: r.amountPaid, newBalance: r.newBalance }
    },

    storePrivateKey: (resellerId, orderId, pem) => {
      vault.store(reseller(resellerId).id, id(orderId, 'order id'), pem)
      return { stored: true as const }
    },
    keepCsrDraft: (resellerId, orderId, draft) =>
      vault.keepDraft(
        reseller(resellerId).id,
        id(orderId, 'order id'),
        String(draft?.pkcs8Pem ?? ''),
        String(draft?.csrPem ?? '')
      ),
    csrDraft: (resellerId, orderId) => vault.draft(reseller(resellerId).id, id(orderId, 'order id')),
    discardCsrDraft: (resellerId, orderId) => {
      vault.discardDraft(reseller(resellerId).id, id(orderId, 'order id'))
      return { discarded: true as const }
    },
    exportPrivateKey: (resellerId, orderId) => {
      const r = reseller(resellerId).id
      const oid = id(orderId, 'order id')
      const pkcs8Pem = vault.read(r, oid)
      const current = service.certificates.certificate(r, oid).certificate
      return {
        pkcs8Pem,
        matchesCertificate: current ? vault.keyMatching(oid, current.certificatePem) !== null : null
      }
    },
    exportEncryptedKey: async (resellerId, orderId, password) => {
      const secret = exportPassword(password, 'private key')
      return { pem: await encryptPrivateKeyPem(vault.read(reseller(resellerId).id, id(orderId, 'order id')), secret) }
    },
    exportPfx: async (resellerId, orderId, password) => {
      const r = reseller(resellerId).id
      const oid = id(orderId, 'order id')
      const secret = exportPassword(password, 'PFX')
      vault.read(r, oid) // the order is this reseller's and a key is kept for it, or 404
      const current = service.certificates.certificate(r, oid).certificate
      if (!current) throw conflict('could not build the PFX: the order has no certificate yet')
      // A PFX pairs the key with the current certificate; after a reissue from another CSR the
      // kept key belongs to an earlier certificate, and such a PFX would not work on a server.
      const key = vault.keyMatching(oid, current.certificatePem)
      if (!key) {
        throw conflict(
          'could not build the PFX: the kept private key belongs to an earlier certificate of this order (it was reissued from another CSR)'
        )
      }
      const pfx = await buildPfx({
        certificatePem: current.certificatePem,
        chainPem: current.chainPem,
        privateKeyPem: key,
        password: secret,
        friendlyName: service.orders.get(r, oid).domain
      })
      return { pfxBase64: pfx.toString('base64') }
    },
    configureOrder: async (resellerId, input) =>
      sslView(
        await service.certificates.configure(reseller(resellerId).id, {
          orderId: id(input?.orderId, 'order id'),
          csr: String(input?.csr ?? ''),
          dcvMethod: input?.dcvMethod,
          approverEmail: optText(input?.approverEmail, 'approver email'),
          approvers: approversInput(input?.approvers)
        })
      ),
    sslStatus: async (resellerId, orderId) =>
      sslView(await service.certificates.status(reseller(resellerId).id, id(orderId, 'order id'))),
    changeDcv: async (resellerId, orderId, method, approverEmail) =>
      sslView(
        await service.certificates.changeDcv(
          reseller(resellerId).id,
          id(orderId, 'order id'),
          method,
          approverEmail || undefined
        )
      ),
    resendValidation: async (resellerId, orderId) =>
      sslView(await service.certificates.resendValidation(reseller(resellerId).id, id(orderId, 'order id'))),
    emailOutbox: (resellerId, orderId) => {
      const order = service.orders.get(reseller(resellerId).id, id(orderId, 'order id'))
      return service.certificates.outbox(order.id).map((m) => ({
        id: m.id,
        name: m.name,
        to: m.to,
        subject: m.subject,
        body: m.body,
        delivery: m.delivery,
        createdAt: m.createdAt
      }))
    },
    approveEmail: async (resellerId, orderId, code, name) =>
      sslView(
        await service.certificates.approveEmail(
          reseller(resellerId).id,
          id(orderId, 'order id'),
          String(code ?? ''),
          optText(name, 'name')
        )
      ),
    chooseApprover: async (resellerId, orderId, name, approverEmail) =>
      sslView(
        await service.certificates.chooseApprover(
          reseller(resellerId).id,
          id(orderId, 'order id'),
          optText(name, 'name') ?? '',
          optText(approverEmail, 'approver email') ?? ''
        )
      ),
    reissue: async (resellerId, input) =>
      sslView(
        await service.certificates.reissue(reseller(resellerId).id, {
          orderId: id(input?.orderId, 'order id'),
          csr: optText(input?.csr, 'csr'),
          dcvMethod: input?.dcvMethod,
          approverEmail: optText(input?.approverEmail, 'approver email'),
          privateKeyPem: optText(input?.privateKeyPem, 'private key')
        })
      ),
    certificate: (resellerId, orderId) => {
      const r = reseller(resellerId).id
      const status = service.certificates.certificate(r, id(orderId, 'order id'))
      return {
        certificate: status.certificate ? certView(status.certificate) : null,
        daysRemaining: status.daysRemaining,
        isExpired: status.isExpired,
        history: service.certificates.history(r, orderId).map(certView)
      }
    },
    caRootPem: async () => ({ pem: await service.localCa.rootPem() }),

    listDeployTargets: (resellerId, orderId) => {
      const order = ownOrder(resellerId, orderId)
      // The newest run of each target: runs come newest first; one page covers the usual order.
      const latest = new Map<number, DeployRun>()
      for (const r of service.deploys.runs(order.id, { limit: MAX_LIMIT, offset: 0 }).items)
        if (!latest.has(r.targetId)) latest.set(r.targetId, r)
      return service.deploys.targets(order.id).map((t) => targetView(t, latest.get(t.id) ?? null))
    },
    addDeployTarget: (resellerId, orderId, input) => {
      const order = ownOrder(resellerId, orderId)
      const created = service.deploys.addTarget(order.id, targetInput(input))
      return { target: targetView(created.target, null), secret: created.secret }
    },
    removeDeployTarget: (resellerId, orderId, targetId) => {
      const order = ownOrder(resellerId, orderId)
      const t = service.deploys.target(id(targetId, 'target id'))
      if (t.orderId !== order.id) throw notFound(`deploy target ${targetId} not found`)
      service.deploys.removeTarget(t.id)
      return { removed: true as const }
    },
    deployNow: async (resellerId, orderId) =>
      (await service.deploys.runOrder(ownOrder(resellerId, orderId).id)).map(runView),
    listDeployRuns: (resellerId, orderId, p) =>
      pageOf(service.deploys.runs(ownOrder(resellerId, orderId).id, page(p)), runView),

    listAcmeSubscriptions: (resellerId) => {
      const r = reseller(resellerId)
      const urls = acmeUrlsNow()
      return service.acme.list(r.id).map((sub): AcmeSubscriptionView => {
        const order = service.orders.get(r.id, sub.orderId)
        // The core builds (and quotes) the commands around the placeholder: the key stays in the keychain until asked for.
        const setup = acmeSetup({ ...service.acme.details(sub), eabHmacKey: HMAC_KEY_PLACEHOLDER }, urls)
        return {
          orderId: order.id,
          orderNumber: order.orderNumber,
          productName: order.productName,
          status: setup.status,
          category: setup.category,
          domains: setup.domains.map((d) => d.name),
          begin: setup.subscription.begin,
          nextRenewal: setup.subscription.next_renewal,
          end: setup.subscription.end,
          eabKid: setup.account.eab_kid,
          serverUrl: setup.account.server_url,
          accountStatus: setup.account.status,
          accounts: setup.account.accounts.map((a) => ({ url: a.url, status: a.status, createdAt: a.created_at })),
          rootCaUrl: setup.root_ca_url,
          commands: commandsView(setup.commands),
          setupUrl: setup.autoinstall?.login_url ?? null
        }
      })
    },
    acmeHmacKey: (resellerId, orderId) => {
      const order = ownOrder(resellerId, orderId)
      const sub = service.acme.forOrder(order.resellerId, order.id)
      const setup = acmeSetup(service.acme.details(sub), acmeUrlsNow())
      return { eabHmacKey: setup.account.eab_hmac_key, commands: commandsView(setup.commands) }
    },

    listInvoices: (resellerId, filter, p) =>
      pageOf(service.invoices.list(reseller(resellerId).id, { status: filter?.status }, page(p)), invoiceView),
    listTransactions: (resellerId, p) => pageOf(service.ledger.transactions(reseller(resellerId).id, page(p)), txView),
    topUp: (resellerId, amount, description) =>
      txView(
        service.ledger.topUp(reseller(resellerId).id, amount, String(description ?? '').trim() || 'Credit top-up')
      ),

    listApiKeys: (resellerId) => service.resellers.apiKeys(reseller(resellerId).id).map(keyView),
    createApiKey: (resellerId, label) => {
      const { key, info } = service.resellers.createApiKey(reseller(resellerId).id, String(label ?? '').trim())
      return { key, info: keyView(info) }
    },
    revealApiKey: (resellerId, keyId) => ({ key: service.resellers.revealApiKey(ownKey(resellerId, keyId).id) }),
    revokeApiKey: (resellerId, keyId) => keyView(service.resellers.revokeApiKey(ownKey(resellerId, keyId).id))
  }
}

export type BridgeAnswer = {
  status: number
  body: { success: true; result: unknown } | { success: false; error: string }
  fault?: unknown
}

/**
 * Runs one handler and answers in the bridge envelope. Core errors carry a message written for
 * a person; anything else comes back as `fault` for the caller's log and leaves without details.
 */
export async function callHandler(handlers: AppHandlers, method: AppMethod, args: unknown[]): Promise<BridgeAnswer> {
  try {
    const fn = handlers[method] as (...a: unknown[]) => unknown
    const result = await fn(...args)
    return { status: 200, body: { success: true, result: result === undefined ? null : result } }
  } catch (err) {
    if (err instanceof ServiceError)
      return { status: STATUS_OF[err.kind], body: { success: false, error: err.message } }
    // usdToCents and date parsing say what is wrong with a value in a RangeError.
    if (err instanceof RangeError) return { status: 400, body: { success: false, error: err.message } }
    return { status: 500, body: { success: false, error: 'internal error; see the CertDesk log' }, fault: err }
  }
}
