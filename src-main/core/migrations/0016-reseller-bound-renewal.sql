-- CertDesk schema 16: what authorises an unattended renewal names the reseller it was given to,
-- and an order from an external ACME CA has one renewal schedule, its certificate's.

-- The label under the delegated zone of one name for one reseller: the customer's
-- `_acme-challenge.<domain> CNAME <label>.<zone>` authorises that reseller only (RFC 8555 §8.4
-- proves control of the name to whoever publishes under the target). Random, kept, so it
-- survives renewals and reorders. `legacy = 1`: the name-only digest label of schema 11-14
-- (computed by core/delegated-dns.ts), kept by the one reseller that had ordered the name
-- before labels were bound (docs/decisions.md, "Delegation labels and upstream accounts per
-- reseller"); `label` is then NULL.
CREATE TABLE delegation_labels (
  reseller_id INTEGER NOT NULL REFERENCES resellers(id),
  domain      TEXT NOT NULL,
  label       TEXT UNIQUE,
  legacy      INTEGER NOT NULL DEFAULT 0 CHECK (legacy IN (0, 1)),
  created_at  TEXT NOT NULL,
  PRIMARY KEY (reseller_id, domain),
  CHECK ((legacy = 1 AND label IS NULL) OR (legacy = 0 AND label IS NOT NULL))
) STRICT;
CREATE UNIQUE INDEX delegation_labels_legacy ON delegation_labels(domain) WHERE legacy = 1;

-- A name that exactly one reseller had ordered through the external CA keeps what its customer
-- may already have set up for it: the name-only label, and dns-persist-01 records naming the one
-- ACME account CertDesk had. A name two resellers had ordered there keeps neither: nothing tells
-- for whom its customer set them up. (Only orders the external CA validated were ever shown a
-- CNAME target or an account.)
INSERT INTO delegation_labels (reseller_id, domain, label, legacy, created_at)
SELECT MIN(n.reseller_id), n.domain, NULL, 1, MIN(n.created_at)
  FROM (SELECT DISTINCT o.reseller_id AS reseller_id, o.created_at AS created_at,
               lower(CASE WHEN c.name LIKE '*.%' THEN substr(c.name, 3) ELSE c.name END) AS domain
          FROM dcv_checks c JOIN orders o ON o.id = c.order_id
         WHERE c.order_id IN (SELECT order_id FROM ari_windows UNION SELECT order_id FROM acme_issuer_orders
                              UNION SELECT order_id FROM certificates WHERE issuer LIKE 'acme:%')) n
 GROUP BY n.domain
HAVING COUNT(DISTINCT n.reseller_id) = 1;

-- Each reseller's own ACME account at the external CA (RFC 8555 §7.3), so a dns-persist-01
-- record's accounturi names one reseller and the CA itself refuses another's order with it.
-- The account key is in the OS keychain (`issuer.acme/account-key/reseller-<id>`), never here.
CREATE TABLE acme_issuer_accounts (
  reseller_id   INTEGER PRIMARY KEY REFERENCES resellers(id),
  directory_url TEXT NOT NULL,
  account_url   TEXT NOT NULL,
  created_at    TEXT NOT NULL
) STRICT;

-- Which account a waiting CA order belongs to; NULL is CertDesk's one account of before, which
-- orders begun before this schema were created with. (Tables here are rebuilt rather than
-- altered, so the migration reads the same whatever columns a table already has.)
CREATE TABLE acme_issuer_orders_new (
  order_id            INTEGER PRIMARY KEY REFERENCES orders(id),
  directory_url       TEXT NOT NULL,
  order_url           TEXT NOT NULL,
  challenges          TEXT NOT NULL,
  created_at          TEXT NOT NULL,
  account_reseller_id INTEGER REFERENCES resellers(id)
) STRICT;
INSERT INTO acme_issuer_orders_new (order_id, directory_url, order_url, challenges, created_at)
  SELECT order_id, directory_url, order_url, challenges, created_at FROM acme_issuer_orders;
DROP TABLE acme_issuer_orders;
ALTER TABLE acme_issuer_orders_new RENAME TO acme_issuer_orders;

-- One schedule per order: an order whose certificate came from the external CA is renewed at
-- the moment chosen in its renewal window (RFC 9773), and `next_reissue_at` shows that day,
-- not the local CA's 200-day schedule. (Written for both engines: plain SQL only.)
UPDATE orders SET next_reissue_at = (SELECT substr(w.renew_at, 1, 10) FROM ari_windows w WHERE w.order_id = orders.id)
 WHERE next_reissue_at IS NOT NULL AND id IN (SELECT order_id FROM ari_windows);

-- The look, some days before a renewal, at whether it can run without the customer (its CNAME
-- or dns-persist-01 record in place): `readiness_checked_at`, once per certificate.
CREATE TABLE ari_windows_new (
  order_id             INTEGER PRIMARY KEY REFERENCES orders(id),
  cert_id              TEXT NOT NULL,
  directory_url        TEXT NOT NULL,
  source               TEXT NOT NULL CHECK (source IN ('ari', 'default')),
  window_start         TEXT NOT NULL,
  window_end           TEXT NOT NULL,
  explanation_url      TEXT,
  renew_at             TEXT NOT NULL,
  next_check_at        TEXT,
  checked_at           TEXT NOT NULL,
  last_error           TEXT,
  readiness_checked_at TEXT
) STRICT;
INSERT INTO ari_windows_new (order_id, cert_id, directory_url, source, window_start, window_end, explanation_url,
                             renew_at, next_check_at, checked_at, last_error)
  SELECT order_id, cert_id, directory_url, source, window_start, window_end, explanation_url,
         renew_at, next_check_at, checked_at, last_error FROM ari_windows;
DROP TABLE ari_windows;
ALTER TABLE ari_windows_new RENAME TO ari_windows;
CREATE INDEX ari_windows_renew_at ON ari_windows(renew_at);
CREATE INDEX ari_windows_next_check ON ari_windows(next_check_at) WHERE next_check_at IS NOT NULL;
CREATE INDEX ari_windows_readiness ON ari_windows(renew_at) WHERE readiness_checked_at IS NULL;

-- The alert raised by that look.
CREATE TABLE alert_rules_new (
  rule            TEXT PRIMARY KEY CHECK (rule IN ('expiring', 'renewal_failed', 'validation_waiting',
                                                   'deploy_failed', 'installation_problem',
                                                   'renewal_needs_customer')),
  enabled         INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  threshold_hours INTEGER CHECK (threshold_hours IS NULL OR threshold_hours BETWEEN 1 AND 8760),
  updated_at      TEXT
) STRICT;
INSERT INTO alert_rules_new SELECT rule, enabled, threshold_hours, updated_at FROM alert_rules;
INSERT INTO alert_rules_new (rule, threshold_hours) VALUES ('renewal_needs_customer', NULL);
DROP TABLE alert_rules;
ALTER TABLE alert_rules_new RENAME TO alert_rules;
