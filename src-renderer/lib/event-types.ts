/**
 * The event types of the log, as the core writes them (src-main/core/events.ts, EVENT_TYPES;
 * test/e2e/screens.spec.ts checks the filter offers each), with the words the log shows.
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
  'certificate.imported': 'Certificate imported'
}

/** Events that need the reseller's attention: shown marked, with a link to the order to fix it. */
export const isFailure = (type: string): boolean =>
  type === 'validation.failed' || type === 'deploy.failed' || type === 'installation.failed'
