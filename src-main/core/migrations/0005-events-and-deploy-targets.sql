-- CertDesk schema 5: the event log, deploy targets per order, and every deploy run, attempt and
-- answer (issue 6). Secrets (webhook HMAC secrets, PFX passwords) are in the OS keychain, never here.

-- What happened to orders and certificates, newest last. Feeds GET /events, the webhooks and
-- the desktop notifications. `data` is JSON and never carries a secret or a private key.
CREATE TABLE events (
  id          INTEGER PRIMARY KEY,
  reseller_id INTEGER REFERENCES resellers(id),
  order_id    INTEGER REFERENCES orders(id),
  type        TEXT NOT NULL,
  message     TEXT NOT NULL,
  data        TEXT NOT NULL DEFAULT '{}',
  created_at  TEXT NOT NULL
) STRICT;
CREATE INDEX events_reseller ON events(reseller_id, id DESC);
CREATE INDEX events_reseller_type ON events(reseller_id, type, id DESC);
CREATE INDEX events_order ON events(order_id, type);

-- Where an order's certificate goes after every issue and reissue. `config` is JSON without
-- secrets; a removed target keeps its history (removed_at set, no longer run).
CREATE TABLE deploy_targets (
  id         INTEGER PRIMARY KEY,
  order_id   INTEGER NOT NULL REFERENCES orders(id),
  kind       TEXT NOT NULL CHECK (kind IN ('folder', 'command', 'webhook')),
  config     TEXT NOT NULL,
  created_at TEXT NOT NULL,
  removed_at TEXT
) STRICT;
CREATE INDEX deploy_targets_order ON deploy_targets(order_id);

-- One run per target and certificate. `pending` waits for next_attempt_at; `running` is
-- claimed by one process until claimed_until (a crashed run is picked up again after it);
-- `superseded` when a newer certificate of the order replaced it before it succeeded.
CREATE TABLE deploy_runs (
  id              INTEGER PRIMARY KEY,
  target_id       INTEGER NOT NULL REFERENCES deploy_targets(id),
  order_id        INTEGER NOT NULL REFERENCES orders(id),
  serial          TEXT NOT NULL,
  -- What this run deploys (public material; the private key comes from where CertDesk keeps
  -- it, at run time), so a retry writes the same certificate the first attempt tried.
  certificate_pem TEXT NOT NULL,
  chain_pem       TEXT NOT NULL,
  valid_from      TEXT NOT NULL,
  valid_till      TEXT NOT NULL,
  trigger         TEXT NOT NULL CHECK (trigger IN ('issued', 'reissued', 'auto_reissue', 'manual')),
  status          TEXT NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'superseded')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT,
  claimed_until   TEXT,
  last_error      TEXT,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL
) STRICT;
CREATE INDEX deploy_runs_due ON deploy_runs(status, next_attempt_at);
CREATE INDEX deploy_runs_order ON deploy_runs(order_id, id DESC);

-- Every attempt and what answered it: files written, the command's exit code and output, the
-- webhook request body and the receiver's status and body (truncated to 64 KiB).
CREATE TABLE deploy_attempts (
  id            INTEGER PRIMARY KEY,
  run_id        INTEGER NOT NULL REFERENCES deploy_runs(id),
  attempt       INTEGER NOT NULL,
  ok            INTEGER NOT NULL,
  summary       TEXT NOT NULL,
  request       TEXT,
  response_code INTEGER,
  output        TEXT,
  started_at    TEXT NOT NULL,
  finished_at   TEXT NOT NULL
) STRICT;
CREATE INDEX deploy_attempts_run ON deploy_attempts(run_id, attempt);
