/**
 * The names of the settings domain validation and approval mail read. A leaf module: settings.ts
 * (the rules for what a person may type) and dcv.ts (the checks) both need the names when they
 * load, so neither may take them from the other.
 */

/**
 * Lab use only: when `true`, domain validation (http/https DCV and ACME http-01) may connect to
 * loopback, private and other special-purpose addresses. Off unless set, as public CAs refuse
 * such targets (validation-target.ts).
 */
export const ALLOW_PRIVATE_ADDRESSES = 'dcv.allow_private_addresses'

/** Settings that say where checks reach the domain; all optional. */
export const DCV_SETTINGS = {
  /** `host:port` of the DNS server to ask; the system resolver when unset. */
  resolver: 'dcv.dns_resolver',
  /** Port of the `http` check (BR: 80). */
  httpPort: 'dcv.http_port',
  /** Port of the `https` check (BR: 443). */
  httpsPort: 'dcv.https_port',
  /** `true` lets checks reach loopback and private addresses (a lab); refused otherwise. */
  allowPrivateAddresses: ALLOW_PRIVATE_ADDRESSES,
  /** `smtp://host:port` for approval mail; the outbox when unset. */
  smtpUrl: 'smtp.url',
  /** Sender of approval mail. */
  smtpFrom: 'smtp.from'
} as const
