/**
 * The bridge's handler table: one thin adapter per method of the contract table
 * (src-shared/app-api.ts), calling core service functions only. Its type is derived from the
 * contract, so a method without a handler (or a handler with other arguments) does not compile.
 * Arguments reach a handler only after `callHandler` has checked them against the contract's
 * schemas; values are the core's to judge. Served over IPC (./ipc.ts) and over the browser-mode
 * RPC (./browser-ui.ts).
 */
import type { AppMethod } from '../../src-shared/app-api'
import type { Order, OrderView, PageRequest, Reseller, ResellerView, SettingsView } from '../../src-shared/records'
import { approverChoices, type StoredCertificate, type SslStatus } from '../core/certificates'
import { productView } from '../core/billing/catalogue'
import {
  acmeCommandsView,
  acmeSetup,
  acmeSubscriptionView,
  shownAcmeUrls,
  type AcmeUrls
} from '../core/acme-server/client-setup'
import { orderRenewalView } from '../core/acme-client/ari-order-view'
import { settingsView as settingValues, settingsViewProblems, updateSettingsView } from '../core/settings/settings-view'
import { deployRunView, deployTargetView, deployTargetViews } from '../core/deploy/deploy-views'
import { conflict, invalid, notFound } from '../core/errors'
import type { AppHandlers } from './bridge-answer'
import type { AppEnvironment } from './environment'
import { expiringCsv, expiringSummary } from '../core/certificates/reports'
import { EXPIRING_WITHIN_DAYS } from '../core/certificates/watchlist'
import { buildPfx, encryptPrivateKeyPem } from '../core/deploy/pfx'
import { buildLegacyPfx } from '../core/deploy/pfx-legacy'
import type { ApiKeyInfo } from '../core/billing/resellers'
import type { Service } from '../core/service'
import { backupJobsFor } from '../core/backup/backup'
// Pages as the reseller API pages them (reseller API v3.0 "Limits": default 50, at most 100).
import { DEFAULT_LIMIT, MAX_LIMIT } from '../http/paging'
import { checkArgs } from './validate'
import type { EventFilter as EventFilterInput } from '../../src-shared/records'
import { subscriptionCertificates } from '../core/acme-server/acme-subscription-certificates'
import { ADMIN_LOG_TYPES, type AdminEventFilter } from '../core/events'
import type { Channel } from '../core/alerts'
import { channelTarget } from '../core/alerts/channels'
import type { AlertChannelViewT } from '../../src-shared/alert-records'
import { isValidDate, parseDate } from '../core/time'
import { ListPages } from '../core/orders/list-pages'
import { inOrder } from '../core/pool'
import { ExportJobs, SUGGESTED_NAME } from './export-jobs'
import { suggestExportPath } from './export-path'
import { adminAdapters } from './admin-handlers'

const page = (p: PageRequest | undefined): { limit: number; offset: number } => ({
  limit: Math.min(p?.limit ?? DEFAULT_LIMIT, MAX_LIMIT),
  offset: p?.offset ?? 0
})
/** An export password: required, and bounded so a pasted file cannot become one. */
const exportPassword = (v: string, what: string): string => {
  if (v === '') throw invalid(`could not export the ${what}: it needs a password`)
  if (v.length > 1024) throw invalid(`could not export the ${what}: the password is longer than 1024 characters`)
  return v
}
/** Optional text from the renderer: undefined when empty. */
const optText = (v: string | undefined): string | undefined => v?.trim() || undefined
/** The certificate without its order id (the UI has the order already). */
const certView = ({ orderId: _orderId, ...c }: StoredCertificate) => c

/**
 * The handler table, each handler behind the argument check of the contract's schemas: whoever
 * calls it (the IPC handler, the browser-mode RPC, a test), a value of the wrong type is refused
 * with 400 and the argument's name before the core sees it.
 */
export function createHandlers(service: Service, env: AppEnvironment): AppHandlers {
  const handlers = adapters(service, env)
  const table = Object.fromEntries(
    (Object.keys(handlers) as AppMethod[]).map((m) => {
      const fn = handlers[m] as (...a: unknown[]) => unknown
      // An async handler refuses with a rejected promise, a plain one by throwing, as each did alone.
      const async = fn.constructor.name === 'AsyncFunction'
      const guarded = (...args: unknown[]): unknown => {
        const checked = checkArgs(m, args)
        if (!checked.ok) return async ? Promise.reject(invalid(checked.error)) : fail(invalid(checked.error))
        return fn(...checked.args)
      }
      return [m, guarded]
    })
  ) as AppHandlers
  return table
}

const fail = (err: Error): never => {
  throw err
}

function adapters(service: Service, env: AppEnvironment): AppHandlers {
  const vault = service.keyVault
  const watch = service.watchlist
  const pages = new ListPages(service.ctx, service.orders)
  const exports = new ExportJobs(pages)

  const resellerView = async (r: Reseller): Promise<ResellerView> => ({
    ...r,
    groupName: r.groupId === null ? null : ((await service.catalogue.group(r.groupId))?.name ?? null)
  })
  const orderView = async (o: Order, keys?: Set<number>, revoked?: Set<number>): Promise<OrderView> => ({
    ...o,
    hasStoredKey: keys ? keys.has(o.id) : await vault.has(o.id),
    certificateRevoked: (revoked ?? (await service.certificates.revokedCurrent([o.id]))).has(o.id)
  })
  const sslView = async ({ csr: _csr, ...s }: SslStatus) => ({
    ...s,
    order: await orderView(s.order),
    certificate: s.certificate && certView(s.certificate)
  })
  const reseller = async (resellerId: number): Promise<Reseller> => await service.resellers.get(resellerId)
  /** The order's current certificate with its days left, and every certificate it had. */
  const certificateDetail = async (r: number, orderId: number) => {
    const { order: _order, ...status } = await service.certificates.certificate(r, orderId)
    return {
      ...status,
      certificate: status.certificate && certView(status.certificate),
      history: (await service.certificates.history(r, orderId)).map(certView)
    }
  }
  /** The order of this reseller (404 otherwise), so one account's page cannot act on another's orders. */
  const ownOrder = async (resellerId: number, orderId: number): Promise<Order> =>
    await service.orders.get((await reseller(resellerId)).id, orderId)
  /** An API key of this reseller, so one account's page cannot act on another's keys. */
  const ownKey = async (resellerId: number, keyId: number): Promise<ApiKeyInfo> => {
    const k = await service.resellers.apiKey(keyId)
    if (k.resellerId !== (await reseller(resellerId)).id) throw notFound(`API key ${keyId} not found`)
    return k
  }
  const acmeUrlsNow = (): Promise<AcmeUrls> => shownAcmeUrls(service.settings, env.listenerUrl())

  const settingsView = async (): Promise<SettingsView> => ({
    dataDir: service.dataDir,
    listenerUrl: env.listenerUrl(),
    apiVersion: env.apiVersion,
    transport: env.transport,
    ...(await settingValues(service.settings))
  })

  return {
    settings: settingsView,
    // The core checks every value and writes all or none; a refused one is a 400.
    updateSettings: async (input) => {
      await updateSettingsView(service.settings, input)
      return settingsView()
    },
    checkSettings: (input) => settingsViewProblems(input),

    listResellers: async () => await inOrder(await service.resellers.list(), resellerView),
    createReseller: async (input) => await resellerView(await service.resellers.create(input)),
    updateReseller: async (resellerId, input) =>
      await resellerView(await service.resellers.update((await reseller(resellerId)).id, input)),
    listGroups: async () => (await service.catalogue.groups()).map(({ id, name }) => ({ id, name })),

    dashboard: async (resellerId) => {
      const r = await reseller(resellerId)
      return {
        stats: await service.stats.stats(r.id),
        expiring: await expiringSummary(service.ctx, r.id, EXPIRING_WITHIN_DAYS),
        waitingForValidation: await inOrder(await watch.waitingForValidation(r.id), (o) => orderView(o))
      }
    },

    listProducts: async (resellerId, filter) =>
      (await service.catalogue.list((await reseller(resellerId)).groupId, filter)).map(productView),
    quoteOrder: async (resellerId, input) =>
      await service.orders.quoteView(await reseller(resellerId), {
        ...input,
        contactEmail: optText(input.contactEmail)
      }),
    createOrder: async (resellerId, input, payment) => {
      const created = await service.orders.create(
        await reseller(resellerId),
        { ...input, contactEmail: optText(input.contactEmail) },
        payment
      )
      return { order: await orderView(created.order), creditUsed: created.creditUsed, newBalance: created.newBalance }
    },
    listOrders: async (resellerId, filter, p) => {
      const result = await service.orders.list(
        (await reseller(resellerId)).id,
        { status: filter.status, domain: optText(filter.domain) },
        page(p)
      )
      const ids = result.items.map((o) => o.id)
      const [keys, revoked] = [await vault.withKeys(ids), await service.certificates.revokedCurrent(ids)]
      return { ...result, items: await inOrder(result.items, (o) => orderView(o, keys, revoked)) }
    },
    getOrder: async (resellerId, orderId) => await orderView(await ownOrder(resellerId, orderId)),
    cancelOrder: async (resellerId, orderId) => {
      const r = await service.orders.cancel((await reseller(resellerId)).id, orderId)
      return { ...r, order: await orderView(r.order) }
    },
    payOrder: async (resellerId, orderId) => {
      const r = await service.orders.payFromCredit((await reseller(resellerId)).id, orderId)
      return { ...r, order: await orderView(r.order) }
    },

    storePrivateKey: async (resellerId, orderId, pem) => {
      await vault.store((await reseller(resellerId)).id, orderId, pem)
      return { stored: true as const }
    },
    keepCsrDraft: async (resellerId, orderId, draft) =>
      vault.keepDraft((await reseller(resellerId)).id, orderId, draft.pkcs8Pem, draft.csrPem),
    csrDraft: async (resellerId, orderId) => await vault.draft((await reseller(resellerId)).id, orderId),
    discardCsrDraft: async (resellerId, orderId) => {
      await vault.discardDraft((await reseller(resellerId)).id, orderId)
      return { discarded: true as const }
    },
    exportPrivateKey: async (resellerId, orderId) => {
      const r = (await reseller(resellerId)).id
      const pkcs8Pem = await vault.read(r, orderId)
      const current = (await service.certificates.certificate(r, orderId)).certificate
      return {
        pkcs8Pem,
        matchesCertificate: current ? (await vault.keyMatching(orderId, current.certificatePem)) !== null : null
      }
    },
    exportEncryptedKey: async (resellerId, orderId, password) => {
      const secret = exportPassword(password, 'private key')
      return { pem: await encryptPrivateKeyPem(await vault.read((await reseller(resellerId)).id, orderId), secret) }
    },
    exportPfx: async (resellerId, orderId, password, encryption) => {
      const r = (await reseller(resellerId)).id
      const secret = exportPassword(password, 'PFX')
      await vault.read(r, orderId) // the order is this reseller's and a key is kept for it, or 404
      const current = (await service.certificates.certificate(r, orderId)).certificate
      if (!current) throw conflict('could not build the PFX: the order has no certificate yet')
      // A PFX pairs the key with the current certificate; after a reissue from another CSR the
      // kept key belongs to an earlier certificate, and such a PFX would not work on a server.
      const key = await vault.keyMatching(orderId, current.certificatePem)
      if (!key) {
        throw conflict(
          'could not build the PFX: the kept private key belongs to an earlier certificate of this order (it was reissued from another CSR)'
        )
      }
      const build = encryption === 'legacy-3des' ? buildLegacyPfx : buildPfx
      const pfx = await build({
        certificatePem: current.certificatePem,
        chainPem: current.chainPem,
        privateKeyPem: key,
        password: secret,
        friendlyName: (await service.orders.get(r, orderId)).domain
      })
      return { pfxBase64: pfx.toString('base64') }
    },
    configureOrder: async (resellerId, input) =>
      await sslView(
        await service.certificates.configure((await reseller(resellerId)).id, {
          ...input,
          approverEmail: optText(input.approverEmail)
        })
      ),
    sslStatus: async (resellerId, orderId) =>
      await sslView(await service.certificates.status((await reseller(resellerId)).id, orderId)),
    storedSslStatus: async (resellerId, orderId) =>
      await sslView(await service.certificates.current((await reseller(resellerId)).id, orderId)),
    changeDcv: async (resellerId, orderId, method, approverEmail) =>
      await sslView(
        await service.certificates.changeDcv((await reseller(resellerId)).id, orderId, method, optText(approverEmail))
      ),
    changeNameDcv: async (resellerId, orderId, name, method, approverEmail) =>
      await sslView(
        await service.certificates.changeDcv((await reseller(resellerId)).id, orderId, undefined, undefined, [
          { name, method, approverEmail: optText(approverEmail) }
        ])
      ),
    approverChoices: (names) => Object.fromEntries(names.map((n) => [n, approverChoices(n)])),
    resendValidation: async (resellerId, orderId) =>
      await sslView(await service.certificates.resendValidation((await reseller(resellerId)).id, orderId)),
    emailOutbox: async (resellerId, orderId) =>
      await service.certificates.outbox((await ownOrder(resellerId, orderId)).id),
    approveEmail: async (resellerId, orderId, code, name) =>
      await sslView(
        await service.certificates.approveEmail((await reseller(resellerId)).id, orderId, code, optText(name))
      ),
    chooseApprover: async (resellerId, orderId, name, approverEmail) =>
      await sslView(
        await service.certificates.chooseApprover((await reseller(resellerId)).id, orderId, name, approverEmail)
      ),
    reissue: async (resellerId, input) =>
      await sslView(
        await service.certificates.reissue((await reseller(resellerId)).id, {
          ...input,
          csr: optText(input.csr),
          approverEmail: optText(input.approverEmail),
          privateKeyPem: optText(input.privateKeyPem)
        })
      ),
    certificate: async (resellerId, orderId) => await certificateDetail((await reseller(resellerId)).id, orderId),
    reissuePlan: async (resellerId, orderId, names) =>
      await service.certificates.reissuePlan((await reseller(resellerId)).id, orderId, names),
    revokeCertificate: async (resellerId, orderId, revocation) => {
      const r = (await reseller(resellerId)).id
      await service.certificates.revoke(r, orderId, revocation)
      return await certificateDetail(r, orderId)
    },
    caRootPem: async () => ({ pem: await service.localCa.rootPem() }),

    listDeployTargets: async (resellerId, orderId) =>
      await deployTargetViews(service.ctx, service.deploys, (await ownOrder(resellerId, orderId)).id),
    addDeployTarget: async (resellerId, orderId, input) => {
      const order = await ownOrder(resellerId, orderId)
      const created = await service.deploys.addTarget(order.id, input)
      return { target: deployTargetView(created.target, null), secret: created.secret }
    },
    removeDeployTarget: async (resellerId, orderId, targetId) => {
      const order = await ownOrder(resellerId, orderId)
      const t = await service.deploys.target(targetId)
      if (t.orderId !== order.id) throw notFound(`deploy target ${targetId} not found`)
      await service.deploys.removeTarget(t.id)
      return { removed: true as const }
    },
    deployNow: async (resellerId, orderId) =>
      (await service.deploys.runOrder((await ownOrder(resellerId, orderId)).id)).map(deployRunView),
    listDeployRuns: async (resellerId, orderId, p) => {
      const runs = await service.deploys.runs((await ownOrder(resellerId, orderId)).id, page(p))
      return { ...runs, items: runs.items.map(deployRunView) }
    },

    listAcmeSubscriptions: async (resellerId) => {
      const r = await reseller(resellerId)
      const urls = await acmeUrlsNow()
      return await inOrder(await service.acme.list(r.id), async (sub) =>
        acmeSubscriptionView(await service.orders.get(r.id, sub.orderId), await service.acme.details(sub), urls)
      )
    },
    // Renewal automation (RFC 9773 window, delegated DNS, dns-persist-01): read-only DNS looks.
    orderRenewal: async (resellerId, orderId) =>
      orderRenewalView(service.ctx, service.settings, service.acmeIssuer, (await ownOrder(resellerId, orderId)).id),
    setRenewalMethod: async (resellerId, orderId, method) => {
      await service.certificates.switchRenewalMethod((await reseller(resellerId)).id, orderId, method)
      return orderRenewalView(
        service.ctx,
        service.settings,
        service.acmeIssuer,
        (await ownOrder(resellerId, orderId)).id
      )
    },
    acmeHmacKey: async (resellerId, orderId) => {
      const order = await ownOrder(resellerId, orderId)
      const sub = await service.acme.forOrder(order.resellerId, order.id)
      const setup = acmeSetup(await service.acme.details(sub), await acmeUrlsNow())
      return { eabHmacKey: setup.account.eab_hmac_key, commands: acmeCommandsView(setup.commands) }
    },

    listInvoices: async (resellerId, filter, p) =>
      await service.invoices.list((await reseller(resellerId)).id, filter, page(p)),
    listTransactions: async (resellerId, p) =>
      await service.ledger.transactions((await reseller(resellerId)).id, page(p)),
    topUp: async (resellerId, amount, description) =>
      await service.ledger.topUp((await reseller(resellerId)).id, amount, optText(description) ?? 'Credit top-up'),

    listApiKeys: async (resellerId) => await service.resellers.apiKeys((await reseller(resellerId)).id),
    createApiKey: async (resellerId, label) =>
      await service.resellers.createApiKey((await reseller(resellerId)).id, label?.trim() ?? ''),
    revealApiKey: async (resellerId, keyId) => ({
      key: await service.resellers.revealApiKey((await ownKey(resellerId, keyId)).id)
    }),
    revokeApiKey: async (resellerId, keyId) =>
      await service.resellers.revokeApiKey((await ownKey(resellerId, keyId)).id),

    installationReport: async (resellerId, orderId) => await service.installations.report(resellerId, orderId),
    checkInstallation: (resellerId, orderId) => service.installations.check(resellerId, orderId),
    addInstallationEndpoint: async (resellerId, orderId, input) =>
      await service.installations.addEndpoint(resellerId, orderId, input),
    removeInstallationEndpoint: async (resellerId, orderId, endpointId) => {
      await service.installations.removeEndpoint(resellerId, orderId, endpointId)
      return { removed: true as const }
    },
    installationBadges: async (resellerId, orderIds) =>
      await service.installations.badges((await reseller(resellerId)).id, orderIds),
    listImported: async (resellerId) => await service.imports.list(resellerId),
    importUploads: async (resellerId, files, options) => {
      const all: Awaited<ReturnType<typeof service.imports.importUpload>> = {
        imported: [],
        duplicates: [],
        skipped: [],
        keysLeftInPlace: []
      }
      for (const f of files) {
        const one = await service.imports.importUpload(resellerId, f.name, Buffer.from(f.base64, 'base64'), options)
        all.imported.push(...one.imported)
        all.duplicates.push(...one.duplicates)
        all.skipped.push(...one.skipped)
        all.keysLeftInPlace.push(...one.keysLeftInPlace)
      }
      return all
    },
    importFolder: (resellerId, folder, options) => service.imports.importFolder(resellerId, folder, options),
    importEndpoints: (resellerId, endpoints) => service.imports.importEndpoints(resellerId, endpoints),
    replacementQuote: async (resellerId, importedId) => await service.imports.replacementQuote(resellerId, importedId),
    renewImported: async (resellerId, importedId, payment) => {
      const created = await service.imports.renew(resellerId, importedId, payment)
      return { order: await orderView(created.order), creditUsed: created.creditUsed, newBalance: created.newBalance }
    },
    expiringReport: async (resellerId, days) =>
      await service.reports.expiring({ days, resellerId: (await reseller(resellerId)).id }),
    expiringCsv: async (resellerId, days) => ({
      csv: expiringCsv(await service.reports.expiring({ days, resellerId: (await reseller(resellerId)).id }))
    }),
    // Backup from the settings screen: the desktop user names the folder, the core names the file.
    startBackup: async (folder) => await backupJobsFor(service.ctx, service.dataDir).start(folder),
    backupProgress: () => backupJobsFor(service.ctx, service.dataDir).progress(),
    alertRules: async () => await service.alerts.rules(),
    updateAlertRule: async (rule, change) => await service.alerts.updateRule(rule, change),
    alertChannels: async () => (await service.alerts.channels.list()).map(alertChannelView),
    addAlertChannel: async (input) => {
      const created = await service.alerts.addChannel(input)
      return { channel: alertChannelView(created.channel), signingSecret: created.signingSecret }
    },
    removeAlertChannel: async (id) => {
      await service.alerts.removeChannel(id)
      return { removed: true as const }
    },
    testAlertChannel: async (id) => await service.alerts.testChannel(id),
    alertDeliveries: async (p) => await service.alerts.deliveries(page(p)),
    listAlerts: async (p) => await service.alerts.list({}, page(p)),
    // ---- screens: event log, ACME subscription page, invoice document, validation cancel
    listEvents: async (resellerId, filter, p) => {
      const r = await reseller(resellerId)
      const orderId = filter.orderId === undefined ? undefined : (await ownOrder(r.id, filter.orderId)).id
      // The desktop user is the admin: the log holds the alert events about this reseller's orders too.
      const events = await service.events.adminLog(r.id, { ...eventFilter(filter), orderId }, page(p))
      return {
        ...events,
        items: events.items.map(({ id, type, orderId: o, orderNumber, message, createdAt }) => ({
          id,
          type,
          orderId: o,
          orderNumber,
          message,
          createdAt
        }))
      }
    },
    acmeSubscription: async (resellerId, orderId) => {
      const order = await ownOrder(resellerId, orderId)
      const sub = await service.acme.summaryForOrder(order.resellerId, order.id)
      if (!sub) return null
      return {
        subscription: acmeSubscriptionView(order, await service.acme.details(sub), await acmeUrlsNow()),
        certificates: await subscriptionCertificates(service.ctx, sub.id)
      }
    },
    getInvoice: async (resellerId, invoiceId) => await service.invoices.get((await reseller(resellerId)).id, invoiceId),
    cancelValidation: async (resellerId, orderId) =>
      await sslView(await service.certificates.cancelValidation((await reseller(resellerId)).id, orderId)),
    // Lists paged by key and CSV exports written by the main process.
    orderPage: async (resellerId, q) => {
      const p = await pages.orderPage((await reseller(resellerId)).id, q)
      const ids = p.items.map((o) => o.id)
      const [keys, revoked] = [await vault.withKeys(ids), await service.certificates.revokedCurrent(ids)]
      return {
        ...p,
        items: await inOrder(p.items, async (o) => ({ ...(await orderView(o, keys, revoked)), worklist: o.worklist }))
      }
    },
    orderViewCounts: async (resellerId) => await pages.viewCounts((await reseller(resellerId)).id),
    invoicePage: async (resellerId, q) => await pages.invoicePage((await reseller(resellerId)).id, q),
    ledgerPage: async (resellerId, q) => await pages.ledgerPage((await reseller(resellerId)).id, q),
    chooseExportPath: async (name) => {
      if (!SUGGESTED_NAME.test(name))
        throw invalid('could not suggest an export file: the name must be plain and end in .csv')
      if (env.chooseSavePath) return { path: await env.chooseSavePath(name), dialog: true }
      return { path: suggestExportPath(name), dialog: false }
    },
    startExport: async (resellerId, req) => exports.start((await reseller(resellerId)).id, req),
    exportJobs: () => exports.list(),
    cancelExport: (id) => exports.cancel(id),
    dismissExport: (id) => {
      exports.dismiss(id)
      return { dismissed: true as const }
    },
    dismissFinishedExports: () => {
      exports.dismissFinished()
      return { dismissed: true as const }
    },
    ...adminAdapters(service, env)
  }
}

/** The event log's filter as the core takes it: a known type, and a calendar day to start from. */
function eventFilter(f: EventFilterInput): Omit<AdminEventFilter, 'orderId'> {
  const type = optText(f.type)
  if (type !== undefined && !(ADMIN_LOG_TYPES as readonly string[]).includes(type))
    throw invalid(`could not list the events: type must be one of ${ADMIN_LOG_TYPES.join(', ')}`)
  const since = optText(f.since)
  if (since !== undefined && !isValidDate(since))
    throw invalid('could not list the events: since must be a calendar day (YYYY-MM-DD)')
  return {
    type: type as AdminEventFilter['type'],
    since: since === undefined ? undefined : parseDate(since)
  }
}

/** A channel as the Alerts screen lists it: where messages go, never a credential. */
function alertChannelView(c: Channel): AlertChannelViewT {
  return {
    id: c.id,
    kind: c.kind,
    name: c.name,
    enabled: c.enabled,
    digest: c.digest,
    target: channelTarget(c),
    createdAt: c.createdAt
  }
}
