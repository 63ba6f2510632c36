-- Organisations, API keys, customers, users and the event outbox.
-- Timestamps are RFC 3339 UTC text with fixed width, so they sort as text.
CREATE TABLE organisations (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    key_hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    revision TEXT NOT NULL,
    read_only BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE INDEX api_keys_org ON api_keys(org_id);

CREATE TABLE customers (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    customer_type TEXT NOT NULL,
    name TEXT NOT NULL,
    identity TEXT,
    preferred_locale TEXT NOT NULL,
    human_readable_id TEXT NOT NULL,
    reference_id TEXT,
    contact TEXT NOT NULL,
    contact_email TEXT,
    billing TEXT,
    shipping TEXT,
    contact_person_user_id TEXT,
    metadata TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (org_id, reference_id),
    UNIQUE (org_id, human_readable_id)
);
CREATE INDEX customers_org_seq ON customers(org_id, seq);

CREATE TABLE users (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    email_key TEXT NOT NULL,
    msisdn TEXT,
    identity TEXT,
    reference_id TEXT,
    metadata TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (org_id, reference_id),
    UNIQUE (org_id, email_key)
);
CREATE INDEX users_org_seq ON users(org_id, seq);

CREATE TABLE customer_users (
    org_id TEXT NOT NULL REFERENCES organisations(id),
    customer_id TEXT NOT NULL REFERENCES customers(id),
    user_id TEXT NOT NULL REFERENCES users(id),
    role TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (customer_id, user_id)
);
CREATE INDEX customer_users_user ON customer_users(user_id);

CREATE TABLE events (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    event_type TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX events_org_seq ON events(org_id, seq);
