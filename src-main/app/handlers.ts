/**
 * The bridge's handler table: one thin adapter per method of the contract table
 * (src-shared/app-api.ts), calling core service functions only. Its type is derived from the
 * contract, so a method without a handler (or a handler with other arguments) does not compile.
 * Arguments reach a handler only after `callHandler` has checked them against the contract's
 * schemas; values are the core's to judge. Served over IPC (./ipc.ts) and over the browser-mode
 * RPC (./browser-ui.ts).
 */
import type { AppApi, AppMethod } from '../../src-shared/app-api'
import type { BridgeResult } from '../../src-preload/channels'
import type { Order, OrderView, PageRequest, Reseller, ResellerView, SettingsView } from '../../src-shared/records'
import { approverChoices, type StoredCertificate, type SslStatus } from '../core/certificates'
import { productView } from '../core/catalogue'
import {
  acmeCommandsView,
  acmeSetup,
  acmeSubscriptionView,
  shownAcmeUrls,
  type AcmeUrls
} from '../core/acme-subscriptions'
import { orderRenewalView } from '../core/ari-order-view'
import { settingsView as settingValues, settingsViewProblems, updateSettingsView } from '../core/settings-view'
import { deployRunView, deployTargetView, deployTargetViews } from '../core/deploy/deploy-views'
import { conflict, invalid, notFound, ServiceError } from '../core/errors'
import { expiringCsv, expiringSummary } from '../core/reports'
import { EXPIRING_WITHIN_DAYS } from '../core/watchlist'
import { buildPfx, encryptPrivateKeyPem } from '../core/deploy/pfx'
import { buildLegacyPfx } from '../core/deploy/pfx-legacy'
import type { ApiKeyInfo } from '../core/resellers'
import type { Service } from '../core/service'
import { STATUS_OF } from '../http/errors'
import { storageFault } from '../core/store-faults'
import { backupJobsFor } from '../core/backup'
// Pages as the reseller API pages them (reseller API v3.0 "Limits": default 50, at most 100).
import { DEFAULT_LIMIT, MAX_LIMIT } from '../http/paging'
import { READ_ONLY_METHODS } from './bridge-reads'
import { checkArgs } from './validate'
import { inScreenWords } from './error-words'
import type { EventFilter as EventFilterInput } from '../../src-shared/records'
import { subscriptionCertificates } from '../core/acme-subscription-certificates'
import { ADMIN_LOG_TYPES, type AdminEventFilter } from '../core/events'
import type { Channel } from '../core/alerts'
import { channelTarget } from '../core/alerts/channels'
import type { AlertChannelViewT } from '../../src-shared/alert-records'
import { isValidDate, parseDate } from '../core/time'
import { ListPages } from '../core/list-pages'
import { ExportJobs, SUGGESTED_NAME } from './export-jobs'
import { suggestExportPath } from './export-path'
import { adminAdapters } from './admin-handlers'
import type { TeamConnection } from './team-client'

export type AppHandlers = {
  [K in AppMethod]: (...args: Parameters<AppApi[K]>) => Awaited<ReturnType<AppApi[K]>> | ReturnType<AppApi[K]>
}

export interface AppEnvironment {
  transport: 'electron' | 'browser'
  /** The reseller API's base URL, once the listener runs. */
  listenerUrl: () => string
  apiVersion: string
  /** The desktop app's save dialog for a CSV export; without it the UI edits a suggested path. */
  chooseSavePath?: (suggestedName: string) => Promise<string | null>
  /** This process signs admins in with their accounts: it serves a team's book. */
  accounts?: boolean
  /** The name a team's book is shown by; the listener's host when not given. */
  bookName?: () => string
  /**
   * The desktop app's link to a team server, where the process may be a client of one (the
   * window, the desktop's browser mode); never on a process that signs admins in itself.
   */
  team?: TeamConnection
}

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
  writeGates.set(table, () => service.ctx.whenWritable())
  return table
}

/** How a table's writing methods wait for the store's write lock (core/store-lock.ts). */
const writeGates = new WeakMap<AppHandlers, () => Promise<void>>()

const fail = (err: Error): never => {
  throw err
}

function adapters(service: Service, env: AppEnvironment): AppHandlers {
  const vault = service.keyVault
  const watch = service.watchlist
  const pages = new ListPages(service.ctx, service.orders)
  const exports = new ExportJobs(pages)

  const resellerView = (r: Reseller): ResellerView => ({
    ...r,
    groupName: r.groupId === null ? null : (service.catalogue.group(r.groupId)?.name ?? null)
  })
  const orderView = (o: Order, keys?: Set<number>, revoked?: Set<number>): OrderView => ({
    ...o,
    hasStoredKey: keys ? keys.has(o.id) : vault.has(o.id),
    certificateRevoked: (revoked ?? service.certificates.revokedCurrent([o.id])).has(o.id)
  })
  const sslView = ({ csr: _csr, ...s }: SslStatus) => ({
    ...s,
    order: orderView(s.order),
    certificate: s.certificate && certView(s.certificate)
  })
  const reseller = (resellerId: number): Reseller => service.resellers.get(resellerId)
  /** The order's current certificate with its days left, and every certificate it had. */
  const certificateDetail = (r: number, orderId: number) => {
    const { order: _order, ...status } = service.certificates.certificate(r, orderId)
    return {
      ...status,
      certificate: status.certificate && certView(status.certificate),
      history: service.certificates.history(r, orderId).map(certView)
    }
  }
  /** The order of this reseller (404 otherwise), so one account's page cannot act on another's orders. */
  const ownOrder = (resellerId: number, orderId: number): Order => service.orders.get(reseller(resellerId).id, orderId)
  /** An API key of this reseller, so one account's page cannot act on another's keys. */
  const ownKey = (resellerId: number, keyId: number): ApiKeyInfo => {
    const k = service.resellers.apiKey(keyId)
    if (k.resellerId !== reseller(resellerId).id) throw notFound(`API key ${keyId} not found`)
    return k
  }
  const acmeUrlsNow = (): AcmeUrls => shownAcmeUrls(service.settings, env.listenerUrl())

  const settingsView = (): SettingsView => ({
    dataDir: service.dataDir,
    listenerUrl: env.listenerUrl(),
    apiVersion: env.apiVersion,
    transport: env.transport,
    ...settingValues(service.settings)
  })

  return {
    settings: settingsView,
    // The core checks every value and writes all or none; a refused one is a 400.
    updateSettings: (input) => {
      updateSettingsView(service.settings, input)
      return settingsView()
    },
    checkSettings: (input) => settingsViewProblems(input),

    listResellers: () => service.resellers.list().map(resellerView),
    createReseller: (input) => resellerView(service.resellers.create(input)),
    updateReseller: (resellerId, input) => resellerView(service.resellers.update(reseller(resellerId).id, input)),
    listGroups: () => service.catalogue.groups().map(({ id, name }) => ({ id, name })),

    dashboard: (resellerId) => {
      const r = reseller(resellerId)
      return {
        stats: service.stats.stats(r.id),
        expiring: expiringSummary(service.ctx, r.id, EXPIRING_WITHIN_DAYS),
        waitingForValidation: watch.waitingForValidation(r.id).map((o) => orderView(o))
      }
    },

    listProducts: (resellerId, filter) => service.catalogue.list(reseller(resellerId).groupId, filter).map(productView),
    quoteOrder: (resellerId, input) =>
      service.orders.quoteView(reseller(resellerId), { ...input, contactEmail: optText(input.contactEmail) }),
    createOrder: (resellerId, input, payment) => {
      const created = service.orders.create(
        reseller(resellerId),
        { ...input, contactEmail: optText(input.contactEmail) },
        payment
      )
      return { order: orderView(created.order), creditUsed: created.creditUsed, newBalance: created.newBalance }
    },
    listOrders: (resellerId, filter, p) => {
      const result = service.orders.list(
        reseller(resellerId).id,
        { status: filter.status, domain: optText(filter.domain) },
        page(p)
      )
      const ids = result.items.map((o) => o.id)
      const [keys, revoked] = [vault.withKeys(ids), service.certificates.revokedCurrent(ids)]
      return { ...result, items: result.items.map((o) => orderView(o, keys, revoked)) }
    },
    getOrder: (resellerId, orderId) => orderView(ownOrder(resellerId, orderId)),
    cancelOrder: (resellerId, orderId) => {
      const r = service.orders.cancel(reseller(resellerId).id, orderId)
      return { ...r, order: orderView(r.order) }
    },
    payOrder: (resellerId, orderId) => {
      const r = service.orders.payFromCredit(reseller(resellerId).id, orderId)
      return { ...r, order: orderView(r.order) }
    },

    storePrivateKey: (resellerId, orderId, pem) => {
      vault.store(reseller(resellerId).id, orderId, pem)
      return { stored: true as const }
    },
    keepCsrDraft: (resellerId, orderId, draft) =>
      vault.keepDraft(reseller(resellerId).id, orderId, draft.pkcs8Pem, draft.csrPem),
    csrDraft: (resellerId, orderId) => vault.draft(reseller(resellerId).id, orderId),
    discardCsrDraft: (resellerId, orderId) => {
      vault.discardDraft(reseller(resellerId).id, orderId)
      return { discarded: true as const }
    },
    exportPrivateKey: (resellerId, orderId) => {
      const r = reseller(resellerId).id
      const pkcs8Pem = vault.read(r, orderId)
      const current = service.certificates.certificate(r, orderId).certificate
      return {
        pkcs8Pem,
        matchesCertificate: current ? vault.keyMatching(orderId, current.certificatePem) !== null : null
      }
    },
    exportEncryptedKey: async (resellerId, orderId, password) => {
      const secret = exportPassword(password, 'private key')
      return { pem: await encryptPrivateKeyPem(vault.read(reseller(resellerId).id, orderId), secret) }
    },
    exportPfx: async (resellerId, orderId, password, encryption) => {
      const r = reseller(resellerId).id
      const secret = exportPassword(password, 'PFX')
      vault.read(r, orderId) // the order is this reseller's and a key is kept for it, or 404
      const current = service.certificates.certificate(r, orderId).certificate
      if (!current) throw conflict('could not build the PFX: the order has no certificate yet')
      // A PFX pairs the key with the current certificate; after a reissue from another CSR the
      // kept key belongs to an earlier certificate, and such a PFX would not work on a server.
      const key = vault.keyMatching(orderId, current.certificatePem)
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
        friendlyName: service.orders.get(r, orderId).domain
      })
      return { pfxBase64: pfx.toString('base64') }
    },
    configureOrder: async (resellerId, input) =>
      sslView(
        await service.certificates.configure(reseller(resellerId).id, {
          ...input,
          approverEmail: optText(input.approverEmail)
        })
      ),
    sslStatus: async (resellerId, orderId) =>
      sslView(await service.certificates.status(reseller(resellerId).id, orderId)),
    storedSslStatus: (resellerId, orderId) => sslView(service.certificates.current(reseller(resellerId).id, orderId)),
    changeDcv: async (resellerId, orderId, method, approverEmail) =>
      sslView(await service.certificates.changeDcv(reseller(resellerId).id, orderId, method, optText(approverEmail))),
    changeNameDcv: async (resellerId, orderId, name, method, approverEmail) =>
      sslView(
        await service.certificates.changeDcv(reseller(resellerId).id, orderId, undefined, undefined, [
          { name, method, approverEmail: optText(approverEmail) }
        ])
      ),
    approverChoices: (names) => Object.fromEntries(names.map((n) => [n, approverChoices(n)])),
    resendValidation: async (resellerId, orderId) =>
      sslView(await service.certificates.resendValidation(reseller(resellerId).id, orderId)),
    emailOutbox: (resellerId, orderId) => service.certificates.outbox(ownOrder(resellerId, orderId).id),
    approveEmail: async (resellerId, orderId, code, name) =>
      sslView(await service.certificates.approveEmail(reseller(resellerId).id, orderId, code, optText(name))),
    chooseApprover: async (resellerId, orderId, name, approverEmail) =>
      sslView(await service.certificates.chooseApprover(reseller(resellerId).id, orderId, name, approverEmail)),
    reissue: async (resellerId, input) =>
      sslView(
        await service.certificates.reissue(reseller(resellerId).id, {
          ...input,
          csr: optText(input.csr),
          approverEmail: optText(input.approverEmail),
          privateKeyPem: optText(input.privateKeyPem)
        })
      ),
    certificate: (resellerId, orderId) => certificateDetail(reseller(resellerId).id, orderId),
    reissuePlan: async (resellerId, orderId, names) =>
      service.certificates.reissuePlan(reseller(resellerId).id, orderId, names),
    revokeCertificate: async (resellerId, orderId, revocation) => {
      const r = reseller(resellerId).id
      await service.certificates.revoke(r, orderId, revocation)
      return certificateDetail(r, orderId)
    },
    caRootPem: async () => ({ pem: await service.localCa.rootPem() }),

    listDeployTargets: (resellerId, orderId) =>
      deployTargetViews(service.ctx, service.deploys, ownOrder(resellerId, orderId).id),
    addDeployTarget: (resellerId, orderId, input) => {
      const order = ownOrder(resellerId, orderId)
      const created = service.deploys.addTarget(order.id, input)
      return { target: deployTargetView(created.target, null), secret: created.secret }
    },
    removeDeployTarget: (resellerId, orderId, targetId) => {
      const order = ownOrder(resellerId, orderId)
      const t = service.deploys.target(targetId)
      if (t.orderId !== order.id) throw notFound(`deploy target ${targetId} not found`)
      service.deploys.removeTarget(t.id)
      return { removed: true as const }
    },
    deployNow: async (resellerId, orderId) =>
      (await service.deploys.runOrder(ownOrder(resellerId, orderId).id)).map(deployRunView),
    listDeployRuns: (resellerId, orderId, p) => {
      const runs = service.deploys.runs(ownOrder(resellerId, orderId).id, page(p))
      return { ...runs, items: runs.items.map(deployRunView) }
    },

    listAcmeSubscriptions: (resellerId) => {
      const r = reseller(resellerId)
      const urls = acmeUrlsNow()
      return service.acme
        .list(r.id)
        .map((sub) => acmeSubscriptionView(service.orders.get(r.id, sub.orderId), service.acme.details(sub), urls))
    },
    // Renewal automation (RFC 9773 window, delegated DNS, dns-persist-01): read-only DNS looks.
    orderRenewal: (resellerId, orderId) =>
      orderRenewalView(service.ctx, service.settings, service.acmeIssuer, ownOrder(resellerId, orderId).id),
    setRenewalMethod: async (resellerId, orderId, method) => {
      await service.certificates.switchRenewalMethod(reseller(resellerId).id, orderId, method)
      return orderRenewalView(service.ctx, service.settings, service.acmeIssuer, ownOrder(resellerId, orderId).id)
    },
    acmeHmacKey: (resellerId, orderId) => {
      const order = ownOrder(resellerId, orderId)
      const sub = service.acme.forOrder(order.resellerId, order.id)
      const setup = acmeSetup(service.acme.details(sub), acmeUrlsNow())
      return { eabHmacKey: setup.account.eab_hmac_key, commands: acmeCommandsView(setup.commands) }
    },

    listInvoices: (resellerId, filter, p) => service.invoices.list(reseller(resellerId).id, filter, page(p)),
    listTransactions: (resellerId, p) => service.ledger.transactions(reseller(resellerId).id, page(p)),
    topUp: (resellerId, amount, description) =>
      service.ledger.topUp(reseller(resellerId).id, amount, optText(description) ?? 'Credit top-up'),

    listApiKeys: (resellerId) => service.resellers.apiKeys(reseller(resellerId).id),
    createApiKey: (resellerId, label) => service.resellers.createApiKey(reseller(resellerId).id, label?.trim() ?? ''),
    revealApiKey: (resellerId, keyId) => ({ key: service.resellers.revealApiKey(ownKey(resellerId, keyId).id) }),
    revokeApiKey: (resellerId, keyId) => service.resellers.revokeApiKey(ownKey(resellerId, keyId).id),

    installationReport: (resellerId, orderId) => service.installations.report(resellerId, orderId),
    checkInstallation: (resellerId, orderId) => service.installations.check(resellerId, orderId),
    addInstallationEndpoint: (resellerId, orderId, input) =>
      service.installations.addEndpoint(resellerId, orderId, input),
    removeInstallationEndpoint: (resellerId, orderId, endpointId) => {
      service.installations.removeEndpoint(resellerId, orderId, endpointId)
      return { removed: true as const }
    },
    installationBadges: (resellerId, orderIds) => service.installations.badges(reseller(resellerId).id, orderIds),
    listImported: (resellerId) => service.imports.list(resellerId),
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
    replacementQuote: (resellerId, importedId) => service.imports.replacementQuote(resellerId, importedId),
    renewImported: (resellerId, importedId, payment) => {
      const created = service.imports.renew(resellerId, importedId, payment)
      return { order: orderView(created.order), creditUsed: created.creditUsed, newBalance: created.newBalance }
    },
    expiringReport: (resellerId, days) => service.reports.expiring({ days, resellerId: reseller(resellerId).id }),
    expiringCsv: (resellerId, days) => ({
      csv: expiringCsv(service.reports.expiring({ days, resellerId: reseller(resellerId).id }))
    }),
    // Backup from the settings screen: the desktop user names the folder, the core names the file.
    startBackup: (folder) => backupJobsFor(service.ctx, service.dataDir).start(folder),
    backupProgress: () => backupJobsFor(service.ctx, service.dataDir).progress(),
    alertRules: () => service.alerts.rules(),
    updateAlertRule: (rule, change) => service.alerts.updateRule(rule, change),
    alertChannels: () => service.alerts.channels.list().map(alertChannelView),
    addAlertChannel: async (input) => {
      const created = await service.alerts.addChannel(input)
      return { channel: alertChannelView(created.channel), signingSecret: created.signingSecret }
    },
    removeAlertChannel: (id) => {
      service.alerts.removeChannel(id)
      return { removed: true as const }
    },
    testAlertChannel: (id) => service.alerts.testChannel(id),
    alertDeliveries: (p) => service.alerts.deliveries(page(p)),
    listAlerts: (p) => service.alerts.list({}, page(p)),
    // ---- screens: event log, ACME subscription page, invoice document, validation cancel
    listEvents: (resellerId, filter, p) => {
      const r = reseller(resellerId)
      const orderId = filter.orderId === undefined ? undefined : ownOrder(r.id, filter.orderId).id
      // The desktop user is the admin: the log holds the alert events about this reseller's orders too.
      const events = service.events.adminLog(r.id, { ...eventFilter(filter), orderId }, page(p))
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
    acmeSubscription: (resellerId, orderId) => {
      const order = ownOrder(resellerId, orderId)
      const sub = service.acme.summaryForOrder(order.resellerId, order.id)
      if (!sub) return null
      return {
        subscription: acmeSubscriptionView(order, service.acme.details(sub), acmeUrlsNow()),
        certificates: subscriptionCertificates(service.ctx, sub.id)
      }
    },
    getInvoice: (resellerId, invoiceId) => service.invoices.get(reseller(resellerId).id, invoiceId),
    cancelValidation: async (resellerId, orderId) =>
      sslView(await service.certificates.cancelValidation(reseller(resellerId).id, orderId)),
    // Lists paged by key and CSV exports written by the main process.
    orderPage: (resellerId, q) => {
      const p = pages.orderPage(reseller(resellerId).id, q)
      const ids = p.items.map((o) => o.id)
      const [keys, revoked] = [vault.withKeys(ids), service.certificates.revokedCurrent(ids)]
      return { ...p, items: p.items.map((o) => ({ ...orderView(o, keys, revoked), worklist: o.worklist })) }
    },
    orderViewCounts: (resellerId) => pages.viewCounts(reseller(resellerId).id),
    invoicePage: (resellerId, q) => pages.invoicePage(reseller(resellerId).id, q),
    ledgerPage: (resellerId, q) => pages.ledgerPage(reseller(resellerId).id, q),
    chooseExportPath: async (name) => {
      if (!SUGGESTED_NAME.test(name))
        throw invalid('could not suggest an export file: the name must be plain and end in .csv')
      if (env.chooseSavePath) return { path: await env.chooseSavePath(name), dialog: true }
      return { path: suggestExportPath(name), dialog: false }
    },
    startExport: (resellerId, req) => exports.start(reseller(resellerId).id, req),
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

export type BridgeAnswer = {
  status: number
  body: BridgeResult<unknown>
  fault?: unknown
}

/**
 * Runs one handler and answers in the bridge envelope; arguments that do not fit the contract's
 * schemas come back as 400 from the handler's own check. Core errors carry a message written for
 * a person; anything else comes back as `fault` for the caller's log and leaves without details.
 */
export async function callHandler(handlers: AppHandlers, method: AppMethod, args: unknown[]): Promise<BridgeAnswer> {
  try {
    // A method that writes waits on timers while another process holds the store's lock, so
    // its synchronous transactions never sleep on the main process's only thread (the window's
    // or the listener's); reads go straight on (bridge-reads.ts).
    if (!READ_ONLY_METHODS.has(method)) await writeGates.get(handlers)?.()
    const fn = handlers[method] as (...a: unknown[]) => unknown
    const result = await fn(...args)
    return { status: 200, body: { success: true, result: result === undefined ? null : result } }
  } catch (err) {
    return failureAnswer(err)
  }
}

/**
 * The envelope of a failure, with the reseller API's status codes; a core message in the screens'
 * words (error-words.ts).
 */
export function failureAnswer(err: unknown): BridgeAnswer {
  if (err instanceof ServiceError)
    return { status: STATUS_OF[err.kind], body: { success: false, error: inScreenWords(err.message) } }
  // A full disk, a failing write or a locked store: 503 to retry, as the reseller API answers.
  const fault = storageFault(err)
  if (fault) return { status: 503, body: { success: false, error: fault.message } }
  // usdToCents and date parsing say what is wrong with a value in a RangeError.
  if (err instanceof RangeError) return { status: 400, body: { success: false, error: err.message } }
  return { status: 500, body: { success: false, error: 'internal error; see the CertDesk log' }, fault: err }
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
