-- Invoices: what a customer owes for one billing day. A DRAFT collects
-- the day's lines (one DRAFT per customer, day and currency); finalised,
-- it is numbered from invoice_numbers in the same transaction, so the
-- numbers of an organisation have no gaps.
CREATE TABLE invoices (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organisations (id),
    customer_id TEXT NOT NULL REFERENCES customers (id),
    billing_date TEXT NOT NULL,
    currency TEXT NOT NULL,
    status TEXT NOT NULL,
    -- each write adds one: a write guarded by it misses when another wrote first
    version BIGINT NOT NULL,
    number TEXT,
    -- the sums of its lines' (invoice_lines), set when it is finalised
    subtotal_minor BIGINT NOT NULL,
    discount_minor BIGINT NOT NULL,
    tax_minor BIGINT NOT NULL,
    total_minor BIGINT NOT NULL,
    billing_method TEXT,
    auto_pay BIGINT,
    finalized_at TEXT,
    due_at TEXT,
    paid_at TEXT,
    paid_method TEXT,
    paid_reference TEXT,
    intent_id TEXT,
    -- autopay's failed charges, and when the next is tried
    attempts BIGINT NOT NULL DEFAULT 0,
    next_attempt_at TEXT,
    -- dunning's steps, set when it is finalised by the organisation's
    -- settings then: when the customer's subscriptions are suspended for
    -- it, and when it is given up
    suspend_at TEXT,
    give_up_at TEXT,
    -- when dunning suspended the customer's subscriptions for it
    suspended_at TEXT,
    closed_at TEXT,
    -- delivery by the invoice.due job: when the invoice went out by its
    -- billing method, and how many of autopay's failures were mailed
    delivered_at TEXT,
    mailed_attempts BIGINT NOT NULL DEFAULT 0,
    -- the address of its machine-readable document (a download's token)
    document_token TEXT UNIQUE,
    document_url TEXT,
    -- when something of it falls due next (the invoice.due job's time)
    wake_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX invoices_org_seq ON invoices (org_id, seq);
CREATE INDEX invoices_by_customer_day ON invoices (org_id, customer_id, billing_date);
CREATE UNIQUE INDEX invoices_one_draft ON invoices (org_id, customer_id, billing_date, currency) WHERE status = 'DRAFT';
CREATE INDEX invoices_wake ON invoices (org_id, wake_at);
-- the counter's backstop: a number is never given twice
CREATE UNIQUE INDEX invoices_number ON invoices (org_id, number);

-- an invoice's lines, each written (appended, never rewritten) in the
-- transaction of what it bills
CREATE TABLE invoice_lines (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    invoice_id TEXT NOT NULL REFERENCES invoices (id),
    org_id TEXT NOT NULL,
    line TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX invoice_lines_by_invoice ON invoice_lines (invoice_id, seq);

CREATE TABLE invoice_numbers (
    org_id TEXT NOT NULL PRIMARY KEY REFERENCES organisations (id),
    last BIGINT NOT NULL
);

-- dunning's settings: days after an invoice's dueAt before the customer's
-- subscriptions are suspended, and before it is given up as uncollectible
ALTER TABLE organisations ADD COLUMN dunning_suspend_days BIGINT NOT NULL DEFAULT 14;
ALTER TABLE organisations ADD COLUMN dunning_uncollectible_days BIGINT NOT NULL DEFAULT 60;

-- the invoice a subscription is SUSPENDED for (dunning restores only those)
ALTER TABLE subscriptions ADD COLUMN suspended_for_invoice TEXT;
CREATE INDEX subscriptions_suspended_for ON subscriptions (suspended_for_invoice);

ALTER TABLE payment_intents ADD COLUMN invoice_id TEXT;
CREATE INDEX payment_intents_by_invoice ON payment_intents (invoice_id);

-- a payment link collects an order's initial invoice or an invoice
ALTER TABLE payment_links ADD COLUMN invoice_id TEXT;
CREATE UNIQUE INDEX payment_links_one_active_per_invoice ON payment_links (invoice_id) WHERE status = 'ACTIVE';
