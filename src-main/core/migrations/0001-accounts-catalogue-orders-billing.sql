-- CertDesk schema 1: catalogue, resellers, API keys, orders, invoices, credit ledger.
-- Money is integer cents; dates are UTC text (YYYY-MM-DD, timestamps YYYY-MM-DD HH:MM:SS).

CREATE TABLE settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE reseller_groups (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL DEFAULT ''
) STRICT;

CREATE TABLE products (
  id                   INTEGER PRIMARY KEY,
  name                 TEXT NOT NULL,
  brand                TEXT NOT NULL,
  type                 TEXT NOT NULL CHECK (type IN ('ssl', 'wildcard', 'multi-domain', 'code-signing')),
  validation_type      TEXT NOT NULL CHECK (validation_type IN ('dv', 'ov', 'ev')),
  domain_type          TEXT NOT NULL,
  max_years            INTEGER NOT NULL CHECK (max_years BETWEEN 1 AND 5),
  warranty             TEXT NOT NULL,
  san_enabled          INTEGER NOT NULL DEFAULT 0,
  wildcard_san_enabled INTEGER NOT NULL DEFAULT 0,
  included_sans        INTEGER NOT NULL DEFAULT 0,
  max_sans             INTEGER NOT NULL DEFAULT 0,
  description          TEXT NOT NULL DEFAULT '',
  fulfillment          TEXT NOT NULL DEFAULT 'certificate' CHECK (fulfillment IN ('certificate', 'acme_subscription')),
  acme_type            TEXT CHECK (acme_type IN ('caas', 'ais')),
  wildcard_only        INTEGER NOT NULL DEFAULT 0
) STRICT;

-- Prices per year count. group_id 0 holds the list price; a product is in a group exactly
-- when the group has prices for it.
CREATE TABLE product_prices (
  product_id               INTEGER NOT NULL REFERENCES products(id),
  group_id                 INTEGER NOT NULL,
  years                    INTEGER NOT NULL CHECK (years >= 1),
  price_cents              INTEGER NOT NULL CHECK (price_cents >= 0),
  san_price_cents          INTEGER NOT NULL DEFAULT 0 CHECK (san_price_cents >= 0),
  wildcard_san_price_cents INTEGER NOT NULL DEFAULT 0 CHECK (wildcard_san_price_cents >= 0),
  PRIMARY KEY (group_id, product_id, years)
) STRICT;

CREATE TABLE resellers (
  id                   INTEGER PRIMARY KEY,
  name                 TEXT NOT NULL,
  email                TEXT NOT NULL,
  company              TEXT NOT NULL DEFAULT '',
  group_id             INTEGER REFERENCES reseller_groups(id),
  discount_rate        REAL NOT NULL DEFAULT 0 CHECK (discount_rate >= 0 AND discount_rate <= 100),
  status               TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  api_access           INTEGER NOT NULL DEFAULT 1,
  credit_balance_cents INTEGER NOT NULL DEFAULT 0 CHECK (credit_balance_cents >= 0),
  created_at           TEXT NOT NULL
) STRICT;

-- Only the SHA-256 of a key is kept here; the key itself lives in the OS keychain.
CREATE TABLE api_keys (
  id           INTEGER PRIMARY KEY,
  reseller_id  INTEGER NOT NULL REFERENCES resellers(id),
  key_hash     TEXT NOT NULL UNIQUE,
  prefix       TEXT NOT NULL,
  label        TEXT NOT NULL DEFAULT '',
  created_at   TEXT NOT NULL,
  revoked_at   TEXT,
  last_used_at TEXT
) STRICT;
CREATE INDEX api_keys_reseller ON api_keys(reseller_id);

CREATE TABLE orders (
  id                 INTEGER PRIMARY KEY,
  order_number       TEXT NOT NULL UNIQUE,
  reseller_id        INTEGER NOT NULL REFERENCES resellers(id),
  product_id         INTEGER NOT NULL REFERENCES products(id),
  domain             TEXT NOT NULL DEFAULT '',
  period_months      INTEGER NOT NULL,
  san_count          INTEGER NOT NULL DEFAULT 0,
  san_wildcard_count INTEGER NOT NULL DEFAULT 0,
  contact_email      TEXT,
  base_price_cents   INTEGER NOT NULL,
  san_total_cents    INTEGER NOT NULL,
  discount_cents     INTEGER NOT NULL,
  total_cents        INTEGER NOT NULL CHECK (total_cents >= 0),
  status             TEXT NOT NULL CHECK (status IN ('pending', 'processing', 'validation_pending',
                       'pending_configuration', 'completed', 'cancelled', 'expired')),
  payment_status     TEXT NOT NULL CHECK (payment_status IN ('paid', 'unpaid', 'refunded')),
  auto_reissue       INTEGER NOT NULL,
  purchase_end_date  TEXT NOT NULL,
  reissue_count      INTEGER NOT NULL DEFAULT 0,
  cert_valid_from    TEXT,
  cert_valid_till    TEXT,
  next_reissue_at    TEXT,
  status_note        TEXT,
  created_at         TEXT NOT NULL,
  updated_at         TEXT NOT NULL
) STRICT;
CREATE INDEX orders_reseller ON orders(reseller_id, id DESC);
CREATE INDEX orders_reseller_status ON orders(reseller_id, status, id DESC);

CREATE TABLE invoices (
  id             INTEGER PRIMARY KEY,
  invoice_number TEXT NOT NULL UNIQUE,
  order_id       INTEGER NOT NULL UNIQUE REFERENCES orders(id),
  reseller_id    INTEGER NOT NULL REFERENCES resellers(id),
  total_cents    INTEGER NOT NULL,
  currency       TEXT NOT NULL DEFAULT 'USD',
  status         TEXT NOT NULL CHECK (status IN ('unpaid', 'sent', 'paid', 'cancelled')),
  due_date       TEXT NOT NULL,
  created_at     TEXT NOT NULL,
  paid_at        TEXT,
  sent_at        TEXT,
  cancelled_at   TEXT
) STRICT;
CREATE INDEX invoices_reseller ON invoices(reseller_id, id DESC);
CREATE INDEX invoices_reseller_status ON invoices(reseller_id, status, id DESC);

-- The ledger. Every change of resellers.credit_balance_cents is one row here, written in the
-- same transaction, so the balance always equals the sum of the amounts.
CREATE TABLE credit_transactions (
  id                  INTEGER PRIMARY KEY,
  reseller_id         INTEGER NOT NULL REFERENCES resellers(id),
  amount_cents        INTEGER NOT NULL CHECK (amount_cents <> 0),
  type                TEXT NOT NULL CHECK (type IN ('debit', 'credit')),
  description         TEXT NOT NULL,
  balance_after_cents INTEGER NOT NULL CHECK (balance_after_cents >= 0),
  order_id            INTEGER REFERENCES orders(id),
  created_at          TEXT NOT NULL,
  CHECK ((type = 'debit') = (amount_cents < 0))
) STRICT;
CREATE INDEX credit_transactions_reseller ON credit_transactions(reseller_id, id DESC);
CREATE INDEX credit_transactions_order ON credit_transactions(order_id);

-- Idempotency-Key: the first successful answer to a request, kept per reseller and key.
CREATE TABLE idempotency_keys (
  reseller_id INTEGER NOT NULL REFERENCES resellers(id),
  key         TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  status_code INTEGER NOT NULL,
  body        TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  PRIMARY KEY (reseller_id, key)
) STRICT;
