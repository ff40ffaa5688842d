-- PostgreSQL part of schema 17 (the common part is translated from ../0017-admins-and-audit-log.sql).
-- The audit log is append-only on PostgreSQL too: the same six triggers, under the same names,
-- refuse to change, remove or replace an entry or an outcome, whoever connects (PostgreSQL
-- manual, 43.10 "Trigger Functions": an error raised in a BEFORE trigger aborts the statement).
-- TRUNCATE fires no row trigger; on a team server the database role CertDesk connects as should
-- not own these tables and should hold only SELECT and INSERT on them, which also survives a
-- dropped trigger (docs/team-server.md, "Admins, roles and the audit log").

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the audit log is append-only: % cannot be %', TG_ARGV[0],
    CASE TG_OP WHEN 'UPDATE' THEN 'changed' WHEN 'DELETE' THEN 'removed' ELSE 'replaced' END
    USING ERRCODE = 'restrict_violation';
END $$;

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_append_only('an entry');
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_append_only('an entry');
CREATE TRIGGER audit_outcomes_no_update BEFORE UPDATE ON audit_outcomes
  FOR EACH ROW EXECUTE FUNCTION audit_log_append_only('an outcome');
CREATE TRIGGER audit_outcomes_no_delete BEFORE DELETE ON audit_outcomes
  FOR EACH ROW EXECUTE FUNCTION audit_log_append_only('an outcome');

-- INSERT … ON CONFLICT DO UPDATE runs the UPDATE triggers above, and a plain INSERT of a key
-- that exists fails on the primary key; these keep SQLite's names and refuse such an insert
-- before the key is looked at, with the same words as on SQLite.
CREATE FUNCTION audit_log_refuse_existing() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM audit_log WHERE id = NEW.id) THEN
    RAISE EXCEPTION 'the audit log is append-only: an entry cannot be replaced' USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE FUNCTION audit_outcomes_refuse_existing() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM audit_outcomes WHERE audit_id = NEW.audit_id) THEN
    RAISE EXCEPTION 'the audit log is append-only: an outcome cannot be replaced' USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER audit_log_no_replace BEFORE INSERT ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_refuse_existing();
CREATE TRIGGER audit_outcomes_no_replace BEFORE INSERT ON audit_outcomes
  FOR EACH ROW EXECUTE FUNCTION audit_outcomes_refuse_existing();
