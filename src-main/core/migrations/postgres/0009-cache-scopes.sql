-- PostgreSQL part of schema 9 (the common part is translated from ../0009-cache-scopes.sql):
-- the triggers that move the cache scopes, the day tallies and the order versions, with the
-- names and events of SQLite's, as plpgsql functions.

CREATE FUNCTION cache_gen_bump(p_scope text) RETURNS void LANGUAGE sql AS $$
  INSERT INTO cache_generations VALUES (p_scope, 1) ON CONFLICT (scope) DO UPDATE SET gen = cache_generations.gen + 1
$$;

-- Rows that belong to a reseller through reseller_id (orders, invoices, ledger, API keys).
CREATE FUNCTION cache_gen_reseller_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM cache_gen_bump('reseller:' || OLD.reseller_id);
    RETURN NULL;
  END IF;
  PERFORM cache_gen_bump('reseller:' || NEW.reseller_id);
  IF TG_OP = 'UPDATE' AND OLD.reseller_id IS DISTINCT FROM NEW.reseller_id THEN
    PERFORM cache_gen_bump('reseller:' || OLD.reseller_id);
  END IF;
  RETURN NULL;
END $$;

-- The reseller's own account row.
CREATE FUNCTION cache_gen_reseller_account() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM cache_gen_bump('reseller:' || OLD.id);
    RETURN NULL;
  END IF;
  PERFORM cache_gen_bump('reseller:' || NEW.id);
  IF TG_OP = 'UPDATE' AND OLD.id IS DISTINCT FROM NEW.id THEN
    PERFORM cache_gen_bump('reseller:' || OLD.id);
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION cache_gen_catalogue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM cache_gen_bump('catalogue');
  RETURN NULL;
END $$;

CREATE TRIGGER cache_gen_orders_insert AFTER INSERT ON orders FOR EACH ROW EXECUTE FUNCTION cache_gen_reseller_rows();
CREATE TRIGGER cache_gen_orders_update AFTER UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION cache_gen_reseller_rows();
CREATE TRIGGER cache_gen_orders_delete AFTER DELETE ON orders FOR EACH ROW EXECUTE FUNCTION cache_gen_reseller_rows();
CREATE TRIGGER cache_gen_invoices_insert AFTER INSERT ON invoices FOR EACH ROW EXECUTE FUNCTION cache_gen_reseller_rows();
CREATE TRIGGER cache_gen_invoices_update AFTER UPDATE ON invoices FOR EACH ROW EXECUTE FUNCTION cache_gen_reseller_rows();
CREATE TRIGGER cache_gen_invoices_delete AFTER DELETE ON invoices FOR EACH ROW EXECUTE FUNCTION cache_gen_reseller_rows();
CREATE TRIGGER cache_gen_ledger_insert AFTER INSERT ON credit_transactions FOR EACH ROW EXECUTE FUNCTION cache_gen_reseller_rows();
CREATE TRIGGER cache_gen_ledger_update AFTER UPDATE ON credit_transactions FOR EACH ROW EXECUTE FUNCTION cache_gen_reseller_rows();
CREATE TRIGGER cache_gen_ledger_delete AFTER DELETE ON credit_transactions FOR EACH ROW EXECUTE FUNCTION cache_gen_reseller_rows();
CREATE TRIGGER cache_gen_api_keys_insert AFTER INSERT ON api_keys FOR EACH ROW EXECUTE FUNCTION cache_gen_reseller_rows();
CREATE TRIGGER cache_gen_api_keys_update AFTER UPDATE ON api_keys FOR EACH ROW EXECUTE FUNCTION cache_gen_reseller_rows();
CREATE TRIGGER cache_gen_api_keys_delete AFTER DELETE ON api_keys FOR EACH ROW EXECUTE FUNCTION cache_gen_reseller_rows();
CREATE TRIGGER cache_gen_resellers_insert AFTER INSERT ON resellers FOR EACH ROW EXECUTE FUNCTION cache_gen_reseller_account();
CREATE TRIGGER cache_gen_resellers_update AFTER UPDATE ON resellers FOR EACH ROW EXECUTE FUNCTION cache_gen_reseller_account();
CREATE TRIGGER cache_gen_resellers_delete AFTER DELETE ON resellers FOR EACH ROW EXECUTE FUNCTION cache_gen_reseller_account();
CREATE TRIGGER cache_gen_products_insert AFTER INSERT ON products FOR EACH ROW EXECUTE FUNCTION cache_gen_catalogue();
CREATE TRIGGER cache_gen_products_update AFTER UPDATE ON products FOR EACH ROW EXECUTE FUNCTION cache_gen_catalogue();
CREATE TRIGGER cache_gen_products_delete AFTER DELETE ON products FOR EACH ROW EXECUTE FUNCTION cache_gen_catalogue();
CREATE TRIGGER cache_gen_prices_insert AFTER INSERT ON product_prices FOR EACH ROW EXECUTE FUNCTION cache_gen_catalogue();
CREATE TRIGGER cache_gen_prices_update AFTER UPDATE ON product_prices FOR EACH ROW EXECUTE FUNCTION cache_gen_catalogue();
CREATE TRIGGER cache_gen_prices_delete AFTER DELETE ON product_prices FOR EACH ROW EXECUTE FUNCTION cache_gen_catalogue();
CREATE TRIGGER cache_gen_groups_insert AFTER INSERT ON reseller_groups FOR EACH ROW EXECUTE FUNCTION cache_gen_catalogue();
CREATE TRIGGER cache_gen_groups_update AFTER UPDATE ON reseller_groups FOR EACH ROW EXECUTE FUNCTION cache_gen_catalogue();
CREATE TRIGGER cache_gen_groups_delete AFTER DELETE ON reseller_groups FOR EACH ROW EXECUTE FUNCTION cache_gen_catalogue();

CREATE FUNCTION order_day_tallies_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE order_day_tallies
       SET n = n - 1, paid_cents = paid_cents - CASE WHEN OLD.payment_status = 'paid' THEN OLD.total_cents ELSE 0 END
     WHERE reseller_id = OLD.reseller_id AND day = substr(OLD.created_at, 1, 10);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO order_day_tallies VALUES (NEW.reseller_id, substr(NEW.created_at, 1, 10), 1,
        CASE WHEN NEW.payment_status = 'paid' THEN NEW.total_cents ELSE 0 END)
      ON CONFLICT (reseller_id, day)
      DO UPDATE SET n = order_day_tallies.n + 1, paid_cents = order_day_tallies.paid_cents + excluded.paid_cents;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER order_day_tallies_insert AFTER INSERT ON orders FOR EACH ROW EXECUTE FUNCTION order_day_tallies_keep();
CREATE TRIGGER order_day_tallies_delete AFTER DELETE ON orders FOR EACH ROW EXECUTE FUNCTION order_day_tallies_keep();
CREATE TRIGGER order_day_tallies_update AFTER UPDATE OF reseller_id, created_at, payment_status, total_cents ON orders
  FOR EACH ROW EXECUTE FUNCTION order_day_tallies_keep();

CREATE FUNCTION order_versions_bump(p_order bigint) RETURNS void LANGUAGE sql AS $$
  INSERT INTO order_versions VALUES (p_order, 1) ON CONFLICT (order_id) DO UPDATE SET v = order_versions.v + 1
$$;

CREATE FUNCTION order_versions_orders() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM order_versions_bump(OLD.id);
    RETURN NULL;
  END IF;
  PERFORM order_versions_bump(NEW.id);
  IF OLD.id IS DISTINCT FROM NEW.id THEN
    PERFORM order_versions_bump(OLD.id);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER order_versions_orders_update AFTER UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION order_versions_orders();
CREATE TRIGGER order_versions_orders_delete AFTER DELETE ON orders FOR EACH ROW EXECUTE FUNCTION order_versions_orders();

CREATE FUNCTION order_versions_invoices() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM order_versions_bump(OLD.order_id);
    RETURN NULL;
  END IF;
  PERFORM order_versions_bump(NEW.order_id);
  IF TG_OP = 'UPDATE' AND OLD.order_id IS DISTINCT FROM NEW.order_id THEN
    PERFORM order_versions_bump(OLD.order_id);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER order_versions_invoices_insert AFTER INSERT ON invoices FOR EACH ROW EXECUTE FUNCTION order_versions_invoices();
CREATE TRIGGER order_versions_invoices_update AFTER UPDATE ON invoices FOR EACH ROW EXECUTE FUNCTION order_versions_invoices();
CREATE TRIGGER order_versions_invoices_delete AFTER DELETE ON invoices FOR EACH ROW EXECUTE FUNCTION order_versions_invoices();
