/**
 * The CertDesk service: every domain module over one store (SQLite or PostgreSQL, core/store),
 * one clock and one keychain.
 * Transports (IPC, HTTP RPC, the reseller API, the CLI) call these and nothing else.
 */
import { randomUUID } from 'node:crypto'
import defaultCatalogue from '../../resources/catalogue.json'
import { AcmeIssuer } from './acme-client/acme-issuer'
import { Admins } from './admins'
import { Alerts } from './alerts'
import { AcmeServerCore } from './acme-server'
import { localCaSigner } from './acme-server/signer'
import { AcmeSubscriptions } from './acme-server/acme-subscriptions'
import { Catalogue, seedCatalogue, type CatalogueFile } from './billing/catalogue'
import { Certificates } from './certificates'
import type { CoreContext } from './context'
import { openStore, type EngineName, type Store } from './store'

/** A store that cannot be opened: one line for the person who named it, and an exit code (sysexits). */
export { StoreOpenError } from './store'
import { Deploys } from './deploy/deploys'
import { KeyVault } from './certificates/key-vault'
import { Events } from './events'
import { Idempotency } from './orders/idempotency'
import { Imports } from './imports'
import { Installations } from './installations'
import { Invoices } from './billing/invoices'
import type { Issuer } from './certificates/issuer'
import { Ledger } from './billing/ledger'
import { LocalCa } from './certificates/local-ca'
import { LocalCaCrl } from './certificates/local-ca-crl'
import { Orders } from './orders/orders'
import { Reports } from './certificates/reports'
import { Resellers, type Reseller } from './billing/resellers'
import { Scheduler } from './scheduler'
import type { SecretStore } from './secrets'
import { secretStoreFor, type SecretSourceSpec } from './server-secrets'
import { Settings } from './settings/settings'
import { StatsService } from './billing/stats'
import { systemClock, type Clock } from './time'
import { Watchlist } from './certificates/watchlist'

export interface ServiceOptions {
  /** The data dir: the SQLite store (unless `database` names another), backups, the keychain's service name. */
  dataDir: string
  /**
   * A PostgreSQL URL (`postgres://user@host/db`): the book lives in that database instead of the
   * data dir's SQLite file (core/store).
   */
  database?: string
  clock?: Clock
  /** The better-sqlite3 binary built for this runtime's ABI, when it is not the module's own. */
  nativeBinding?: string
  /** Defaults to the OS keychain under a service name unique to this data dir. */
  secrets?: SecretStore
  /**
   * Where secrets come from when `secrets` is not given: the OS keychain (default), or a server
   * key source (`--secrets file:PATH` or `systemd`, server-secrets/), which never touches it.
   */
  secretSource?: SecretSourceSpec
  /** Who signs certificates; the local CA when not given (the ACME branch adds another). */
  issuer?: Issuer
}

export interface Service {
  readonly dataDir: string
  readonly ctx: CoreContext
  readonly settings: Settings
  readonly catalogue: Catalogue
  readonly resellers: Resellers
  readonly ledger: Ledger
  readonly orders: Orders
  readonly invoices: Invoices
  readonly stats: StatsService
  readonly idempotency: Idempotency
  readonly acme: AcmeSubscriptions
  readonly acmeIssuer: AcmeIssuer
  /** The embedded ACME server's accounts, orders and certificates (src-main/acme is its protocol). */
  readonly acmeServer: AcmeServerCore
  readonly events: Events
  readonly deploys: Deploys
  readonly keyVault: KeyVault
  readonly localCa: LocalCa
  /** The local CA's CRL, served at CRL_PATH and named by every leaf it signs. */
  readonly crl: LocalCaCrl
  readonly certificates: Certificates
  readonly scheduler: Scheduler
  readonly watchlist: Watchlist
  /** What servers really present for each order (installations/). */
  readonly installations: Installations
  /** Certificates bought elsewhere, tracked for expiry and offered for renewal (imports/). */
  readonly imports: Imports
  /** The expiry report (issued here and imported). */
  readonly reports: Reports
  /** Alert rules, channels and deliveries (alerts/). */
  readonly alerts: Alerts
  /** Which engine holds the book: `sqlite` (the data dir's file) or `postgres`. */
  readonly engine: EngineName
  /** Admin accounts, their sessions and the audit log (admins/). */
  readonly admins: Admins
  /** Waits for the transaction in progress, then closes the store. */
  close(): Promise<void>
}

/**
 * Opens the store (SQLite in the data dir, or the PostgreSQL database `database` names) and the
 * service over it. A store that cannot be opened is a StoreOpenError (one line, an exit code)
 * for a PostgreSQL URL, a storage fault for a SQLite file.
 */
export async function openService(opts: ServiceOptions): Promise<Service> {
  const store: Store = await openStore(
    opts.database !== undefined
      ? { engine: 'postgres', url: opts.database }
      : { engine: 'sqlite', dataDir: opts.dataDir, nativeBinding: opts.nativeBinding }
  )
  try {
    return await serviceOver(store, opts)
  } catch (err) {
    await store.close().catch(() => undefined)
    throw err
  }
}

async function serviceOver(store: Store, opts: ServiceOptions): Promise<Service> {
  await seedCatalogue(store, defaultCatalogue as CatalogueFile)
  const settings = new Settings(store)
  const installId = await settings.getOrCreate('install_id', () => randomUUID())
  const ctx: CoreContext = {
    store,
    clock: opts.clock ?? systemClock,
    secrets: opts.secrets ?? secretStoreFor(opts.secretSource ?? { kind: 'keychain' }, store, opts.dataDir, installId),
    storeVersion: () => store.storeVersion(),
    scopeVersions: (resellerId) => store.scopeVersions(resellerId),
    localWrites: () => store.localWrites(),
    sharedStore: store.engine === 'postgres'
  }
  const catalogue = new Catalogue(ctx)
  const acme = new AcmeSubscriptions(ctx)
  const localCa = new LocalCa(ctx)
  // Every leaf of the local CA names its CRL, which CertDesk signs and serves (local-ca-crl.ts).
  const crl = new LocalCaCrl(ctx, settings, localCa)
  localCa.crlUrl = () => crl.url()
  // An external ACME CA, when configured, issues TLS orders and validates their names (RFC 8555).
  const acmeIssuer = new AcmeIssuer(ctx, settings, opts.issuer ?? localCa)
  const orders = new Orders(ctx, catalogue, acme, async (p) => await acmeIssuer.issues(p))
  const certificates = new Certificates(ctx, orders, catalogue, settings, acmeIssuer, acmeIssuer, acmeIssuer)
  certificates.crl = crl
  const deploys = new Deploys(ctx)
  const resellers = new Resellers(ctx)
  const events = new Events(ctx)
  // Every stored certificate (issue, reissue, automatic reissue) goes to its deploy targets.
  certificates.onStored = (c) => deploys.afterCertificateStored(c)
  // Keys generated in the app reach folder targets as privkey.pem, only next to their own certificate.
  const keyVault = new KeyVault(ctx, orders)
  // A key generated for a reissue is kept in the transaction that stores its certificate, before the deploys start.
  certificates.keys = keyVault
  deploys.setKeyProvider(
    async (orderId, _serial, certificatePem) => await keyVault.keyMatching(orderId, certificatePem)
  )
  const alerts = new Alerts(ctx, settings)
  return {
    dataDir: opts.dataDir,
    ctx,
    settings,
    catalogue,
    resellers,
    ledger: new Ledger(ctx),
    orders,
    invoices: new Invoices(ctx),
    stats: new StatsService(ctx),
    idempotency: new Idempotency(ctx),
    acme,
    acmeIssuer,
    acmeServer: new AcmeServerCore(ctx, settings, acme, localCaSigner(localCa)),
    events,
    deploys,
    keyVault,
    localCa,
    crl,
    certificates,
    scheduler: new Scheduler(ctx, certificates, { deploys, events, renewals: acmeIssuer, alerts, crl }),
    watchlist: new Watchlist(ctx, orders),
    installations: new Installations(ctx, orders, settings),
    imports: new Imports(ctx, orders, resellers, catalogue, keyVault),
    reports: new Reports(ctx),
    alerts,
    engine: store.engine,
    admins: new Admins(ctx),
    close: () => store.close()
  }
}

/** Credit a first-run demo reseller starts with, so a new user can order at once. */
export const DEMO_CREDIT_CENTS = 1000_00

/**
 * On an empty store, creates a demo reseller (group "Standard", API access on, 1000.00 USD
 * credit) so a first start has something to try; returns it when it was created.
 */
export async function ensureDemoReseller(service: Service): Promise<Reseller | null> {
  if ((await service.resellers.list()).length > 0) return null
  const r = await service.resellers.create({
    name: 'Demo Reseller',
    email: 'demo@example.com',
    company: 'Demo Hosting Ltd',
    groupId: 1
  })
  await service.ledger.topUp(r.id, DEMO_CREDIT_CENTS, 'Welcome credit for the demo reseller')
  return await service.resellers.get(r.id)
}
