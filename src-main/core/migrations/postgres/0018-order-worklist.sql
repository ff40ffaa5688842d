-- PostgreSQL part of schema 18 (the common part is translated from ../0018-order-worklist.sql:
-- install_verdict, its backfill and the two tally tables).
--
-- SQLite computes renewal_due and install_problem on read (VIRTUAL); PostgreSQL has only STORED
-- generated columns (PostgreSQL manual, 5.4 "Generated Columns"), written with each row, which
-- the list reads the same way. The expressions are SQLite's, in PostgreSQL's words: MIN of two
-- values is LEAST, and a comparison is cast to the 0/1 integer SQLite gives (NULL stays NULL,
-- as SQLite's three-valued AND gives it). Text is collated "C" on both engines, so LEAST picks
-- the same day MIN does. purchase_end_date is NOT NULL, so LEAST never drops a NULL MIN keeps.
ALTER TABLE orders ADD COLUMN renewal_due text COLLATE "C" GENERATED ALWAYS AS (
  CASE
    WHEN status IN ('cancelled', 'expired') THEN NULL
    WHEN next_reissue_at IS NOT NULL AND cert_valid_till IS NOT NULL THEN next_reissue_at
    WHEN status = 'completed' THEN LEAST(COALESCE(cert_valid_till, purchase_end_date), purchase_end_date)
  END
) STORED;

ALTER TABLE orders ADD COLUMN install_problem bigint GENERATED ALWAYS AS (
  CAST(CAST(status = 'completed' AND install_verdict IN
    ('unreachable', 'other_certificate', 'old_certificate', 'expired', 'hostname_mismatch', 'chain_incomplete')
    AS integer) AS bigint)
) STORED;

-- The tallies of the rows already there (the common part made the tables).
INSERT INTO order_renewal_days
  SELECT reseller_id, renewal_due, COUNT(*) FROM orders WHERE renewal_due IS NOT NULL GROUP BY 1, 2;
INSERT INTO order_problem_tallies SELECT reseller_id, COUNT(*) FROM orders WHERE install_problem = 1 GROUP BY 1;

-- The worst verdict of the order's servers, copied onto the order. SQLite's three triggers
-- under their names and events, as plpgsql (PostgreSQL manual, 43.10 "Trigger Functions").
CREATE FUNCTION installation_status_verdict_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    UPDATE orders SET install_verdict = NULL WHERE id = OLD.order_id;
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' THEN
    IF OLD.order_id IS DISTINCT FROM NEW.order_id THEN
      UPDATE orders SET install_verdict = NULL WHERE id = OLD.order_id;
    END IF;
  END IF;
  UPDATE orders SET install_verdict = NEW.verdict WHERE id = NEW.order_id;
  RETURN NULL;
END $$;
CREATE TRIGGER installation_status_verdict_insert AFTER INSERT ON installation_status
  FOR EACH ROW EXECUTE FUNCTION installation_status_verdict_keep();
CREATE TRIGGER installation_status_verdict_update AFTER UPDATE OF verdict, order_id ON installation_status
  FOR EACH ROW WHEN (OLD.verdict IS DISTINCT FROM NEW.verdict OR OLD.order_id IS DISTINCT FROM NEW.order_id)
  EXECUTE FUNCTION installation_status_verdict_keep();
CREATE TRIGGER installation_status_verdict_delete AFTER DELETE ON installation_status
  FOR EACH ROW EXECUTE FUNCTION installation_status_verdict_keep();

-- Orders by reseller and the day they next renew. The triggers' WHEN clauses are SQLite's; an
-- AFTER trigger sees the generated columns of the row as written.
CREATE FUNCTION order_renewal_days_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE order_renewal_days SET n = n - 1 WHERE reseller_id = OLD.reseller_id AND day = OLD.renewal_due;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    IF NEW.renewal_due IS NOT NULL THEN
      INSERT INTO order_renewal_days VALUES (NEW.reseller_id, NEW.renewal_due, 1)
        ON CONFLICT (reseller_id, day) DO UPDATE SET n = order_renewal_days.n + 1;
    END IF;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER order_renewal_days_insert AFTER INSERT ON orders
  FOR EACH ROW WHEN (NEW.renewal_due IS NOT NULL) EXECUTE FUNCTION order_renewal_days_keep();
CREATE TRIGGER order_renewal_days_delete AFTER DELETE ON orders
  FOR EACH ROW WHEN (OLD.renewal_due IS NOT NULL) EXECUTE FUNCTION order_renewal_days_keep();
CREATE TRIGGER order_renewal_days_update
  AFTER UPDATE OF reseller_id, status, next_reissue_at, cert_valid_till, purchase_end_date ON orders
  FOR EACH ROW WHEN (OLD.renewal_due IS DISTINCT FROM NEW.renewal_due OR OLD.reseller_id IS DISTINCT FROM NEW.reseller_id)
  EXECUTE FUNCTION order_renewal_days_keep();

-- Orders with an installation problem per reseller.
CREATE FUNCTION order_problem_tallies_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    IF OLD.install_problem = 1 THEN
      UPDATE order_problem_tallies SET n = n - 1 WHERE reseller_id = OLD.reseller_id;
    END IF;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    IF NEW.install_problem = 1 THEN
      INSERT INTO order_problem_tallies VALUES (NEW.reseller_id, 1)
        ON CONFLICT (reseller_id) DO UPDATE SET n = order_problem_tallies.n + 1;
    END IF;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER order_problem_tallies_insert AFTER INSERT ON orders
  FOR EACH ROW WHEN (NEW.install_problem = 1) EXECUTE FUNCTION order_problem_tallies_keep();
CREATE TRIGGER order_problem_tallies_delete AFTER DELETE ON orders
  FOR EACH ROW WHEN (OLD.install_problem = 1) EXECUTE FUNCTION order_problem_tallies_keep();
CREATE TRIGGER order_problem_tallies_update AFTER UPDATE OF reseller_id, status, install_verdict ON orders
  FOR EACH ROW WHEN (OLD.install_problem IS DISTINCT FROM NEW.install_problem OR OLD.reseller_id IS DISTINCT FROM NEW.reseller_id)
  EXECUTE FUNCTION order_problem_tallies_keep();

-- The list sorted by next renewal and the "renewal due" view as a range of it ('~' after any
-- digit, as in orders_reseller_expiry); the "installation problems" view over its orders only.
CREATE INDEX orders_reseller_renewal ON orders(reseller_id, (COALESCE(renewal_due, '~')), id);
CREATE INDEX orders_reseller_install_problem ON orders(reseller_id, id) WHERE install_problem = 1;
