-- CertDesk schema 7: the CSR the desktop app generated with an order's kept key. It stays with
-- the key until the order takes a CSR or the user discards both, so leaving the order page or
-- reloading the app does not lose it. A CSR is public; the key stays encrypted as before.
ALTER TABLE order_private_keys ADD COLUMN csr_pem TEXT;
