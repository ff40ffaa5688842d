/**
 * What an ACME client needs to use a subscription: the ACME server's addresses (the public base
 * URL when one is set, the loopback listener otherwise), the root to trust, and the ready-to-paste
 * set-up commands for certbot, acme.sh and lego, as the set-up page, GET /orders/{id}/acme and the
 * desktop ACME panel show them.
 */
import {
  ACME_DIRECTORY_URL_SETTING,
  ACME_ROOT_CA_PATH,
  ACME_SETUP_PREFIX,
  DEFAULT_ACME_PORT,
  ROOT_CA_FILE,
  type AcmeCategory,
  type AcmeDetails,
  type AcmeDomain,
  type AcmeSubscription
} from './acme-subscriptions'
import type { Order } from '../../../src-shared/records'
import { PUBLIC_LISTENER_SETTINGS, publicUrlOf } from '../public-url'
import { shellQuote } from '../shell-quote'
import { HMAC_KEY_PLACEHOLDER } from '../../../src-shared/constants'
import type { AcmeCommandsView, AcmeSubscriptionView } from '../../../src-shared/records'

/** Ready-to-paste command lines of a subscription: fetching the root, then one per ACME client. */
export interface AcmeClientCommands {
  root_ca: string
  certbot: string
  acme_sh: string
  lego: string
}

/**
 * The command lines the set-up page, GET /orders/{id}/acme and the desktop ACME panel show.
 * Each value is one shell word made by `shellQuote`: what the store holds (an address, a
 * name, a URL) reaches the client as one argument and never as shell syntax, even when an
 * older row holds characters the checks on input refuse today.
 */
export function clientCommands(d: {
  serverUrl: string
  eabKid: string
  eabHmacKey: string
  names: string[]
  email: string | null
  rootCaPath: string
  rootCaUrl: string
  /** What the clients must trust for the directory's certificate (AcmeUrls.trust); the CertDesk root when absent. */
  trust?: ClientTrust
}): AcmeClientCommands {
  const q = shellQuote
  const line = (...words: string[]): string => words.join(' ')
  const email = q(d.email ?? 'you@example.com')
  const names = (flag: string): string[] => d.names.flatMap((n) => [flag, q(n)])
  const server = q(d.serverUrl)
  const root = q(d.rootCaPath)
  const kid = q(d.eabKid)
  const hmac = q(d.eabHmacKey)
  const trust = d.trust ?? { kind: 'certdesk-root', rootSha256: null }
  // With the CertDesk root the clients are pointed at it; a certificate the system trusts needs nothing.
  const withRoot = trust.kind === 'certdesk-root'
  return {
    root_ca:
      withRoot && trust.rootSha256
        ? // Fetched over TLS whose chain ends in this very root: the fetch cannot check it, so the
          // file is checked against the root's SHA-256, which comes with these commands.
          line(
            'curl',
            '-sko',
            root,
            q(d.rootCaUrl),
            '&&',
            'echo',
            q(`${trust.rootSha256}  ${d.rootCaPath}`),
            '|',
            'sha256sum',
            '-c',
            '-'
          )
        : line('curl', '-so', root, q(d.rootCaUrl)),
    certbot: line(
      ...(withRoot ? [`REQUESTS_CA_BUNDLE=${root}`] : []),
      'certbot',
      'certonly',
      '--standalone',
      '--non-interactive',
      '--agree-tos',
      '--server',
      server,
      '--eab-kid',
      kid,
      `--eab-hmac-key=${hmac}`,
      '-m',
      email,
      ...names('-d')
    ),
    acme_sh: line(
      'acme.sh',
      '--register-account',
      '--server',
      server,
      ...(withRoot ? ['--ca-bundle', root] : []),
      '--eab-kid',
      kid,
      '--eab-hmac-key',
      hmac,
      '-m',
      email,
      '&&',
      'acme.sh',
      '--issue',
      '--standalone',
      '--server',
      server,
      ...(withRoot ? ['--ca-bundle', root] : []),
      ...names('-d')
    ),
    lego: line(
      ...(withRoot ? [`LEGO_CA_CERTIFICATES=${root}`] : []),
      'lego',
      '--server',
      server,
      '--eab',
      '--kid',
      kid,
      `--hmac=${hmac}`,
      '--email',
      email,
      '--accept-tos',
      ...names('--domains'),
      '--http',
      'run'
    )
  }
}

/** The setting the embedded ACME server writes its directory URL to when it starts. */
/**
 * What ACME clients must trust for the directory's HTTPS certificate: the CertDesk root (the
 * loopback server, and a public listener presenting a certificate of the CertDesk CA; with the
 * root's SHA-256 when it is fetched over that same TLS), or what their system already trusts (a
 * public listener given a certificate from a public CA).
 */
export type ClientTrust = { kind: 'certdesk-root'; rootSha256: string | null } | { kind: 'system' }

/** Where clients reach the ACME directory and CertDesk's local listener. */
export interface AcmeUrls {
  serverUrl: string
  trust: ClientTrust
  /** The account URL of an ACME account id, as the embedded server names it. */
  accountUrl: (id: number) => string
  rootCaUrl: string
  setupUrl: (token: string) => string
}

/**
 * The URLs of a subscription's set-up: the directory URL the server recorded (or its default)
 * and `localBase`, the reseller API listener's base URL (root certificate, `ais` set-up page).
 */
export function acmeUrls(directoryUrl: string | null, localBase: string): AcmeUrls {
  const serverUrl = directoryUrl ?? `https://localhost:${DEFAULT_ACME_PORT}/acme/directory`
  const acmeBase = serverUrl.replace(/\/directory$/, '')
  const local = localBase.replace(/\/+$/, '')
  return {
    serverUrl,
    trust: { kind: 'certdesk-root', rootSha256: null },
    accountUrl: (id) => `${acmeBase}/acct/${id}`,
    rootCaUrl: `${local}${ACME_ROOT_CA_PATH}`,
    setupUrl: (token) => `${local}${ACME_SETUP_PREFIX}${token}`
  }
}

/** The ACME directory under a public base URL (public-url.ts): the server's routes live under `/acme`. */
export const publicDirectoryUrl = (base: string): string => `${base}/acme/directory`

/**
 * The URLs CertDesk shows for ACME subscriptions: under the public base URL when one is set
 * (every process and transport alike), else the loopback listeners' (`localBase`, the reseller
 * API listener the request came in on, and the directory the loopback ACME server recorded).
 */
export async function shownAcmeUrls(
  settings: { get(key: string): Promise<string | null> },
  localBase: string
): Promise<AcmeUrls> {
  const pub = await publicUrlOf(settings)
  if (!pub) return acmeUrls(await settings.get(ACME_DIRECTORY_URL_SETTING), localBase)
  const trust: ClientTrust =
    (await settings.get(PUBLIC_LISTENER_SETTINGS.clientTrust)) === 'system'
      ? { kind: 'system' }
      : { kind: 'certdesk-root', rootSha256: await settings.get(PUBLIC_LISTENER_SETTINGS.rootSha256) }
  return { ...acmeUrls(publicDirectoryUrl(pub.base), pub.base), trust }
}

/** The directory URL CertDesk shows: the public one when set, else the loopback server's. */
export const shownDirectoryUrl = async (settings: { get(key: string): Promise<string | null> }): Promise<string> =>
  (await shownAcmeUrls(settings, '')).serverUrl

/** What a subscription's set-up shows: GET /orders/{id}/acme's `acme` object and the desktop ACME panel. */
export interface AcmeSetup {
  status: AcmeSubscription['status']
  category: AcmeCategory
  domains: AcmeDomain[]
  subscription: { begin: string; next_renewal: string; end: string | null }
  account: {
    eab_kid: string
    eab_hmac_key: string
    server_url: string
    status: 'valid' | 'pending'
    accounts: { url: string; status: string; created_at: string }[]
  }
  allowed_identifiers: string[]
  root_ca_url: string
  commands: AcmeClientCommands
  autoinstall: { login_url: string } | null
}

export function acmeSetup(d: AcmeDetails, urls: AcmeUrls): AcmeSetup {
  const bound = d.accounts.filter((a) => a.status === 'valid')
  return {
    status: d.status,
    category: d.category,
    domains: d.domains,
    subscription: { begin: d.beginDate, next_renewal: d.nextRenewal, end: d.endDate },
    account: {
      eab_kid: d.eabKid,
      eab_hmac_key: d.eabHmacKey,
      server_url: urls.serverUrl,
      status: bound.length > 0 ? 'valid' : 'pending',
      accounts: d.accounts.map((a) => ({ url: urls.accountUrl(a.id), status: a.status, created_at: a.createdAt }))
    },
    allowed_identifiers: d.allowedIdentifiers,
    root_ca_url: urls.rootCaUrl,
    commands: clientCommands({
      serverUrl: urls.serverUrl,
      eabKid: d.eabKid,
      eabHmacKey: d.eabHmacKey,
      names: d.domains.map((x) => x.name),
      email: d.contactEmail,
      rootCaPath: ROOT_CA_FILE,
      rootCaUrl: urls.rootCaUrl,
      trust: urls.trust
    }),
    autoinstall: d.setupToken ? { login_url: urls.setupUrl(d.setupToken) } : null
  }
}

/** The set-up commands under the desktop app's names; the values are the core's, quoted as built. */
export const acmeCommandsView = (c: AcmeClientCommands): AcmeCommandsView => ({
  rootCa: c.root_ca,
  certbot: c.certbot,
  lego: c.lego,
  acmeSh: c.acme_sh
})

/**
 * A subscription's set-up with the EAB HMAC key left out: the key is replaced before the
 * commands are built, so HMAC_KEY_PLACEHOLDER stands where it would be and the key itself stays
 * in the keychain until the desktop user asks for it (`eab_hmac_key` holds the placeholder too).
 */
export const maskedAcmeSetup = (d: AcmeDetails, urls: AcmeUrls): AcmeSetup =>
  acmeSetup({ ...d, eabHmacKey: HMAC_KEY_PLACEHOLDER }, urls)

/** A subscription as the desktop app lists it, without its HMAC key. */
export function acmeSubscriptionView(
  order: Pick<Order, 'id' | 'orderNumber' | 'productName'>,
  d: AcmeDetails,
  urls: AcmeUrls
): AcmeSubscriptionView {
  const setup = maskedAcmeSetup(d, urls)
  return {
    orderId: order.id,
    orderNumber: order.orderNumber,
    productName: order.productName,
    status: setup.status,
    category: setup.category,
    domains: setup.domains.map((x) => x.name),
    begin: setup.subscription.begin,
    nextRenewal: setup.subscription.next_renewal,
    end: setup.subscription.end,
    eabKid: setup.account.eab_kid,
    serverUrl: setup.account.server_url,
    accountStatus: setup.account.status,
    accounts: setup.account.accounts.map((a) => ({ url: a.url, status: a.status, createdAt: a.created_at })),
    rootCaUrl: setup.root_ca_url,
    commands: acmeCommandsView(setup.commands),
    setupUrl: setup.autoinstall?.login_url ?? null
  }
}
