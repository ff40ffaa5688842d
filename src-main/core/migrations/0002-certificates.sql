-- CertDesk schema 2: the local CA, CSRs, domain control validation, issued certificates and
-- the email outbox.

-- The local CA. Private keys only as AES-256-GCM ciphertext; the wrapping key is in the OS keychain.
CREATE TABLE ca_keys (
  role            TEXT PRIMARY KEY CHECK (role IN ('root', 'intermediate')),
  certificate_pem TEXT NOT NULL,
  key_iv          BLOB NOT NULL,
  key_ciphertext  BLOB NOT NULL,
  created_at      TEXT NOT NULL
) STRICT;

-- The order's current CSR and validation choice (replaced by a reissue with a new CSR).
CREATE TABLE certificate_requests (
  order_id       INTEGER PRIMARY KEY REFERENCES orders(id),
  csr_pem        TEXT NOT NULL,
  csr_md5        TEXT NOT NULL,
  csr_sha256     TEXT NOT NULL,
  names          TEXT NOT NULL, -- JSON array, primary name first
  subject        TEXT NOT NULL, -- JSON object of the subject attributes to carry
  dcv_method     TEXT NOT NULL CHECK (dcv_method IN ('email', 'http', 'https', 'dns', 'none')),
  approver_email TEXT,
  unique_value   TEXT NOT NULL,
  submitted_at   TEXT NOT NULL,
  -- Why a certificate is due once validation passes: initial, reissue or auto_reissue.
  pending_issue  TEXT CHECK (pending_issue IN ('initial', 'reissue', 'auto_reissue'))
) STRICT;

-- One row per name and order: every SAN has its own instruction and status
-- (BR §3.2.2.4: each FQDN is validated on its own).
CREATE TABLE dcv_checks (
  id              INTEGER PRIMARY KEY,
  order_id        INTEGER NOT NULL REFERENCES orders(id),
  name            TEXT NOT NULL,
  method          TEXT NOT NULL CHECK (method IN ('email', 'http', 'https', 'dns')),
  approver_email  TEXT,
  status          TEXT NOT NULL CHECK (status IN ('pending', 'valid', 'failed')),
  detail          TEXT,
  checked_at      TEXT,
  validated_at    TEXT,
  email_code_hash TEXT, -- SHA-256 of the approval code; the code itself is only in the message
  email_sent_at   TEXT,
  UNIQUE (order_id, name)
) STRICT;

CREATE TABLE certificates (
  id              INTEGER PRIMARY KEY,
  order_id        INTEGER NOT NULL REFERENCES orders(id),
  serial          TEXT NOT NULL,
  issuer          TEXT NOT NULL,
  certificate_pem TEXT NOT NULL,
  chain_pem       TEXT NOT NULL,
  names           TEXT NOT NULL,
  valid_from      TEXT NOT NULL,
  valid_till      TEXT NOT NULL,
  reason          TEXT NOT NULL CHECK (reason IN ('initial', 'reissue', 'auto_reissue')),
  created_at      TEXT NOT NULL,
  UNIQUE (issuer, serial)
) STRICT;
CREATE INDEX certificates_order ON certificates(order_id, id DESC);

-- Validation email when no SMTP server is configured, or a copy of what SMTP delivered.
CREATE TABLE email_outbox (
  id         INTEGER PRIMARY KEY,
  order_id   INTEGER REFERENCES orders(id),
  to_address TEXT NOT NULL,
  subject    TEXT NOT NULL,
  body       TEXT NOT NULL,
  delivery   TEXT NOT NULL CHECK (delivery IN ('outbox', 'smtp')),
  created_at TEXT NOT NULL
) STRICT;
