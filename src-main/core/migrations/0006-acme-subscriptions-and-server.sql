-- CertDesk schema 6: ACME subscriptions (spec "ACME subscription details") and the state of
-- the embedded RFC 8555 server. EAB HMAC keys, set-up tokens and CA private keys live in the
-- OS keychain; this file holds only their identifiers and hashes.

CREATE TABLE acme_subscriptions (
  id               INTEGER PRIMARY KEY,
  order_id         INTEGER NOT NULL UNIQUE REFERENCES orders(id),
  reseller_id      INTEGER NOT NULL REFERENCES resellers(id),
  category         TEXT NOT NULL CHECK (category IN ('caas', 'ais')),
  status           TEXT NOT NULL CHECK (status IN ('active', 'cancelled', 'expired')),
  -- RFC 8555 §7.3.4: the key identifier of the External Account Binding; its HMAC key is in the keychain.
  eab_kid          TEXT NOT NULL UNIQUE,
  wildcard         INTEGER NOT NULL DEFAULT 0,
  -- SHA-256 of the token in the auto-install set-up link (ais only).
  setup_token_hash TEXT UNIQUE,
  begin_date       TEXT NOT NULL,
  end_date         TEXT,
  created_at       TEXT NOT NULL
) STRICT;

CREATE TABLE acme_subscription_domains (
  subscription_id INTEGER NOT NULL REFERENCES acme_subscriptions(id),
  public_id       TEXT NOT NULL UNIQUE,
  name            TEXT NOT NULL,
  position        INTEGER NOT NULL,
  PRIMARY KEY (subscription_id, name)
) STRICT;

-- ACME accounts bound to a subscription through its EAB credentials; one subscription may bind several.
CREATE TABLE acme_accounts (
  id              INTEGER PRIMARY KEY,
  subscription_id INTEGER NOT NULL REFERENCES acme_subscriptions(id),
  thumbprint      TEXT NOT NULL UNIQUE,
  jwk             TEXT NOT NULL,
  contact         TEXT NOT NULL DEFAULT '[]',
  status          TEXT NOT NULL CHECK (status IN ('valid', 'deactivated', 'revoked')),
  created_at      TEXT NOT NULL
) STRICT;
CREATE INDEX acme_accounts_subscription ON acme_accounts(subscription_id);

CREATE TABLE acme_orders (
  id          INTEGER PRIMARY KEY,
  public_id   TEXT NOT NULL UNIQUE,
  account_id  INTEGER NOT NULL REFERENCES acme_accounts(id),
  status      TEXT NOT NULL CHECK (status IN ('pending', 'ready', 'processing', 'valid', 'invalid')),
  identifiers TEXT NOT NULL,
  replaces    TEXT,
  error       TEXT,
  expires_at  TEXT NOT NULL,
  created_at  TEXT NOT NULL
) STRICT;
CREATE INDEX acme_orders_account ON acme_orders(account_id, id DESC);

CREATE TABLE acme_authorizations (
  id          INTEGER PRIMARY KEY,
  public_id   TEXT NOT NULL UNIQUE,
  order_id    INTEGER NOT NULL REFERENCES acme_orders(id),
  identifier  TEXT NOT NULL,
  wildcard    INTEGER NOT NULL DEFAULT 0,
  status      TEXT NOT NULL CHECK (status IN ('pending', 'valid', 'invalid', 'deactivated', 'expired', 'revoked')),
  expires_at  TEXT NOT NULL
) STRICT;
CREATE INDEX acme_authorizations_order ON acme_authorizations(order_id);

CREATE TABLE acme_challenges (
  id           INTEGER PRIMARY KEY,
  public_id    TEXT NOT NULL UNIQUE,
  authz_id     INTEGER NOT NULL REFERENCES acme_authorizations(id),
  type         TEXT NOT NULL CHECK (type IN ('http-01', 'dns-01')),
  token        TEXT NOT NULL,
  status       TEXT NOT NULL CHECK (status IN ('pending', 'processing', 'valid', 'invalid')),
  validated_at TEXT,
  error        TEXT
) STRICT;
CREATE INDEX acme_challenges_authz ON acme_challenges(authz_id);

CREATE TABLE acme_certificates (
  id                INTEGER PRIMARY KEY,
  public_id         TEXT NOT NULL UNIQUE,
  order_id          INTEGER NOT NULL UNIQUE REFERENCES acme_orders(id),
  account_id        INTEGER NOT NULL REFERENCES acme_accounts(id),
  serial_hex        TEXT NOT NULL UNIQUE,
  -- RFC 9773 §4.1 CertID: base64url(AKI keyIdentifier) "." base64url(serial), for renewalInfo.
  ari_id            TEXT NOT NULL UNIQUE,
  spki_sha256       TEXT NOT NULL,
  chain_pem         TEXT NOT NULL,
  not_before        TEXT NOT NULL,
  not_after         TEXT NOT NULL,
  replaced_by       INTEGER REFERENCES acme_certificates(id),
  revoked_at        TEXT,
  revocation_reason INTEGER
) STRICT;

-- The external ACME CA's order behind a CertDesk TLS order while it waits for validation
-- (src-main/core/acme-issuer.ts). Challenge values are public by design (they are published).
CREATE TABLE acme_issuer_orders (
  order_id      INTEGER PRIMARY KEY REFERENCES orders(id),
  directory_url TEXT NOT NULL,
  order_url     TEXT NOT NULL,
  challenges    TEXT NOT NULL,
  created_at    TEXT NOT NULL
) STRICT;
