-- Payment sessions: server-to-server collection from a saved profile.
CREATE TABLE payment_sessions (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organisations (id),
    customer_id TEXT NOT NULL REFERENCES customers (id),
    order_id TEXT NOT NULL REFERENCES orders (id),
    profile_id TEXT NOT NULL REFERENCES payment_profiles (id),
    intent_id TEXT NOT NULL REFERENCES payment_intents (id),
    provider TEXT NOT NULL,
    status TEXT NOT NULL,
    amount_minor BIGINT NOT NULL,
    currency TEXT NOT NULL,
    failure_code TEXT,
    failure_reason TEXT,
    metadata TEXT,
    completed_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX payment_sessions_by_order ON payment_sessions (order_id);

ALTER TABLE payment_intents ADD COLUMN session_id TEXT;
