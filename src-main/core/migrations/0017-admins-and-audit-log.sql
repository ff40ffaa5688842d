-- CertDesk schema 17: admin accounts with roles, their sessions, failed sign-ins for the limits,
-- and the audit log of admin actions. No password, TOTP secret or session token is kept here:
-- a password as its scrypt hash, a session token as its SHA-256, TOTP secrets in the keychain.

-- `name` is kept lower-cased (names compare without case). An admin is never deleted, only
-- disabled, so every audit entry keeps naming one. `totp_last_step` is the RFC 6238 time step
-- of the last code accepted: a code of that step or an earlier one is refused (RFC 6238 §5.2).
CREATE TABLE admins (
  id              INTEGER PRIMARY KEY,
  name            TEXT NOT NULL UNIQUE,
  role            TEXT NOT NULL CHECK (role IN ('viewer', 'operator', 'owner')),
  password_hash   TEXT NOT NULL,
  totp_enabled    INTEGER NOT NULL DEFAULT 0 CHECK (totp_enabled IN (0, 1)),
  totp_last_step  INTEGER,
  disabled_at     TEXT,
  created_at      TEXT NOT NULL,
  last_sign_in_at TEXT
) STRICT;

-- A signed-in browser or desktop client. Rows live in the store, not in a node's memory, so any
-- node of a team server answers a session another node opened.
CREATE TABLE admin_sessions (
  id           INTEGER PRIMARY KEY,
  token_hash   TEXT NOT NULL UNIQUE,
  admin_id     INTEGER NOT NULL REFERENCES admins(id) ON DELETE CASCADE,
  source       TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  last_seen_at TEXT NOT NULL
) STRICT;
CREATE INDEX admin_sessions_admin ON admin_sessions (admin_id);

-- Failed sign-ins within the limits' window: by the SHA-256 of the name typed (so a password
-- typed into the name field is not kept), and by the client's address. Older rows are deleted
-- as new ones come.
CREATE TABLE admin_sign_in_failures (
  id        INTEGER PRIMARY KEY,
  name_key  TEXT NOT NULL,
  source    TEXT NOT NULL,
  failed_at TEXT NOT NULL
) STRICT;
CREATE INDEX admin_sign_in_failures_name ON admin_sign_in_failures (name_key, failed_at);
CREATE INDEX admin_sign_in_failures_source ON admin_sign_in_failures (source, failed_at);
CREATE INDEX admin_sign_in_failures_at ON admin_sign_in_failures (failed_at);

-- The audit log: one entry per admin action, written before the action runs, and its outcome
-- in `audit_outcomes` once it has ended (an entry without an outcome: the process stopped while
-- it ran). `targets` is a JSON object of the ids the action named, never any other value.
CREATE TABLE audit_log (
  id       INTEGER PRIMARY KEY,
  at       TEXT NOT NULL,
  actor    TEXT NOT NULL,
  admin_id INTEGER REFERENCES admins(id),
  role     TEXT CHECK (role IS NULL OR role IN ('viewer', 'operator', 'owner')),
  source   TEXT NOT NULL,
  action   TEXT NOT NULL,
  targets  TEXT NOT NULL
) STRICT;
CREATE INDEX audit_log_actor ON audit_log (actor, id);
CREATE INDEX audit_log_action ON audit_log (action, id);
CREATE INDEX audit_log_at ON audit_log (at);

CREATE TABLE audit_outcomes (
  audit_id    INTEGER PRIMARY KEY REFERENCES audit_log(id),
  outcome     TEXT NOT NULL CHECK (outcome IN ('ok', 'denied', 'refused', 'failed')),
  status      INTEGER NOT NULL,
  finished_at TEXT NOT NULL
) STRICT;

-- Append-only: the store itself refuses to change or remove an entry or an outcome, whoever
-- asks (the app, the CLI, a script with the store open).
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN
  SELECT RAISE(ABORT, 'the audit log is append-only: an entry cannot be changed');
END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN
  SELECT RAISE(ABORT, 'the audit log is append-only: an entry cannot be removed');
END;
CREATE TRIGGER audit_outcomes_no_update BEFORE UPDATE ON audit_outcomes BEGIN
  SELECT RAISE(ABORT, 'the audit log is append-only: an outcome cannot be changed');
END;
CREATE TRIGGER audit_outcomes_no_delete BEFORE DELETE ON audit_outcomes BEGIN
  SELECT RAISE(ABORT, 'the audit log is append-only: an outcome cannot be removed');
END;
-- INSERT OR REPLACE removes the row it replaces without firing DELETE triggers (SQLite runs
-- them for REPLACE only with recursive_triggers on, which a connection chooses for itself), so
-- an insert that names an existing row is refused before it gets that far.
CREATE TRIGGER audit_log_no_replace BEFORE INSERT ON audit_log
  WHEN EXISTS (SELECT 1 FROM audit_log WHERE id = new.id) BEGIN
  SELECT RAISE(ABORT, 'the audit log is append-only: an entry cannot be replaced');
END;
CREATE TRIGGER audit_outcomes_no_replace BEFORE INSERT ON audit_outcomes
  WHEN EXISTS (SELECT 1 FROM audit_outcomes WHERE audit_id = new.audit_id) BEGIN
  SELECT RAISE(ABORT, 'the audit log is append-only: an outcome cannot be replaced');
END;
