-- PostgreSQL part of schema 3 (the common part is translated from ../0003-tallies-and-list-indexes.sql).
-- SQLite's triggers here are row triggers with their statements inline; PostgreSQL runs a
-- function per trigger (PostgreSQL manual, 43.10 "Trigger Functions"). Each keeps the same name
-- and fires on the same events, so the tallies stay exact for every writer on either engine.

CREATE FUNCTION order_tallies_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE order_tallies SET n = n - 1, total_cents = total_cents - OLD.total_cents
      WHERE reseller_id = OLD.reseller_id AND status = OLD.status AND payment_status = OLD.payment_status
        AND product_id = OLD.product_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO order_tallies VALUES (NEW.reseller_id, NEW.status, NEW.payment_status, NEW.product_id, 1, NEW.total_cents)
      ON CONFLICT (reseller_id, status, payment_status, product_id)
      DO UPDATE SET n = order_tallies.n + 1, total_cents = order_tallies.total_cents + excluded.total_cents;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER order_tallies_insert AFTER INSERT ON orders FOR EACH ROW EXECUTE FUNCTION order_tallies_keep();
CREATE TRIGGER order_tallies_delete AFTER DELETE ON orders FOR EACH ROW EXECUTE FUNCTION order_tallies_keep();
CREATE TRIGGER order_tallies_update AFTER UPDATE OF reseller_id, status, payment_status, product_id, total_cents ON orders
  FOR EACH ROW EXECUTE FUNCTION order_tallies_keep();

CREATE FUNCTION invoice_tallies_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE invoice_tallies SET n = n - 1 WHERE reseller_id = OLD.reseller_id AND status = OLD.status;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO invoice_tallies VALUES (NEW.reseller_id, NEW.status, 1)
      ON CONFLICT (reseller_id, status) DO UPDATE SET n = invoice_tallies.n + 1;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER invoice_tallies_insert AFTER INSERT ON invoices FOR EACH ROW EXECUTE FUNCTION invoice_tallies_keep();
CREATE TRIGGER invoice_tallies_delete AFTER DELETE ON invoices FOR EACH ROW EXECUTE FUNCTION invoice_tallies_keep();
CREATE TRIGGER invoice_tallies_update AFTER UPDATE OF reseller_id, status ON invoices
  FOR EACH ROW EXECUTE FUNCTION invoice_tallies_keep();

CREATE FUNCTION ledger_tallies_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    UPDATE ledger_tallies SET n = n - 1 WHERE reseller_id = OLD.reseller_id;
  ELSE
    INSERT INTO ledger_tallies VALUES (NEW.reseller_id, 1) ON CONFLICT (reseller_id) DO UPDATE SET n = ledger_tallies.n + 1;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER ledger_tallies_insert AFTER INSERT ON credit_transactions FOR EACH ROW EXECUTE FUNCTION ledger_tallies_keep();
CREATE TRIGGER ledger_tallies_delete AFTER DELETE ON credit_transactions FOR EACH ROW EXECUTE FUNCTION ledger_tallies_keep();

-- SQLite's FTS5 trigram table orders_domain ↔ a pg_trgm GIN index, which PostgreSQL keeps by
-- itself (no triggers). pg_trgm is a trusted extension (PostgreSQL 13+): the database's owner
-- may create it. Schema 13 replaces both with an index that carries the owner too.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX orders_domain ON orders USING gin (domain gin_trgm_ops);

CREATE FUNCTION catalogue_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE settings SET value = (CAST(value AS bigint) + 1)::text WHERE key = 'catalogue_version';
  RETURN NULL;
END $$;
CREATE TRIGGER catalogue_version_products_insert AFTER INSERT ON products FOR EACH ROW EXECUTE FUNCTION catalogue_version_bump();
CREATE TRIGGER catalogue_version_products_update AFTER UPDATE ON products FOR EACH ROW EXECUTE FUNCTION catalogue_version_bump();
CREATE TRIGGER catalogue_version_products_delete AFTER DELETE ON products FOR EACH ROW EXECUTE FUNCTION catalogue_version_bump();
CREATE TRIGGER catalogue_version_prices_insert AFTER INSERT ON product_prices FOR EACH ROW EXECUTE FUNCTION catalogue_version_bump();
CREATE TRIGGER catalogue_version_prices_update AFTER UPDATE ON product_prices FOR EACH ROW EXECUTE FUNCTION catalogue_version_bump();
CREATE TRIGGER catalogue_version_prices_delete AFTER DELETE ON product_prices FOR EACH ROW EXECUTE FUNCTION catalogue_version_bump();
