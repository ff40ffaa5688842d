-- CertDesk schema 9: what lets a cached answer outlive writes that cannot change it, and keeps
-- GET /stats from reading this month's orders row by row. Both are kept by triggers inside the
-- writer's own transaction, so every writer (the API, the admin CLI in another process, the
-- scheduler, a repair by hand) keeps them right without knowing they exist.

-- A number per part of the store that moves with every write to that part:
--   'reseller:<id>'  that reseller's account row, API keys, orders, invoices and ledger;
--   'catalogue'      products, prices and reseller groups.
-- An answer computed from some parts may be reused while their numbers are unchanged
-- (core/store-version.ts). A part without a row has number 0; the first write makes it 1.
CREATE TABLE cache_generations (
  scope TEXT PRIMARY KEY,
  gen   INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TRIGGER cache_gen_orders_insert AFTER INSERT ON orders BEGIN
  INSERT INTO cache_generations VALUES ('reseller:' || new.reseller_id, 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER cache_gen_orders_update AFTER UPDATE ON orders BEGIN
  INSERT INTO cache_generations VALUES ('reseller:' || new.reseller_id, 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
  INSERT INTO cache_generations SELECT 'reseller:' || old.reseller_id, 1 WHERE old.reseller_id IS NOT new.reseller_id
    ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER cache_gen_orders_delete AFTER DELETE ON orders BEGIN
  INSERT INTO cache_generations VALUES ('reseller:' || old.reseller_id, 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;

CREATE TRIGGER cache_gen_invoices_insert AFTER INSERT ON invoices BEGIN
  INSERT INTO cache_generations VALUES ('reseller:' || new.reseller_id, 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER cache_gen_invoices_update AFTER UPDATE ON invoices BEGIN
  INSERT INTO cache_generations VALUES ('reseller:' || new.reseller_id, 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
  INSERT INTO cache_generations SELECT 'reseller:' || old.reseller_id, 1 WHERE old.reseller_id IS NOT new.reseller_id
    ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER cache_gen_invoices_delete AFTER DELETE ON invoices BEGIN
  INSERT INTO cache_generations VALUES ('reseller:' || old.reseller_id, 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;

CREATE TRIGGER cache_gen_ledger_insert AFTER INSERT ON credit_transactions BEGIN
  INSERT INTO cache_generations VALUES ('reseller:' || new.reseller_id, 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER cache_gen_ledger_update AFTER UPDATE ON credit_transactions BEGIN
  INSERT INTO cache_generations VALUES ('reseller:' || new.reseller_id, 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
  INSERT INTO cache_generations SELECT 'reseller:' || old.reseller_id, 1 WHERE old.reseller_id IS NOT new.reseller_id
    ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER cache_gen_ledger_delete AFTER DELETE ON credit_transactions BEGIN
  INSERT INTO cache_generations VALUES ('reseller:' || old.reseller_id, 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;

CREATE TRIGGER cache_gen_api_keys_insert AFTER INSERT ON api_keys BEGIN
  INSERT INTO cache_generations VALUES ('reseller:' || new.reseller_id, 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER cache_gen_api_keys_update AFTER UPDATE ON api_keys BEGIN
  INSERT INTO cache_generations VALUES ('reseller:' || new.reseller_id, 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
  INSERT INTO cache_generations SELECT 'reseller:' || old.reseller_id, 1 WHERE old.reseller_id IS NOT new.reseller_id
    ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER cache_gen_api_keys_delete AFTER DELETE ON api_keys BEGIN
  INSERT INTO cache_generations VALUES ('reseller:' || old.reseller_id, 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;

CREATE TRIGGER cache_gen_resellers_insert AFTER INSERT ON resellers BEGIN
  INSERT INTO cache_generations VALUES ('reseller:' || new.id, 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER cache_gen_resellers_update AFTER UPDATE ON resellers BEGIN
  INSERT INTO cache_generations VALUES ('reseller:' || new.id, 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
  INSERT INTO cache_generations SELECT 'reseller:' || old.id, 1 WHERE old.id IS NOT new.id
    ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER cache_gen_resellers_delete AFTER DELETE ON resellers BEGIN
  INSERT INTO cache_generations VALUES ('reseller:' || old.id, 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;

CREATE TRIGGER cache_gen_products_insert AFTER INSERT ON products BEGIN
  INSERT INTO cache_generations VALUES ('catalogue', 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER cache_gen_products_update AFTER UPDATE ON products BEGIN
  INSERT INTO cache_generations VALUES ('catalogue', 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER cache_gen_products_delete AFTER DELETE ON products BEGIN
  INSERT INTO cache_generations VALUES ('catalogue', 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER cache_gen_prices_insert AFTER INSERT ON product_prices BEGIN
  INSERT INTO cache_generations VALUES ('catalogue', 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER cache_gen_prices_update AFTER UPDATE ON product_prices BEGIN
  INSERT INTO cache_generations VALUES ('catalogue', 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER cache_gen_prices_delete AFTER DELETE ON product_prices BEGIN
  INSERT INTO cache_generations VALUES ('catalogue', 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER cache_gen_groups_insert AFTER INSERT ON reseller_groups BEGIN
  INSERT INTO cache_generations VALUES ('catalogue', 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER cache_gen_groups_update AFTER UPDATE ON reseller_groups BEGIN
  INSERT INTO cache_generations VALUES ('catalogue', 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER cache_gen_groups_delete AFTER DELETE ON reseller_groups BEGIN
  INSERT INTO cache_generations VALUES ('catalogue', 1) ON CONFLICT (scope) DO UPDATE SET gen = gen + 1;
END;

-- Orders and paid revenue per reseller and UTC day of creation. GET /stats shows the last 30
-- days and this month's revenue; read from the orders themselves, that cost grew with every
-- order of the month (40,000 in the 1M-order bench store: 10 ms). From here it is 31 rows at most.
CREATE TABLE order_day_tallies (
  reseller_id INTEGER NOT NULL,
  day         TEXT NOT NULL,
  n           INTEGER NOT NULL,
  paid_cents  INTEGER NOT NULL,
  PRIMARY KEY (reseller_id, day)
) STRICT, WITHOUT ROWID;

INSERT INTO order_day_tallies
  SELECT reseller_id, substr(created_at, 1, 10), COUNT(*), COALESCE(SUM(CASE WHEN payment_status = 'paid' THEN total_cents END), 0)
  FROM orders GROUP BY 1, 2;

CREATE TRIGGER order_day_tallies_insert AFTER INSERT ON orders BEGIN
  INSERT INTO order_day_tallies VALUES (new.reseller_id, substr(new.created_at, 1, 10), 1,
      CASE WHEN new.payment_status = 'paid' THEN new.total_cents ELSE 0 END)
    ON CONFLICT DO UPDATE SET n = n + 1, paid_cents = paid_cents + excluded.paid_cents;
END;
CREATE TRIGGER order_day_tallies_delete AFTER DELETE ON orders BEGIN
  UPDATE order_day_tallies SET n = n - 1, paid_cents = paid_cents - CASE WHEN old.payment_status = 'paid' THEN old.total_cents ELSE 0 END
    WHERE reseller_id = old.reseller_id AND day = substr(old.created_at, 1, 10);
END;
CREATE TRIGGER order_day_tallies_update AFTER UPDATE OF reseller_id, created_at, payment_status, total_cents ON orders BEGIN
  UPDATE order_day_tallies SET n = n - 1, paid_cents = paid_cents - CASE WHEN old.payment_status = 'paid' THEN old.total_cents ELSE 0 END
    WHERE reseller_id = old.reseller_id AND day = substr(old.created_at, 1, 10);
  INSERT INTO order_day_tallies VALUES (new.reseller_id, substr(new.created_at, 1, 10), 1,
      CASE WHEN new.payment_status = 'paid' THEN new.total_cents ELSE 0 END)
    ON CONFLICT DO UPDATE SET n = n + 1, paid_cents = paid_cents + excluded.paid_cents;
END;

-- GET /stats read this month from this index; the day tallies answer it now, and every order
-- written no longer pays for keeping it.
DROP INDEX orders_reseller_created;

-- A number per order that moves with every change to what an order list shows of it: the
-- order's row and its invoice (the product's name moves 'catalogue' above). Lists keep built
-- orders in memory and read from the store only those whose number moved (core/order-cache.ts),
-- so the page a reseller's next order shifts by one costs one order read, not fifty. An order
-- without a row has number 0. Deleting an order moves its number too, so an id used again
-- never finds the old order kept.
CREATE TABLE order_versions (
  order_id INTEGER PRIMARY KEY,
  v        INTEGER NOT NULL
) STRICT;

CREATE TRIGGER order_versions_orders_update AFTER UPDATE ON orders BEGIN
  INSERT INTO order_versions VALUES (new.id, 1) ON CONFLICT (order_id) DO UPDATE SET v = v + 1;
  INSERT INTO order_versions SELECT old.id, 1 WHERE old.id IS NOT new.id ON CONFLICT (order_id) DO UPDATE SET v = v + 1;
END;
CREATE TRIGGER order_versions_orders_delete AFTER DELETE ON orders BEGIN
  INSERT INTO order_versions VALUES (old.id, 1) ON CONFLICT (order_id) DO UPDATE SET v = v + 1;
END;
CREATE TRIGGER order_versions_invoices_insert AFTER INSERT ON invoices BEGIN
  INSERT INTO order_versions VALUES (new.order_id, 1) ON CONFLICT (order_id) DO UPDATE SET v = v + 1;
END;
CREATE TRIGGER order_versions_invoices_update AFTER UPDATE ON invoices BEGIN
  INSERT INTO order_versions VALUES (new.order_id, 1) ON CONFLICT (order_id) DO UPDATE SET v = v + 1;
  INSERT INTO order_versions SELECT old.order_id, 1 WHERE old.order_id IS NOT new.order_id
    ON CONFLICT (order_id) DO UPDATE SET v = v + 1;
END;
CREATE TRIGGER order_versions_invoices_delete AFTER DELETE ON invoices BEGIN
  INSERT INTO order_versions VALUES (old.order_id, 1) ON CONFLICT (order_id) DO UPDATE SET v = v + 1;
END;
