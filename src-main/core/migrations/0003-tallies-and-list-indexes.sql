-- CertDesk schema 3: what keeps the reseller API fast on a store of a million orders
-- (issue 7). Nothing here changes what the API answers; each structure is kept exact by
-- triggers inside the writer's own transaction, so every writer (API, admin CLI, scheduler)
-- keeps it right without knowing it exists.

-- Order counts and money per reseller, status, payment status and product. COUNT(*) and
-- SUM over a million rows cost seconds; these few rows answer GET /stats, GET /account and
-- the list totals of GET /orders at once.
CREATE TABLE order_tallies (
  reseller_id    INTEGER NOT NULL,
  status         TEXT NOT NULL,
  payment_status TEXT NOT NULL,
  product_id     INTEGER NOT NULL,
  n              INTEGER NOT NULL,
  total_cents    INTEGER NOT NULL,
  PRIMARY KEY (reseller_id, status, payment_status, product_id)
) STRICT, WITHOUT ROWID;

INSERT INTO order_tallies
  SELECT reseller_id, status, payment_status, product_id, COUNT(*), SUM(total_cents)
  FROM orders GROUP BY reseller_id, status, payment_status, product_id;

CREATE TRIGGER order_tallies_insert AFTER INSERT ON orders BEGIN
  INSERT INTO order_tallies VALUES (new.reseller_id, new.status, new.payment_status, new.product_id, 1, new.total_cents)
    ON CONFLICT DO UPDATE SET n = n + 1, total_cents = total_cents + excluded.total_cents;
END;
CREATE TRIGGER order_tallies_delete AFTER DELETE ON orders BEGIN
  UPDATE order_tallies SET n = n - 1, total_cents = total_cents - old.total_cents
    WHERE reseller_id = old.reseller_id AND status = old.status AND payment_status = old.payment_status
      AND product_id = old.product_id;
END;
CREATE TRIGGER order_tallies_update AFTER UPDATE OF reseller_id, status, payment_status, product_id, total_cents ON orders BEGIN
  UPDATE order_tallies SET n = n - 1, total_cents = total_cents - old.total_cents
    WHERE reseller_id = old.reseller_id AND status = old.status AND payment_status = old.payment_status
      AND product_id = old.product_id;
  INSERT INTO order_tallies VALUES (new.reseller_id, new.status, new.payment_status, new.product_id, 1, new.total_cents)
    ON CONFLICT DO UPDATE SET n = n + 1, total_cents = total_cents + excluded.total_cents;
END;

-- Invoice and ledger row counts per reseller, for the `pagination.total` of GET /invoices,
-- GET /credits and GET /balance (three million ledger rows take 80 ms to count).
CREATE TABLE invoice_tallies (
  reseller_id INTEGER NOT NULL,
  status      TEXT NOT NULL,
  n           INTEGER NOT NULL,
  PRIMARY KEY (reseller_id, status)
) STRICT, WITHOUT ROWID;

INSERT INTO invoice_tallies SELECT reseller_id, status, COUNT(*) FROM invoices GROUP BY reseller_id, status;

CREATE TRIGGER invoice_tallies_insert AFTER INSERT ON invoices BEGIN
  INSERT INTO invoice_tallies VALUES (new.reseller_id, new.status, 1) ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER invoice_tallies_delete AFTER DELETE ON invoices BEGIN
  UPDATE invoice_tallies SET n = n - 1 WHERE reseller_id = old.reseller_id AND status = old.status;
END;
CREATE TRIGGER invoice_tallies_update AFTER UPDATE OF reseller_id, status ON invoices BEGIN
  UPDATE invoice_tallies SET n = n - 1 WHERE reseller_id = old.reseller_id AND status = old.status;
  INSERT INTO invoice_tallies VALUES (new.reseller_id, new.status, 1) ON CONFLICT DO UPDATE SET n = n + 1;
END;

CREATE TABLE ledger_tallies (
  reseller_id INTEGER PRIMARY KEY,
  n           INTEGER NOT NULL
) STRICT;

INSERT INTO ledger_tallies SELECT reseller_id, COUNT(*) FROM credit_transactions GROUP BY reseller_id;

CREATE TRIGGER ledger_tallies_insert AFTER INSERT ON credit_transactions BEGIN
  INSERT INTO ledger_tallies VALUES (new.reseller_id, 1) ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER ledger_tallies_delete AFTER DELETE ON credit_transactions BEGIN
  UPDATE ledger_tallies SET n = n - 1 WHERE reseller_id = old.reseller_id;
END;

-- GET /stats reads the last 30 days and the current month from this index alone.
CREATE INDEX orders_reseller_created ON orders(reseller_id, created_at, payment_status, total_cents);

-- GET /orders?domain= is a case-insensitive substring search (README, "Paging"). A trigram
-- index answers LIKE '%term%' for terms of three characters or more without reading every
-- order; `detail=none` keeps it small, and SQLite re-checks each candidate against the text.
CREATE VIRTUAL TABLE orders_domain USING fts5(domain, content = 'orders', content_rowid = 'id',
  tokenize = 'trigram', detail = 'none');
INSERT INTO orders_domain(orders_domain) VALUES ('rebuild');

CREATE TRIGGER orders_domain_insert AFTER INSERT ON orders BEGIN
  INSERT INTO orders_domain(rowid, domain) VALUES (new.id, new.domain);
END;
CREATE TRIGGER orders_domain_delete AFTER DELETE ON orders BEGIN
  INSERT INTO orders_domain(orders_domain, rowid, domain) VALUES ('delete', old.id, old.domain);
END;
CREATE TRIGGER orders_domain_update AFTER UPDATE OF domain ON orders BEGIN
  INSERT INTO orders_domain(orders_domain, rowid, domain) VALUES ('delete', old.id, old.domain);
  INSERT INTO orders_domain(rowid, domain) VALUES (new.id, new.domain);
END;

-- The catalogue changes rarely and is read on every GET /products and POST /orders; the core
-- keeps the priced products in memory and reloads them when this number moves. Triggers bump
-- it for every writer, the admin CLI in another process included.
INSERT INTO settings (key, value) VALUES ('catalogue_version', '0') ON CONFLICT (key) DO NOTHING;
CREATE TRIGGER catalogue_version_products_insert AFTER INSERT ON products BEGIN
  UPDATE settings SET value = CAST(value AS INTEGER) + 1 WHERE key = 'catalogue_version';
END;
CREATE TRIGGER catalogue_version_products_update AFTER UPDATE ON products BEGIN
  UPDATE settings SET value = CAST(value AS INTEGER) + 1 WHERE key = 'catalogue_version';
END;
CREATE TRIGGER catalogue_version_products_delete AFTER DELETE ON products BEGIN
  UPDATE settings SET value = CAST(value AS INTEGER) + 1 WHERE key = 'catalogue_version';
END;
CREATE TRIGGER catalogue_version_prices_insert AFTER INSERT ON product_prices BEGIN
  UPDATE settings SET value = CAST(value AS INTEGER) + 1 WHERE key = 'catalogue_version';
END;
CREATE TRIGGER catalogue_version_prices_update AFTER UPDATE ON product_prices BEGIN
  UPDATE settings SET value = CAST(value AS INTEGER) + 1 WHERE key = 'catalogue_version';
END;
CREATE TRIGGER catalogue_version_prices_delete AFTER DELETE ON product_prices BEGIN
  UPDATE settings SET value = CAST(value AS INTEGER) + 1 WHERE key = 'catalogue_version';
END;

-- The scheduler's pass looks for waiting validations and ended subscriptions by status and
-- end date, and for due reissues by date; without these it reads every order each hour.
CREATE INDEX orders_status_end ON orders(status, purchase_end_date);
CREATE INDEX orders_next_reissue ON orders(status, auto_reissue, next_reissue_at) WHERE next_reissue_at IS NOT NULL;
-- Its "certificate expiring, no reissue will follow" notice looks for completed orders by
-- certificate end; the partial index holds only those rows the notice can ever pick.
CREATE INDEX orders_expiring ON orders(status, cert_valid_till) WHERE next_reissue_at IS NULL AND cert_valid_till IS NOT NULL;
