-- An add-on's offering change scheduled for later: the offering, the
-- ChangeSchedule asked for, and when it takes effect.
ALTER TABLE subscription_addons ADD COLUMN pending_offering_id TEXT;
ALTER TABLE subscription_addons ADD COLUMN pending_offering_schedule TEXT;
ALTER TABLE subscription_addons ADD COLUMN pending_offering_at TEXT;
