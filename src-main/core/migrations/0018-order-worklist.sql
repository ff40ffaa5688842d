-- CertDesk schema 18: the orders list as a worklist. What each row shows beyond the order
-- itself (when it next renews, what its servers present) and the saved views a reseller
-- returns to ("renewal due in 30 days", "installation problems") are answered from indexes and
-- tallies kept by triggers inside the writer's own transaction, so a store of a million orders
-- pays for the rows on screen and a handful of tally rows, never for a scan.

-- When the order next renews: the automatic reissue inside the paid period (the scheduler's
-- `next_reissue_at`, once a certificate exists), else, for an issued order that no reissue
-- will follow, the day its last certificate or its subscription ends (a renewal must be sold
-- by then). Ended and cancelled orders renew never. One rule, read by the list, its sort, the
-- view and the tallies below.
ALTER TABLE orders ADD COLUMN renewal_due TEXT GENERATED ALWAYS AS (
  CASE
    WHEN status IN ('cancelled', 'expired') THEN NULL
    WHEN next_reissue_at IS NOT NULL AND cert_valid_till IS NOT NULL THEN next_reissue_at
    WHEN status = 'completed' THEN MIN(IFNULL(cert_valid_till, purchase_end_date), purchase_end_date)
  END
) VIRTUAL;

-- The worst verdict of the order's servers (installation_status.verdict), kept here by the
-- triggers below so the "installation problems" view is an index range of its own.
ALTER TABLE orders ADD COLUMN install_verdict TEXT;

-- An issued order whose servers present something other than its current certificate, in
-- full. "unchecked" and "ok" are not problems; an order that has ended is not the admin's to fix.
ALTER TABLE orders ADD COLUMN install_problem INTEGER GENERATED ALWAYS AS (
  status = 'completed' AND install_verdict IN
    ('unreachable', 'other_certificate', 'old_certificate', 'expired', 'hostname_mismatch', 'chain_incomplete')
) VIRTUAL;

UPDATE orders SET install_verdict = s.verdict FROM installation_status s WHERE s.order_id = orders.id;

CREATE TRIGGER installation_status_verdict_insert AFTER INSERT ON installation_status BEGIN
  UPDATE orders SET install_verdict = new.verdict WHERE id = new.order_id;
END;
CREATE TRIGGER installation_status_verdict_update AFTER UPDATE OF verdict, order_id ON installation_status
  WHEN old.verdict IS NOT new.verdict OR old.order_id IS NOT new.order_id BEGIN
  UPDATE orders SET install_verdict = NULL WHERE id = old.order_id AND old.order_id IS NOT new.order_id;
  UPDATE orders SET install_verdict = new.verdict WHERE id = new.order_id;
END;
CREATE TRIGGER installation_status_verdict_delete AFTER DELETE ON installation_status BEGIN
  UPDATE orders SET install_verdict = NULL WHERE id = old.order_id;
END;

-- Orders by reseller and the day they next renew: "renewal due within N days" is the sum of
-- at most N + a few rows, whatever the size of the store (the same shape as order_day_tallies).
CREATE TABLE order_renewal_days (
  reseller_id INTEGER NOT NULL,
  day         TEXT NOT NULL,
  n           INTEGER NOT NULL,
  PRIMARY KEY (reseller_id, day)
) STRICT, WITHOUT ROWID;

INSERT INTO order_renewal_days
  SELECT reseller_id, renewal_due, COUNT(*) FROM orders WHERE renewal_due IS NOT NULL GROUP BY 1, 2;

CREATE TRIGGER order_renewal_days_insert AFTER INSERT ON orders WHEN new.renewal_due IS NOT NULL BEGIN
  INSERT INTO order_renewal_days VALUES (new.reseller_id, new.renewal_due, 1) ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER order_renewal_days_delete AFTER DELETE ON orders WHEN old.renewal_due IS NOT NULL BEGIN
  UPDATE order_renewal_days SET n = n - 1 WHERE reseller_id = old.reseller_id AND day = old.renewal_due;
END;
CREATE TRIGGER order_renewal_days_update
  AFTER UPDATE OF reseller_id, status, next_reissue_at, cert_valid_till, purchase_end_date ON orders
  WHEN old.renewal_due IS NOT new.renewal_due OR old.reseller_id IS NOT new.reseller_id BEGIN
  UPDATE order_renewal_days SET n = n - 1 WHERE reseller_id = old.reseller_id AND day = old.renewal_due;
  INSERT INTO order_renewal_days SELECT new.reseller_id, new.renewal_due, 1 WHERE new.renewal_due IS NOT NULL
    ON CONFLICT DO UPDATE SET n = n + 1;
END;

-- Orders with an installation problem per reseller: the view's count is one row.
CREATE TABLE order_problem_tallies (
  reseller_id INTEGER PRIMARY KEY,
  n           INTEGER NOT NULL
) STRICT;

INSERT INTO order_problem_tallies SELECT reseller_id, COUNT(*) FROM orders WHERE install_problem GROUP BY 1;

CREATE TRIGGER order_problem_tallies_insert AFTER INSERT ON orders WHEN new.install_problem BEGIN
  INSERT INTO order_problem_tallies VALUES (new.reseller_id, 1) ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER order_problem_tallies_delete AFTER DELETE ON orders WHEN old.install_problem BEGIN
  UPDATE order_problem_tallies SET n = n - 1 WHERE reseller_id = old.reseller_id;
END;
CREATE TRIGGER order_problem_tallies_update AFTER UPDATE OF reseller_id, status, install_verdict ON orders
  WHEN old.install_problem IS NOT new.install_problem OR old.reseller_id IS NOT new.reseller_id BEGIN
  UPDATE order_problem_tallies SET n = n - 1 WHERE reseller_id = old.reseller_id AND old.install_problem;
  INSERT INTO order_problem_tallies SELECT new.reseller_id, 1 WHERE new.install_problem
    ON CONFLICT DO UPDATE SET n = n + 1;
END;

-- The list sorted by next renewal, and the "renewal due" view as a range of it (orders that
-- renew never sort last: '~' sorts after any digit, as in orders_reseller_expiry).
CREATE INDEX orders_reseller_renewal ON orders(reseller_id, IFNULL(renewal_due, '~'), id);
-- The "installation problems" view reads only the orders that have one.
CREATE INDEX orders_reseller_install_problem ON orders(reseller_id, id) WHERE install_problem;
