/**
 * What the preload, the browser-mode client and the UI need at run time: the method names, the
 * channel and route prefixes, and the envelope. No schema code lives here (the table with
 * schemas is src-shared/app-api.ts, read by main), so the preload stays one small file and the
 * renderer bundle carries no validator.
 */
import type { AppMethod } from '../src-shared/app-api'

export { APPROVER_LOCAL_PARTS, HMAC_KEY_PLACEHOLDER, REVOCATION_REASONS } from '../src-shared/constants'

/**
 * The method names at run time (types vanish). `satisfies` makes the compiler refuse both a
 * missing and an extra name, so this list is checked against the contract table, not kept by hand.
 */
export const APP_METHODS = {
  settings: true,
  updateSettings: true,
  checkSettings: true,
  listResellers: true,
  createReseller: true,
  updateReseller: true,
  listGroups: true,
  dashboard: true,
  listProducts: true,
  quoteOrder: true,
  createOrder: true,
  listOrders: true,
  getOrder: true,
  cancelOrder: true,
  payOrder: true,
  storePrivateKey: true,
  keepCsrDraft: true,
  csrDraft: true,
  discardCsrDraft: true,
  exportPrivateKey: true,
  exportEncryptedKey: true,
  exportPfx: true,
  configureOrder: true,
  sslStatus: true,
  storedSslStatus: true,
  changeDcv: true,
  changeNameDcv: true,
  approverChoices: true,
  revokeCertificate: true,
  reissuePlan: true,
  resendValidation: true,
  emailOutbox: true,
  approveEmail: true,
  chooseApprover: true,
  reissue: true,
  certificate: true,
  caRootPem: true,
  listDeployTargets: true,
  addDeployTarget: true,
  removeDeployTarget: true,
  deployNow: true,
  listDeployRuns: true,
  listAcmeSubscriptions: true,
  acmeHmacKey: true,
  listInvoices: true,
  listTransactions: true,
  topUp: true,
  listApiKeys: true,
  createApiKey: true,
  revealApiKey: true,
  revokeApiKey: true,
  installationReport: true,
  checkInstallation: true,
  addInstallationEndpoint: true,
  removeInstallationEndpoint: true,
  installationBadges: true,
  listImported: true,
  importUploads: true,
  importFolder: true,
  importEndpoints: true,
  replacementQuote: true,
  renewImported: true,
  expiringReport: true,
  expiringCsv: true,
  // backup from the settings screen
  startBackup: true,
  backupProgress: true,
  // Renewal automation
  orderRenewal: true,
  setRenewalMethod: true,
  // screens: event log, ACME subscription page, invoice document, validation cancel
  listEvents: true,
  acmeSubscription: true,
  getInvoice: true,
  cancelValidation: true,
  // Lists paged by key and CSV exports.
  orderPage: true,
  orderViewCounts: true,
  invoicePage: true,
  ledgerPage: true,
  chooseExportPath: true,
  startExport: true,
  exportJobs: true,
  cancelExport: true,
  dismissExport: true,
  dismissFinishedExports: true,
  // Alerts.
  alertRules: true,
  updateAlertRule: true,
  alertChannels: true,
  addAlertChannel: true,
  removeAlertChannel: true,
  testAlertChannel: true,
  alertDeliveries: true,
  listAlerts: true,
  // Who the UI acts as, which book, admins and the audit log.
  session: true,
  connectTeam: true,
  disconnectTeam: true,
  changePassword: true,
  beginTotp: true,
  confirmTotp: true,
  disableTotp: true,
  listAdmins: true,
  addAdmin: true,
  setAdminRole: true,
  setAdminEnabled: true,
  auditLog: true
} as const satisfies Record<AppMethod, true>

export const appMethodNames = Object.keys(APP_METHODS) as AppMethod[]

export const isAppMethod = (name: string): name is AppMethod => Object.hasOwn(APP_METHODS, name)

/** IPC channels are `certdesk:<method>`; main refuses any other channel (VS Code's prefix check). */
export const CHANNEL_PREFIX = 'certdesk:'

/** Browser mode: POST `/rpc/<method>` with `{ args: [...] }`. */
export const RPC_PREFIX = '/rpc/'

/** Browser mode: POST here ends the session on the server (the sign-out button). */
export const SIGN_OUT_PATH = '/ui/logout'

/**
 * What a handler answers on either transport, in the reseller API's envelope; the client turns
 * a failure into an Error carrying the API's message, so the UI cannot tell the transports apart.
 */
export type BridgeResult<T> = { success: true; result: T } | { success: false; error: string; signIn?: SignInNeed }

/**
 * Why a call found no session, on a 401: the desktop's browser mode wants its newest one-time
 * link, a team server an admin's name and password, and a desktop app that works on a team
 * server's book a new sign-in there.
 */
export type SignInNeed = 'link' | 'password' | 'team'

/** An Error of a failed call; `signIn` says what sign-in it needs when it failed for want of one. */
export type BridgeError = Error & { signIn?: SignInNeed }

/** How the message of a call the team server no longer takes begins (see `signInNeedOf`). */
export const TEAM_SIGN_IN_AGAIN = 'sign in again to the team server'

/**
 * The sign-in a failed call needs, or null. Electron's contextBridge hands the page an Error
 * with its message only, so a team server's lapsed session is also known by its message.
 */
export function signInNeedOf(err: unknown): SignInNeed | null {
  const e = err as BridgeError | null
  if (e?.signIn) return e.signIn
  return e instanceof Error && e.message.startsWith(TEAM_SIGN_IN_AGAIN) ? 'team' : null
}

export function unwrap<T>(r: BridgeResult<T>): T {
  if (r && r.success === true) return r.result
  const err: BridgeError = new Error(
    r && typeof r.error === 'string' ? r.error : 'could not reach CertDesk: an answer without a result'
  )
  if (r && (r.signIn === 'link' || r.signIn === 'password' || r.signIn === 'team')) err.signIn = r.signIn
  throw err
}

/** Browser mode with admin accounts: POST `{ name, password, code? }` here signs in. */
export const SIGN_IN_PATH = '/ui/sign-in'

/** The browser-mode window global name and the Electron one are the same. */
export const BRIDGE_GLOBAL = 'certdesk'
