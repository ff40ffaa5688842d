-- CertDesk schema 15: approval messages sent, for their limits. Every request that mails
-- approval codes (configure, change-dcv, reissue and choose-approver with email validation,
-- resend-validation) records one row before it sends: its order, its reseller and how many
-- messages it sends. The limits per order and per reseller count these rows; rows older than
-- the longest window (24 hours) are deleted as new ones come.
CREATE TABLE approval_mail_sends (
  id          INTEGER PRIMARY KEY,
  reseller_id INTEGER NOT NULL REFERENCES resellers(id) ON DELETE CASCADE,
  order_id    INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
  messages    INTEGER NOT NULL CHECK (messages >= 1),
  sent_at     TEXT NOT NULL
) STRICT;
CREATE INDEX approval_mail_sends_order ON approval_mail_sends (order_id, sent_at);
CREATE INDEX approval_mail_sends_reseller ON approval_mail_sends (reseller_id, sent_at);
