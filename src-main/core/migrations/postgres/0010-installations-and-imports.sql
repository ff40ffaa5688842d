-- PostgreSQL part of schema 10 (the common part is translated from ../0010-installations-and-imports.sql).

-- A newly stored certificate is checked an hour after it was stored. Timestamps are text in
-- the store's one format (YYYY-MM-DD HH:MM:SS, UTC) on both engines.
CREATE FUNCTION certificates_installation_due() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO installation_status (order_id, verdict, checked_at, next_check_at)
  VALUES (NEW.order_id, 'unchecked', NEW.created_at,
          to_char(CAST(NEW.created_at AS timestamp) + interval '1 hour', 'YYYY-MM-DD HH24:MI:SS'))
  ON CONFLICT (order_id) DO UPDATE SET next_check_at = excluded.next_check_at;
  RETURN NULL;
END $$;
CREATE TRIGGER certificates_installation_due AFTER INSERT ON certificates
  FOR EACH ROW EXECUTE FUNCTION certificates_installation_due();

-- A deploy that succeeded makes its order's installation check due at once.
CREATE FUNCTION deploy_runs_installation_due() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE installation_status SET next_check_at = NEW.updated_at WHERE order_id = NEW.order_id;
  RETURN NULL;
END $$;
CREATE TRIGGER deploy_runs_installation_due AFTER UPDATE OF status ON deploy_runs
  FOR EACH ROW WHEN (NEW.status = 'succeeded' AND OLD.status <> 'succeeded')
  EXECUTE FUNCTION deploy_runs_installation_due();
