-- Where an order's certificate should be served, beyond each of its names on port 443: another
-- port, a mail server that starts TLS inside its protocol, or one server behind a name that
-- resolves to many (`address`, like curl's --resolve).
CREATE TABLE installation_endpoints (
  id         INTEGER PRIMARY KEY,
  order_id   INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
  host       TEXT NOT NULL,
  port       INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),
  address    TEXT,
  starttls   TEXT CHECK (starttls IN ('smtp', 'imap', 'pop3')),
  created_at TEXT NOT NULL,
  UNIQUE (order_id, host, port)
) STRICT;

-- The newest verdict per order and endpoint; each change of verdict is also an event.
CREATE TABLE installation_results (
  order_id           INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
  host               TEXT NOT NULL,
  port               INTEGER NOT NULL,
  verdict            TEXT NOT NULL,
  detail             TEXT NOT NULL,
  served_serial      TEXT,
  served_fingerprint TEXT,
  served_valid_till  TEXT,
  checked_at         TEXT NOT NULL,
  PRIMARY KEY (order_id, host, port)
) STRICT;

-- One row per checked order: the worst verdict (the badge) and when the next check is due.
CREATE TABLE installation_status (
  order_id      INTEGER PRIMARY KEY REFERENCES orders(id) ON DELETE CASCADE,
  verdict       TEXT NOT NULL,
  checked_at    TEXT NOT NULL,
  next_check_at TEXT NOT NULL
) STRICT;
CREATE INDEX installation_status_due ON installation_status(next_check_at);

-- Certificates bought elsewhere, tracked for expiry and offered for renewal here.
CREATE TABLE imported_certificates (
  id                   INTEGER PRIMARY KEY,
  reseller_id          INTEGER NOT NULL REFERENCES resellers(id),
  fingerprint          TEXT NOT NULL,
  common_name          TEXT,
  names                TEXT NOT NULL,
  domain               TEXT NOT NULL,
  issuer               TEXT NOT NULL,
  serial               TEXT NOT NULL,
  valid_from           TEXT NOT NULL,
  valid_till           TEXT NOT NULL,
  validation_level     TEXT NOT NULL CHECK (validation_level IN ('dv', 'ov', 'ev', 'unknown')),
  certificate_pem      TEXT NOT NULL,
  chain_pem            TEXT NOT NULL,
  source               TEXT NOT NULL,
  key_kept             INTEGER NOT NULL DEFAULT 0,
  replacement_order_id INTEGER REFERENCES orders(id),
  created_at           TEXT NOT NULL,
  UNIQUE (reseller_id, fingerprint)
) STRICT;
CREATE INDEX imported_certificates_expiry ON imported_certificates(valid_till);
CREATE INDEX imported_certificates_reseller ON imported_certificates(reseller_id, valid_till);

-- Keys of imported certificates, only when the admin imports them explicitly: wrapped like
-- every other kept key (the wrapping key stays in the OS keychain).
CREATE TABLE imported_keys (
  certificate_id INTEGER PRIMARY KEY REFERENCES imported_certificates(id) ON DELETE CASCADE,
  wrapped_key    BLOB NOT NULL,
  created_at     TEXT NOT NULL
) STRICT;

-- A newly stored certificate is checked an hour later (time to install it by hand), and a
-- deploy that succeeded makes its order due at once: both without the caller knowing.
CREATE TRIGGER certificates_installation_due AFTER INSERT ON certificates BEGIN
  INSERT INTO installation_status (order_id, verdict, checked_at, next_check_at)
  VALUES (NEW.order_id, 'unchecked', NEW.created_at, strftime('%Y-%m-%d %H:%M:%S', NEW.created_at, '+1 hour'))
  ON CONFLICT(order_id) DO UPDATE SET next_check_at = excluded.next_check_at;
END;
CREATE TRIGGER deploy_runs_installation_due AFTER UPDATE OF status ON deploy_runs
  WHEN NEW.status = 'succeeded' AND OLD.status != 'succeeded' BEGIN
  UPDATE installation_status SET next_check_at = NEW.updated_at WHERE order_id = NEW.order_id;
END;
-- Orders that already have a certificate join the schedule.
INSERT INTO installation_status (order_id, verdict, checked_at, next_check_at)
  SELECT order_id, 'unchecked', MAX(created_at), MAX(created_at) FROM certificates GROUP BY order_id;

-- The expiry report reads certificates by end date, whatever their renewal plan.
CREATE INDEX orders_cert_valid_till ON orders(cert_valid_till) WHERE cert_valid_till IS NOT NULL;
