-- The add-on lifecycle: PENDING -> ACTIVE (with its subscription, or at
-- first use) -> EXPIRED when its validity runs out, or CANCELLED (asked
-- for, now or at the end of its period, or with its subscription).
-- until when an ACTIVE add-on is valid (activation + the product's validityDays)
ALTER TABLE subscription_addons ADD COLUMN expires_at TEXT;
-- when a cancellation was asked for
ALTER TABLE subscription_addons ADD COLUMN cancelled_at TEXT;
-- when it became CANCELLED or EXPIRED
ALTER TABLE subscription_addons ADD COLUMN ended_at TEXT;
-- a move scheduled for later: the state it moves to, and when
ALTER TABLE subscription_addons ADD COLUMN pending_status TEXT;
ALTER TABLE subscription_addons ADD COLUMN pending_at TEXT;
