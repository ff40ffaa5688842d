-- CertDesk schema 4 (desktop app): private keys generated in the UI, kept per order and
-- encrypted with AES-256-GCM under a key that lives only in the OS keychain.
CREATE TABLE order_private_keys (
  order_id    INTEGER PRIMARY KEY REFERENCES orders(id),
  reseller_id INTEGER NOT NULL REFERENCES resellers(id),
  iv          BLOB NOT NULL,
  ciphertext  BLOB NOT NULL,
  tag         BLOB NOT NULL,
  created_at  TEXT NOT NULL
) STRICT;

-- The dashboard's "waiting" and "expiring" lists and the desktop notifications.
CREATE INDEX orders_status_updated ON orders(status, updated_at);
