-- Background work as rows (src/jobs): each item is claimed by one server
-- instance at a time, with a lease, and deleted when done. Keyed by what
-- it is about (kind, subject), so scheduling it twice is one item; it
-- carries its organisation beside its due time, so an organisation's own
-- clock can decide when it runs.
CREATE TABLE jobs (
    kind TEXT NOT NULL,
    subject TEXT NOT NULL,
    org_id TEXT REFERENCES organisations (id),
    due_at TEXT NOT NULL,
    lease_until TEXT,
    attempts BIGINT NOT NULL DEFAULT 0,
    last_error TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (kind, subject)
);
CREATE INDEX jobs_due ON jobs (kind, due_at);

-- Open orders expire by a job due at their expiresAt.
INSERT INTO jobs (kind, subject, org_id, due_at, created_at)
    SELECT 'order.expiry', id, org_id, expires_at, created_at FROM orders WHERE status IN ('DRAFT', 'APPROVED');

-- Mail waiting in the outbox is delivered by a job (the outbox keeps the
-- message and its delivery history; the job, when to try).
INSERT INTO jobs (kind, subject, org_id, due_at, created_at)
    SELECT 'mail.delivery', id, NULL, COALESCE(lease_until, created_at), created_at FROM mail_outbox WHERE status IN ('queued', 'sending');
UPDATE mail_outbox SET status = 'queued' WHERE status = 'sending';
ALTER TABLE mail_outbox DROP COLUMN lease_until;

-- One live subscription per number and organisation: two submissions
-- racing for one number cannot both win (the check before the write sees
-- neither).
DROP INDEX subscriptions_msisdn;
CREATE UNIQUE INDEX subscriptions_msisdn ON subscriptions (org_id, msisdn) WHERE status <> 'CANCELLED';
