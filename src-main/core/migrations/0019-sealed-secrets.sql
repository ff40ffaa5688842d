-- CertDesk schema 19: secrets of a server's records, sealed. Where CertDesk runs with a server
-- key source (`--secrets file:…` or `systemd`) instead of a desktop keychain, a secret kept for
-- one record (a webhook's signing secret, an alert channel's password, the copy of an API key)
-- is stored here encrypted with AES-256-GCM under `server:sealing-key`, which lives in the key
-- source, never here; the entry's name is bound into the tag, so a row copied under another
-- name does not open. With the desktop keychain this table stays empty.
CREATE TABLE sealed_secrets (
  name   TEXT PRIMARY KEY,
  -- The first 8 bytes of HMAC-SHA256(key, "certdesk key id"): names the key, reveals nothing of it.
  key_id TEXT NOT NULL,
  nonce  BLOB NOT NULL CHECK (length(nonce) = 12),
  -- ciphertext, then the 16-byte GCM tag
  sealed BLOB NOT NULL CHECK (length(sealed) >= 16)
) STRICT;
