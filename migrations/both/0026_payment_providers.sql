-- The payment providers an organisation does not collect with (both are
-- enabled unless the operator disabled one: `admin org providers`).
CREATE TABLE disabled_payment_providers (
    org_id TEXT NOT NULL REFERENCES organisations (id),
    provider TEXT NOT NULL,
    disabled_at TEXT NOT NULL,
    PRIMARY KEY (org_id, provider)
);

-- The sandbox payment providers' own ledger: what a real provider keeps on
-- its side. Written in transactions of its own, never in a request's, so
-- that a charge made and a crash before Switchboard recorded its outcome
-- leaves the charge here, found again by its attempt id (the idempotency
-- key) and never made twice. No card or account number is kept: a method
-- is its test value's behaviour and what may be shown of it.
CREATE TABLE sandbox_payment_methods (
    provider TEXT NOT NULL,
    token TEXT NOT NULL,
    kind TEXT NOT NULL,
    behaviour TEXT NOT NULL,
    display_name TEXT NOT NULL,
    expires_on TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (provider, token)
);

CREATE TABLE sandbox_payment_charges (
    attempt_id TEXT NOT NULL PRIMARY KEY,
    provider TEXT NOT NULL,
    token TEXT NOT NULL,
    amount_minor BIGINT NOT NULL,
    currency TEXT NOT NULL,
    status TEXT NOT NULL,
    failure_code TEXT,
    -- a SEPA debit settles at this time (the organisation's) to settles_to
    settles_at TEXT,
    settles_to TEXT,
    settles_code TEXT,
    -- what its refunds have given back (never more than amount_minor)
    refunded_minor BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE sandbox_payment_refunds (
    refund_id TEXT NOT NULL PRIMARY KEY,
    attempt_id TEXT NOT NULL,
    amount_minor BIGINT NOT NULL,
    status TEXT NOT NULL,
    failure_code TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX sandbox_payment_refunds_by_charge ON sandbox_payment_refunds (attempt_id);
