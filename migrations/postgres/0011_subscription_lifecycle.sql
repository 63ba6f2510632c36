-- The subscription lifecycle. A subscription carries what its moves set:
-- its SIM (iccid, and an eSIM's activation code), the reason given with
-- its last move, a move scheduled for later (pending_status at
-- pending_status_at: an activation the network completes later, or a
-- cancellation at a date), when it was first activated, paused, suspended,
-- blocked, cancelled and ended, and its binding contract (months chosen on
-- the order line; it ends binding_ends_on, counted from the activation).
ALTER TABLE subscriptions ADD COLUMN iccid TEXT;
ALTER TABLE subscriptions ADD COLUMN esim_activation_code TEXT;
ALTER TABLE subscriptions ADD COLUMN status_reason TEXT;
ALTER TABLE subscriptions ADD COLUMN pending_status TEXT;
ALTER TABLE subscriptions ADD COLUMN pending_status_at TEXT;
ALTER TABLE subscriptions ADD COLUMN activated_at TEXT;
ALTER TABLE subscriptions ADD COLUMN paused_at TEXT;
ALTER TABLE subscriptions ADD COLUMN suspended_at TEXT;
ALTER TABLE subscriptions ADD COLUMN blocked_at TEXT;
ALTER TABLE subscriptions ADD COLUMN cancelled_at TEXT;
ALTER TABLE subscriptions ADD COLUMN ended_at TEXT;
ALTER TABLE subscriptions ADD COLUMN binding_months BIGINT;
ALTER TABLE subscriptions ADD COLUMN binding_ends_on TEXT;
-- the moves due (before every list of subscriptions, and by the job)
CREATE INDEX subscriptions_pending ON subscriptions(org_id, pending_status_at);

-- Every SIM a subscription has had: ACTIVE while it carries the
-- subscription, BLOCKED for good once replaced (a SIM change) or ended
-- with it. An ICCID belongs to one subscription of an organisation, ever.
CREATE TABLE sims (
    seq BIGSERIAL PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    iccid TEXT NOT NULL,
    subscription_id TEXT NOT NULL REFERENCES subscriptions(id),
    sim_type TEXT NOT NULL,
    status TEXT NOT NULL,
    activation_code TEXT,
    created_at TEXT NOT NULL,
    blocked_at TEXT,
    UNIQUE (org_id, iccid)
);
CREATE INDEX sims_subscription ON sims(subscription_id);
