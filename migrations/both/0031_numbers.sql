-- The organisation's number pool. A number is AVAILABLE, LEASED (held by
-- a lease until held_until), ASSIGNED (to subscription_id), QUARANTINED
-- (released by a cancelled subscription, until held_until) or
-- PORTED_OUT. A lease or a quarantine ends by the organisation's clock
-- without a write: a number whose held_until has passed is free.
CREATE TABLE numbers (
    org_id TEXT NOT NULL REFERENCES organisations (id),
    msisdn TEXT NOT NULL,
    number_type TEXT NOT NULL,
    status TEXT NOT NULL,
    subscription_id TEXT,
    lease_id TEXT,
    held_until TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (org_id, msisdn)
);
CREATE INDEX numbers_by_type ON numbers (org_id, number_type, msisdn);
CREATE INDEX numbers_by_subscription ON numbers (subscription_id);

-- A lease of numbers: its token is kept as its SHA-256 only.
CREATE TABLE number_leases (
    id TEXT NOT NULL PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organisations (id),
    token_hash TEXT NOT NULL UNIQUE,
    expires_at TEXT NOT NULL,
    used_at TEXT,
    created_at TEXT NOT NULL
);
