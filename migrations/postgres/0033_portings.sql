-- Numbers moving between this operator and another: a port-in brings a
-- number to a subscription (which runs on a temporary number of the pool
-- meanwhile), a port-out takes one away. Submitted to the losing carrier
-- by the porting.step job, with (id, submissions) as its idempotency key.
CREATE TABLE portings (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organisations (id),
    subscription_id TEXT NOT NULL REFERENCES subscriptions (id),
    msisdn TEXT NOT NULL,
    direction TEXT NOT NULL,
    status TEXT NOT NULL,
    -- the details the losing carrier checks (JSON; INBOUND only)
    details TEXT,
    -- how many times it was submitted (updated details submit it again)
    submissions BIGINT NOT NULL,
    submitted_at TEXT,
    scheduled_on TEXT,
    failure_reason TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX portings_subscription ON portings (subscription_id, seq);
-- a number is moved by one porting at a time: of two asked for at once,
-- the second's insert fails (a concurrent conflict, 409)
CREATE UNIQUE INDEX portings_open_msisdn ON portings (msisdn) WHERE status NOT IN ('COMPLETED', 'FAILED');
