-- The desktop lists page by key ("after this sort key and id"), not by offset: each sort order
-- a list offers needs an index led by the reseller and ending in the id, so the next page is a
-- range scan of that index whatever its depth. Date order is id order (orders_reseller) and
-- status order is orders_reseller_status, both from migration 0001.
CREATE INDEX orders_reseller_domain ON orders(reseller_id, domain, id);
-- Orders without a certificate sort after every expiry date: '~' sorts after any digit.
CREATE INDEX orders_reseller_expiry ON orders(reseller_id, IFNULL(cert_valid_till, '~'), id);
-- The "unpaid" filter reads only the unpaid orders, however few there are among a million.
CREATE INDEX orders_reseller_unpaid ON orders(reseller_id, id) WHERE payment_status = 'unpaid';
-- Status order reads status and id both ascending or both descending; the index of 0001 keeps
-- the ids descending within a status, which serves neither.
CREATE INDEX orders_reseller_status_id ON orders(reseller_id, status, id);
