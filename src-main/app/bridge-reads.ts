/**
 * The bridge methods that only read the store. Every other method waits for the store's write
 * lock (on timers, core/store-lock.ts) before its handler runs, because its handler writes
 * synchronously once it runs; a read must not wait for a lock it does not need, so the UI keeps
 * answering while another process (the admin CLI, a backup) writes. A method missing here only
 * waits when it need not; one listed by mistake is refused with 503 at once when it meets the
 * lock, never stalls anyone.
 */
import type { AppMethod } from '../../src-shared/app-api'

export const READ_ONLY_METHODS: ReadonlySet<AppMethod> = new Set<AppMethod>([
  'settings',
  'checkSettings',
  'listResellers',
  'listGroups',
  'dashboard',
  'listProducts',
  'quoteOrder',
  'listOrders',
  'getOrder',
  'storedSslStatus',
  'csrDraft',
  'exportPrivateKey',
  'exportEncryptedKey',
  'exportPfx',
  'emailOutbox',
  'certificate',
  'listDeployTargets',
  'listDeployRuns',
  'listAcmeSubscriptions',
  'orderRenewal',
  'acmeHmacKey',
  'listInvoices',
  'listTransactions',
  'listApiKeys',
  'revealApiKey',
  'installationReport',
  'installationBadges',
  'listImported',
  'replacementQuote',
  'expiringReport',
  'expiringCsv',
  'backupProgress',
  'alertRules',
  'alertChannels',
  'alertDeliveries',
  'listAlerts',
  'listEvents',
  'acmeSubscription',
  'getInvoice',
  'orderPage',
  'orderViewCounts',
  'invoicePage',
  'ledgerPage',
  'chooseExportPath',
  'exportJobs',
  'session',
  'listAdmins',
  'auditLog'
])
