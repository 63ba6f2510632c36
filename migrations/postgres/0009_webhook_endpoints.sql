-- Webhook endpoints: URLs that receive an organisation's events, each with
-- the event types it wants (a JSON array, "*" for all) and the secret that
-- signs deliveries to it. After a rotation the previous secret keeps
-- signing until previous_secret_until. An organisation's webhook revision
-- is the shape of its payloads; NULL is the oldest supported revision.
CREATE TABLE webhook_endpoints (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    description TEXT,
    status TEXT NOT NULL,
    disabled_reason TEXT,
    secret TEXT NOT NULL,
    previous_secret TEXT,
    previous_secret_until TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX webhook_endpoints_org_seq ON webhook_endpoints(org_id, seq);

ALTER TABLE organisations ADD COLUMN webhook_revision TEXT;
