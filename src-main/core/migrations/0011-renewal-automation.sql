-- CertDesk schema 13: renewal without customer action. ACME Renewal Information (RFC 9773) as a
-- client, dns-persist-01 on the embedded ACME server (draft-ietf-acme-dns-persist, Baseline
-- Requirements §3.2.2.4.22), and the TXT records of the DNS zone delegated to CertDesk.

-- The renewal window of the certificate an order holds from the external ACME CA: the CA's
-- suggested window (RFC 9773 §4.2) or, from a CA without renewalInfo, the 14-day rule.
-- `renew_at` is the moment chosen at random inside the window (§4.2 asks clients to spread
-- renewals); `next_check_at` follows the CA's Retry-After.
CREATE TABLE ari_windows (
  order_id         INTEGER PRIMARY KEY REFERENCES orders(id),
  cert_id          TEXT NOT NULL,
  directory_url    TEXT NOT NULL,
  source           TEXT NOT NULL CHECK (source IN ('ari', 'default')),
  window_start     TEXT NOT NULL,
  window_end       TEXT NOT NULL,
  explanation_url  TEXT,
  renew_at         TEXT NOT NULL,
  next_check_at    TEXT,
  checked_at       TEXT NOT NULL,
  last_error       TEXT
) STRICT;
CREATE INDEX ari_windows_renew_at ON ari_windows(renew_at);
CREATE INDEX ari_windows_next_check ON ari_windows(next_check_at) WHERE next_check_at IS NOT NULL;

-- TXT records CertDesk's authoritative responder serves under the delegated zone: one label per
-- customer domain (`_acme-challenge.<domain> CNAME <label>.<zone>`), values are dns-01 digests
-- (public by design: RFC 8555 §8.4 publishes them).
CREATE TABLE delegated_dns_records (
  id          INTEGER PRIMARY KEY,
  label       TEXT NOT NULL,
  value       TEXT NOT NULL,
  order_id    INTEGER REFERENCES orders(id),
  created_at  TEXT NOT NULL,
  UNIQUE (label, value)
) STRICT;

-- An admin may move a certificate's renewal window (a mass revocation, RFC 9773 §4.2).
ALTER TABLE acme_certificates ADD COLUMN renewal_start TEXT;
ALTER TABLE acme_certificates ADD COLUMN renewal_end TEXT;

-- dns-persist-01 joins http-01 and dns-01. Its `token` column holds the issuer domain name the
-- challenge offered (the draft's `issuer-domain-names`; dns-persist-01 has no token).
CREATE TABLE acme_challenges_new (
  id           INTEGER PRIMARY KEY,
  public_id    TEXT NOT NULL UNIQUE,
  authz_id     INTEGER NOT NULL REFERENCES acme_authorizations(id),
  type         TEXT NOT NULL CHECK (type IN ('http-01', 'dns-01', 'dns-persist-01')),
  token        TEXT NOT NULL,
  status       TEXT NOT NULL CHECK (status IN ('pending', 'processing', 'valid', 'invalid')),
  validated_at TEXT,
  error        TEXT
) STRICT;
INSERT INTO acme_challenges_new SELECT * FROM acme_challenges;
DROP TABLE acme_challenges;
ALTER TABLE acme_challenges_new RENAME TO acme_challenges;
CREATE INDEX acme_challenges_authz ON acme_challenges(authz_id);
