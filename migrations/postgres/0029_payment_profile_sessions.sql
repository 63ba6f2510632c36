-- Payment profile sessions: a setup page that saves a method without
-- charging it.
CREATE TABLE payment_profile_sessions (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organisations (id),
    customer_id TEXT NOT NULL REFERENCES customers (id),
    order_id TEXT NOT NULL REFERENCES orders (id),
    -- the setup page's address: a capability, so unguessable and unique
    token TEXT NOT NULL UNIQUE,
    hosted_url TEXT NOT NULL,
    status TEXT NOT NULL,
    provider TEXT NOT NULL,
    return_url TEXT NOT NULL,
    cancel_url TEXT,
    set_default BIGINT NOT NULL,
    profile_id TEXT REFERENCES payment_profiles (id),
    -- a method the provider asked the payer to authenticate (JSON), kept
    -- until they answer
    pending_method TEXT,
    last_failure_code TEXT,
    cancellation_reason TEXT,
    metadata TEXT,
    expires_at TEXT NOT NULL,
    completed_at TEXT,
    canceled_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
