/**
 * The alert rules: what each one watches and the default it starts with. Thresholds that depend
 * on a certificate scale with its lifetime: a certificate is "expiring" once a third of its
 * validity is left (66 days of a 200-day certificate, 33 of a 100-day one, 15-16 of a 47-day one,
 * Baseline Requirements §6.3.2 as amended by ballot SC-081), the point at which Let's Encrypt
 * tells its subscribers to renew (90-day certificates every 60 days).
 */
import { ALERT_RULE_NAMES } from '../../../src-shared/alert-records'

export const ALERT_RULES = ALERT_RULE_NAMES
export type AlertRule = (typeof ALERT_RULES)[number]

export const RULE_LABELS: Record<AlertRule, string> = {
  expiring: 'Certificate expiring with no renewal planned (one third of its lifetime left)',
  renewal_failed: 'Renewal or issuance failed',
  validation_waiting: 'Validation waiting longer than the set time',
  deploy_failed: 'Deploy failed after all its attempts',
  installation_problem: 'Installation check found a problem (wrong certificate, incomplete chain, unreachable)',
  renewal_needs_customer:
    'Renewal due within a week cannot run without the customer (no delegation CNAME or dns-persist-01 record in place)'
}

/** The part of a certificate's lifetime left when the expiring rule fires. */
export const EXPIRING_FRACTION = 1 / 3
/** The longest lifetime the Baseline Requirements have allowed (398 days), so the expiring check's range is bounded. */
export const LONGEST_LIFETIME_DAYS = 398
/** Default wait before a validation alert: two days, long enough for a customer's DNS change. */
export const DEFAULT_VALIDATION_WAIT_HOURS = 48

export interface RuleView {
  rule: AlertRule
  label: string
  enabled: boolean
  /** validation_waiting only: hours before the alert. */
  thresholdHours: number | null
  updatedAt: string | null
}
