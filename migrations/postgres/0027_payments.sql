-- Payments: links with their hosted page, the intents that hold the
-- money, each attempt to charge, refunds, and the saved methods.

CREATE TABLE payment_intents (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organisations (id),
    customer_id TEXT NOT NULL REFERENCES customers (id),
    order_id TEXT REFERENCES orders (id),
    link_id TEXT,
    status TEXT NOT NULL,
    amount_minor BIGINT NOT NULL,
    currency TEXT NOT NULL,
    description TEXT,
    due_at TEXT,
    -- its lines as collection started (JSON), with what submitting the
    -- order created once it is submitted
    line_items TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX payment_intents_org_seq ON payment_intents (org_id, seq);

CREATE TABLE payment_links (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organisations (id),
    customer_id TEXT NOT NULL REFERENCES customers (id),
    order_id TEXT REFERENCES orders (id),
    intent_id TEXT NOT NULL REFERENCES payment_intents (id),
    -- the hosted page's address: a capability, so unguessable and unique
    token TEXT NOT NULL UNIQUE,
    -- the page's address as given out (the public URL at creation)
    hosted_url TEXT NOT NULL,
    status TEXT NOT NULL,
    provider TEXT NOT NULL,
    amount_minor BIGINT NOT NULL,
    currency TEXT NOT NULL,
    profile_id TEXT,
    save_profile BIGINT NOT NULL,
    set_default BIGINT NOT NULL,
    autopay BIGINT NOT NULL,
    description TEXT,
    return_url TEXT,
    cancel_url TEXT,
    failure_reason TEXT,
    paid BIGINT NOT NULL DEFAULT 0,
    metadata TEXT,
    expires_at TEXT NOT NULL,
    completed_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX payment_links_org_seq ON payment_links (org_id, seq);
CREATE INDEX payment_links_by_order ON payment_links (order_id);
-- an order has at most one ACTIVE link
CREATE UNIQUE INDEX payment_links_one_active ON payment_links (order_id) WHERE status = 'ACTIVE';

CREATE TABLE payment_charges (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organisations (id),
    intent_id TEXT NOT NULL REFERENCES payment_intents (id),
    status TEXT NOT NULL,
    amount_minor BIGINT NOT NULL,
    currency TEXT NOT NULL,
    provider TEXT NOT NULL,
    method_token TEXT NOT NULL,
    method_type TEXT NOT NULL,
    method_display TEXT NOT NULL,
    method_expires_on TEXT,
    profile_id TEXT,
    off_session BIGINT NOT NULL,
    failure_code TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX payment_charges_by_intent ON payment_charges (intent_id, seq);

CREATE TABLE payment_refunds (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organisations (id),
    intent_id TEXT NOT NULL REFERENCES payment_intents (id),
    charge_id TEXT NOT NULL REFERENCES payment_charges (id),
    status TEXT NOT NULL,
    amount_minor BIGINT NOT NULL,
    reason TEXT,
    failure_code TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX payment_refunds_by_intent ON payment_refunds (intent_id, seq);

CREATE TABLE payment_profiles (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organisations (id),
    customer_id TEXT NOT NULL REFERENCES customers (id),
    provider TEXT NOT NULL,
    method_type TEXT NOT NULL,
    status TEXT NOT NULL,
    display_name TEXT NOT NULL,
    token TEXT NOT NULL,
    expires_on TEXT,
    billing_details TEXT,
    metadata TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX payment_profiles_by_customer ON payment_profiles (customer_id, seq);
