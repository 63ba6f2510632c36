-- The license lifecycle: PENDING -> ACTIVE (provisioned, or with its
-- subscription) -> PAUSED / BLOCKED with its subscription -> CANCELLED
-- (asked for, now or at a later date, or with its subscription).
ALTER TABLE licenses ADD COLUMN activated_at TEXT;
ALTER TABLE licenses ADD COLUMN paused_at TEXT;
ALTER TABLE licenses ADD COLUMN cancelled_at TEXT;
ALTER TABLE licenses ADD COLUMN ended_at TEXT;
-- a move scheduled for later: the state it moves to, and when
ALTER TABLE licenses ADD COLUMN pending_status TEXT;
ALTER TABLE licenses ADD COLUMN pending_at TEXT;
-- free properties and the client's metadata (JSON objects)
ALTER TABLE licenses ADD COLUMN details TEXT;
ALTER TABLE licenses ADD COLUMN metadata TEXT;
CREATE INDEX licenses_subscription ON licenses(subscription_id);
