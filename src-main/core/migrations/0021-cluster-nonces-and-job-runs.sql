-- CertDesk schema 21: what the nodes of a team server (several `certdesk serve` processes on
-- one PostgreSQL) share beyond the book itself.
--
-- acme_nonces_spent: ACME nonces (RFC 8555 §6.5) that have been used. A nonce carries its own
-- stamp and MAC (core/acme-server/nonces.ts), so any node can tell one it issued; this table
-- makes each one good for a single request across every node. A row is kept until the nonce
-- would have expired anyway, then pruned.
CREATE TABLE acme_nonces_spent (
  nonce      TEXT PRIMARY KEY,
  expires_at TEXT NOT NULL
) STRICT;
CREATE INDEX acme_nonces_spent_expiry ON acme_nonces_spent (expires_at);

-- job_runs: each run of a background job that must happen once across all nodes (a scheduler
-- pass), with the node that ran it. The newest row of a job says when the next one is due and
-- whether the last one ended (a row without finished_at whose node is gone was cut short).
-- Old rows are pruned as new ones come.
CREATE TABLE job_runs (
  id          INTEGER PRIMARY KEY,
  job         TEXT NOT NULL,
  node        TEXT NOT NULL,
  started_at  TEXT NOT NULL,
  finished_at TEXT,
  outcome     TEXT
) STRICT;
CREATE INDEX job_runs_job ON job_runs (job, id);
