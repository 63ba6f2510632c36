-- A license's billing cycles and offering changes: the currency it was
-- bought in, the months per cycle of its price (NULL: one-time), the day of
-- the month its cycles begin and the day the current one ends; an
-- offering change scheduled for later (the offering, the schedule asked
-- for, and when).
ALTER TABLE licenses ADD COLUMN currency TEXT;
ALTER TABLE licenses ADD COLUMN cycle_months INTEGER;
ALTER TABLE licenses ADD COLUMN billing_day INTEGER;
ALTER TABLE licenses ADD COLUMN renews_on TEXT;
ALTER TABLE licenses ADD COLUMN pending_offering_id TEXT;
ALTER TABLE licenses ADD COLUMN pending_offering_schedule TEXT;
ALTER TABLE licenses ADD COLUMN pending_offering_at TEXT;
-- the optimistic version of a license's moves: every write adds one (an
-- updatedAt can repeat: a renewal dated before the last write keeps it)
ALTER TABLE licenses ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
