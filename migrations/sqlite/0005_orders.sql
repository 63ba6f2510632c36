-- Orders and what their submission creates: subscriptions, add-ons and
-- licenses. An order's line items (each with the price it was priced at)
-- are one JSON document, line_items; pricing is derived from them.
CREATE TABLE orders (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    customer_id TEXT NOT NULL REFERENCES customers(id),
    status TEXT NOT NULL,
    currency TEXT NOT NULL,
    reference_id TEXT,
    approval_required INTEGER NOT NULL DEFAULT 0,
    line_items TEXT NOT NULL,
    metadata TEXT,
    expires_at TEXT NOT NULL,
    approved_at TEXT,
    submitted_at TEXT,
    cancelled_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (org_id, reference_id)
);
CREATE INDEX orders_org_seq ON orders(org_id, seq);
CREATE INDEX orders_expiry ON orders(status, expires_at);

CREATE TABLE subscriptions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    customer_id TEXT NOT NULL REFERENCES customers(id),
    order_id TEXT NOT NULL REFERENCES orders(id),
    offering_id TEXT NOT NULL REFERENCES product_offerings(id),
    status TEXT NOT NULL,
    subscription_type TEXT NOT NULL,
    msisdn TEXT NOT NULL,
    display_name TEXT,
    sim_type TEXT NOT NULL,
    reference_id TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (org_id, reference_id)
);
CREATE INDEX subscriptions_org_seq ON subscriptions(org_id, seq);
CREATE INDEX subscriptions_msisdn ON subscriptions(org_id, msisdn);

CREATE TABLE subscription_addons (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    subscription_id TEXT NOT NULL REFERENCES subscriptions(id),
    order_id TEXT NOT NULL REFERENCES orders(id),
    offering_id TEXT NOT NULL REFERENCES product_offerings(id),
    status TEXT NOT NULL,
    reference_id TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX subscription_addons_subscription ON subscription_addons(subscription_id);

CREATE TABLE licenses (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    customer_id TEXT NOT NULL REFERENCES customers(id),
    order_id TEXT NOT NULL REFERENCES orders(id),
    offering_id TEXT NOT NULL REFERENCES product_offerings(id),
    license_type TEXT NOT NULL,
    status TEXT NOT NULL,
    subscription_id TEXT REFERENCES subscriptions(id),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX licenses_org_seq ON licenses(org_id, seq);
