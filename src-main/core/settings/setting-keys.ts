/**
 * The names of the settings domain checks, approval mail and installation checks read, in a
 * module of their own that imports nothing, so the settings rules (settings.ts) and the checks
 * (dcv.ts, validation-target.ts, installations/) can both name them without importing each other.
 */
/** Settings that say where checks reach the domain; all optional. */
export const DCV_SETTINGS = {
  /** `host:port` of the DNS server to ask; the system resolver when unset. */
  resolver: 'dcv.dns_resolver',
  /** Port of the `http` check (BR: 80). */
  httpPort: 'dcv.http_port',
  /** Port of the `https` check (BR: 443). */
  httpsPort: 'dcv.https_port',
  /** `true` lets checks reach loopback and private addresses (a lab); refused otherwise. */
  allowPrivateAddresses: 'dcv.allow_private_addresses',
  /** `smtp://host:port` for approval mail; the outbox when unset. */
  smtpUrl: 'smtp.url',
  /** Sender of approval mail. */
  smtpFrom: 'smtp.from'
} as const

/** Renewal without customer action: delegated DNS validation (delegated-dns.ts; the responder starts when zone and listen are set) and dns-persist-01. */
export const DELEGATED_DNS_SETTINGS = {
  /** The zone delegated (NS) to CertDesk, such as `acme.reseller.example`. */
  zone: 'dns.delegated_zone',
  /** `address:port` the authoritative responder listens on (UDP and TCP), such as `0.0.0.0:53`. */
  listen: 'dns.listen',
  /** The issuer domain name the embedded ACME server's dns-persist-01 records name; its directory's host when unset. */
  persistIssuer: 'acme_server.issuer_domain'
} as const

/** Alerts (alerts/): webhook channels reach public addresses only unless this is on. */
export const ALERT_SETTINGS = {
  /** `true` lets alert webhooks reach loopback and private addresses (a lab, a LAN receiver). */
  allowPrivateAddresses: 'alerts.allow_private_addresses'
} as const

/** Installation checks (installations/): how long one probe may take, how many run at once, how often. */
export const INSTALLATION_SETTINGS = {
  /** Hours between scheduled checks of an order; 0 turns the schedule off. */
  intervalHours: 'installations.check_interval_hours',
  /** Probes running at once. */
  concurrency: 'installations.concurrency',
  /** Seconds one probe may take, connect to the end of the handshake. */
  timeoutSeconds: 'installations.timeout_seconds'
} as const

/**
 * Defaults and bounds of the installation settings. A probe needs seconds, not minutes: a server
 * that takes a minute to hand over its certificate is unreachable to its users too. 64 probes
 * at once is a server farm checked in parallel without one desktop opening hundreds of sockets.
 * A month between checks still sees every certificate of the shortest lifetime (47 days from
 * 2029-03-15, ballot SC-081) served at least once.
 */
export const INSTALLATION_LIMITS = {
  intervalHours: { fallback: 24, min: 1, max: 720, offAtZero: true },
  concurrency: { fallback: 8, min: 1, max: 64, offAtZero: false },
  timeoutSeconds: { fallback: 5, min: 1, max: 60, offAtZero: false }
} as const

/** The seller block of every invoice: the admin's business, as it bills its resellers. */
export const INVOICE_SETTINGS = {
  /** The business name at the head of the invoice. */
  sellerName: 'invoice.seller_name',
  /** Its postal address, one line per line of the address. */
  sellerAddress: 'invoice.seller_address'
} as const

/** The local CA (local-ca-crl.ts): where its certificates say their CRL is. */
export const LOCAL_CA_SETTINGS = {
  /** An http:// address the CRL is published at; the listener's own `/ca/local-ca.crl` when unset. */
  crlUrl: 'local_ca.crl_url'
} as const
