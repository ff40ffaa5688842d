-- CertDesk schema 13: GET /orders?domain= answered from a trigram index that holds each order's
-- owner beside its domain, so a page and its total are read from the index alone.
--
-- Schema 3's index (detail=none, content read back from `orders`) could only offer candidates
-- that SQLite then re-checked row by row, and the owner check read every candidate's order row:
-- a term that 5% of a million orders contain cost 0.1-0.2 s. Here a term is one FTS5 phrase
-- (its trigrams at consecutive positions, which is exactly "contains the term"), so nothing is
-- re-checked; `owner` is the reseller id between two '#', one or a few trigrams that only that
-- id produces. Contentless (content = ''): the index stores no copy of the text; with
-- contentless_delete (SQLite 3.43) the triggers can still remove and replace an order's entry.
-- case_sensitive 0 folds ASCII case as LIKE does (core/tallies.ts sends only ASCII terms here).
DROP TRIGGER IF EXISTS orders_domain_insert;
DROP TRIGGER IF EXISTS orders_domain_delete;
DROP TRIGGER IF EXISTS orders_domain_update;
DROP TABLE IF EXISTS orders_domain;

CREATE VIRTUAL TABLE orders_search USING fts5(domain, owner, content = '', contentless_delete = 1,
  tokenize = 'trigram case_sensitive 0');
INSERT INTO orders_search(rowid, domain, owner) SELECT id, domain, '#' || reseller_id || '#' FROM orders;

CREATE TRIGGER orders_search_insert AFTER INSERT ON orders BEGIN
  INSERT INTO orders_search(rowid, domain, owner) VALUES (new.id, new.domain, '#' || new.reseller_id || '#');
END;
CREATE TRIGGER orders_search_delete AFTER DELETE ON orders BEGIN
  DELETE FROM orders_search WHERE rowid = old.id;
END;
CREATE TRIGGER orders_search_update AFTER UPDATE OF id, domain, reseller_id ON orders BEGIN
  DELETE FROM orders_search WHERE rowid = old.id;
  INSERT INTO orders_search(rowid, domain, owner) VALUES (new.id, new.domain, '#' || new.reseller_id || '#');
END;
