/**
 * The event types of the admin's log, as the core writes them (src-main/core/events.ts,
 * ADMIN_LOG_TYPES: the reseller's events and the admin's own alert events; test/e2e/screens.spec.ts
 * checks the filter offers each), with the words the log shows.
 */
export const EVENT_TYPE_LABELS: Record<string, string> = {
  'order.created': 'Order placed',
  'order.paid': 'Order paid',
  'order.cancelled': 'Order cancelled',
  'validation.passed': 'Validation passed',
  'validation.failed': 'Validation failed',
  'certificate.issued': 'Certificate issued',
  'certificate.reissued': 'Certificate reissued',
  'certificate.expiring': 'Certificate expiring',
  'certificate.revoked': 'Certificate revoked',
  'deploy.succeeded': 'Deploy succeeded',
  'deploy.failed': 'Deploy failed',
  'subscription.created': 'ACME subscription created',
  'installation.passed': 'Served as issued',
  'installation.failed': 'Installation problem',
  'certificate.imported': 'Certificate imported',
  'alert.raised': 'Alert raised',
  'alert.cleared': 'Alert cleared'
}

/** Events that need the reseller's attention: shown marked, with a link to the order to fix it. */
export const isFailure = (type: string): boolean =>
  type === 'validation.failed' || type === 'deploy.failed' || type === 'installation.failed' || type === 'alert.raised'
