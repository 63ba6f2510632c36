-- The SIMs every subscription had grow into the organisation's inventory:
-- a SIM imported by the operator is AVAILABLE with no subscription until
-- one takes it (imported_at says it came from the inventory); a SIM whose
-- subscription ended is RETIRED.
ALTER TABLE sims ALTER COLUMN subscription_id DROP NOT NULL;
ALTER TABLE sims ADD COLUMN imported_at TEXT;
ALTER TABLE sims ADD COLUMN updated_at TEXT;
UPDATE sims SET updated_at = COALESCE(blocked_at, created_at);
CREATE INDEX sims_available ON sims(org_id, sim_type, status, iccid);
