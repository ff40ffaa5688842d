-- CertDesk schema 14: alerts. A rule notices a certificate about to run out with no renewal
-- planned, a renewal or deploy that failed, a validation left waiting, or a server that does not
-- serve what was issued; each alert is raised once per (rule, order, cause) and delivered once to
-- each channel (email over SMTP, Slack, Teams, a signed JSON webhook). Credentials (the SMTP
-- password, Slack and Teams URLs, the webhook's signing secret) live in the OS keychain, never here.

-- One row per rule; `threshold_hours` is the validation wait before an alert (48 h by default).
CREATE TABLE alert_rules (
  rule            TEXT PRIMARY KEY CHECK (rule IN ('expiring', 'renewal_failed', 'validation_waiting',
                                                   'deploy_failed', 'installation_problem')),
  enabled         INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  threshold_hours INTEGER CHECK (threshold_hours IS NULL OR threshold_hours BETWEEN 1 AND 8760),
  updated_at      TEXT
) STRICT;
INSERT INTO alert_rules (rule, threshold_hours) VALUES
  ('expiring', NULL), ('renewal_failed', NULL), ('validation_waiting', 48),
  ('deploy_failed', NULL), ('installation_problem', NULL);

-- Where alerts go. `config` is JSON without any secret (host, port, sender, recipients; the
-- generic webhook's URL; only the host of a Slack or Teams URL, whose path is its credential).
CREATE TABLE alert_channels (
  id          INTEGER PRIMARY KEY,
  kind        TEXT NOT NULL CHECK (kind IN ('smtp', 'slack', 'teams', 'webhook')),
  name        TEXT NOT NULL,
  config      TEXT NOT NULL,
  enabled     INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  digest      INTEGER NOT NULL DEFAULT 0 CHECK (digest IN (0, 1)),
  created_at  TEXT NOT NULL
) STRICT;

CREATE TABLE alerts (
  id          INTEGER PRIMARY KEY,
  rule        TEXT NOT NULL,
  order_id    INTEGER NOT NULL REFERENCES orders(id),
  cause       TEXT NOT NULL,
  subject     TEXT NOT NULL,
  message     TEXT NOT NULL,
  raised_at   TEXT NOT NULL,
  cleared_at  TEXT,
  UNIQUE (rule, order_id, cause)
) STRICT;
CREATE INDEX alerts_open ON alerts(order_id, rule) WHERE cleared_at IS NULL;
CREATE INDEX alerts_raised ON alerts(raised_at);

-- One message to one channel: an alert, the weekly digest (`digest_week`, ISO 8601 week) or a test.
CREATE TABLE alert_deliveries (
  id              INTEGER PRIMARY KEY,
  channel_id      INTEGER NOT NULL REFERENCES alert_channels(id) ON DELETE CASCADE,
  kind            TEXT NOT NULL CHECK (kind IN ('alert', 'digest', 'test')),
  alert_id        INTEGER REFERENCES alerts(id),
  digest_week     TEXT,
  subject         TEXT NOT NULL,
  body            TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT,
  last_error      TEXT,
  created_at      TEXT NOT NULL,
  sent_at         TEXT,
  UNIQUE (alert_id, channel_id),
  UNIQUE (digest_week, channel_id)
) STRICT;
CREATE INDEX alert_deliveries_due ON alert_deliveries(next_attempt_at) WHERE status = 'pending';

-- Since when each order has waited on its validation, as the scheduler first saw it.
CREATE TABLE alert_waits (
  order_id INTEGER PRIMARY KEY REFERENCES orders(id),
  since    TEXT NOT NULL
) STRICT;

-- Where the alert checks stand: the last event read, the last day the expiry check ran. The
-- cursor starts at the newest event, so an existing store is not alerted about its past.
CREATE TABLE alert_state (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;
INSERT INTO alert_state (key, value) SELECT 'event_cursor', CAST(IFNULL(MAX(id), 0) AS TEXT) FROM events;
