-- CertDesk schema 20: revoked certificates (RFC 5280 §5.3.1 reason codes) and the local CA's
-- CRLs (RFC 5280 §5).

-- When and why a certificate of an order was revoked; NULL while it is not.
ALTER TABLE certificates ADD COLUMN revoked_at TEXT;
ALTER TABLE certificates ADD COLUMN revocation_reason INTEGER CHECK (revocation_reason BETWEEN 0 AND 10);
CREATE INDEX certificates_revoked ON certificates(issuer, revoked_at) WHERE revoked_at IS NOT NULL;

-- The CRLs the local CA's intermediate signed, by cRLNumber (RFC 5280 §5.2.3: increasing); the
-- newest is the one served. `source` records the revocations it was made from (count and newest),
-- so a revocation since then is seen without parsing the CRL.
CREATE TABLE local_ca_crls (
  number      INTEGER PRIMARY KEY,
  this_update TEXT NOT NULL,
  next_update TEXT NOT NULL,
  source      TEXT NOT NULL,
  der         BLOB NOT NULL
) STRICT;
