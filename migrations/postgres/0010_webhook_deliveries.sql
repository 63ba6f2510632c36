-- Webhook delivery. The dispatcher (src/jobs/webhook_dispatch.rs) turns
-- each event not yet dispatched into one delivery per enabled endpoint
-- that wants its type, each with a webhook.delivery job, and marks the
-- event dispatched in the same transaction. A delivery is PENDING until an
-- attempt is acknowledged (SUCCEEDED) or its schedule of about three days
-- runs out (FAILED); a redelivery, a replay or re-enabling its endpoint
-- starts a new round of the schedule (round_started_at, round_attempts).
-- A PENDING delivery without next_attempt_at is held: its endpoint is
-- disabled. A delivery is named by its endpoint and event (its job's
-- subject is endpoint_id/event_id). Every attempt is kept, with the first
-- 1 KiB of its answer.
ALTER TABLE events ADD COLUMN dispatched_at TEXT;
CREATE INDEX events_undispatched ON events (seq) WHERE dispatched_at IS NULL;
CREATE INDEX events_org_occurred ON events (org_id, occurred_at);

-- since when every attempt to the endpoint has failed (NULL: the last
-- one succeeded, or none was made)
ALTER TABLE webhook_endpoints ADD COLUMN failing_since TEXT;

CREATE TABLE webhook_deliveries (
    seq BIGSERIAL PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
    event_id TEXT NOT NULL REFERENCES events(id),
    status TEXT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    round_started_at TEXT NOT NULL,
    round_attempts BIGINT NOT NULL DEFAULT 0,
    next_attempt_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    delivered_at TEXT,
    UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_endpoint_seq ON webhook_deliveries (endpoint_id, seq);

CREATE TABLE webhook_attempts (
    endpoint_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    number BIGINT NOT NULL,
    attempted_at TEXT NOT NULL,
    status_code BIGINT,
    latency_ms BIGINT NOT NULL,
    response_body TEXT,
    error TEXT,
    PRIMARY KEY (endpoint_id, event_id, number),
    FOREIGN KEY (endpoint_id, event_id) REFERENCES webhook_deliveries (endpoint_id, event_id) ON DELETE CASCADE
);
