-- CertDesk schema 7: a private key generated in the desktop app for a reissue, held (encrypted
-- exactly like order_private_keys, with the same wrapping key and order-bound associated data)
-- until the certificate for it is stored. It then replaces the order's kept key in the same
-- transaction as the certificate, so the certificate's deploys find the key that belongs to it.
CREATE TABLE order_staged_keys (
  order_id    INTEGER PRIMARY KEY REFERENCES orders(id),
  reseller_id INTEGER NOT NULL REFERENCES resellers(id),
  -- SHA-256 of the public key (SubjectPublicKeyInfo DER): which certificate the key is for.
  spki_sha256 TEXT NOT NULL,
  iv          BLOB NOT NULL,
  ciphertext  BLOB NOT NULL,
  tag         BLOB NOT NULL,
  created_at  TEXT NOT NULL
) STRICT;
