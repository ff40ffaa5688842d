-- PostgreSQL part of schema 13 (the common part is translated from ../0013-domain-search-phrases.sql).
-- SQLite's contentless FTS5 table orders_search (domain and owner as one phrase) ↔ one GIN
-- index on (reseller_id, domain gin_trgm_ops): btree_gin lets the reseller id share the index
-- with the trigrams, so a search reads only the caller's entries. PostgreSQL keeps the index
-- itself, so SQLite's three orders_search_* triggers have no counterpart to write. btree_gin,
-- like pg_trgm, is a trusted extension (PostgreSQL 13+).
DROP INDEX IF EXISTS orders_domain;
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE INDEX orders_search ON orders USING gin (reseller_id, domain gin_trgm_ops);
