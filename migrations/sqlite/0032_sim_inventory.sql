-- The SIMs every subscription had grow into the organisation's inventory:
-- a SIM imported by the operator is AVAILABLE with no subscription until
-- one takes it (imported_at says it came from the inventory); a SIM whose
-- subscription ended is RETIRED. SQLite cannot drop a NOT NULL, so the
-- table is rebuilt.
CREATE TABLE sims_inventory (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    iccid TEXT NOT NULL,
    subscription_id TEXT REFERENCES subscriptions(id),
    sim_type TEXT NOT NULL,
    status TEXT NOT NULL,
    activation_code TEXT,
    created_at TEXT NOT NULL,
    blocked_at TEXT,
    imported_at TEXT,
    updated_at TEXT,
    UNIQUE (org_id, iccid)
);
INSERT INTO sims_inventory (seq, org_id, iccid, subscription_id, sim_type, status, activation_code, created_at, blocked_at, updated_at)
    SELECT seq, org_id, iccid, subscription_id, sim_type, status, activation_code, created_at, blocked_at, COALESCE(blocked_at, created_at) FROM sims;
DROP TABLE sims;
ALTER TABLE sims_inventory RENAME TO sims;
CREATE INDEX sims_subscription ON sims(subscription_id);
CREATE INDEX sims_available ON sims(org_id, sim_type, status, iccid);
