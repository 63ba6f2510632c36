-- Report runs: a report over the organisation's data, written to a file
-- in the report store (a directory, or S3) by the report.run job, and
-- deleted with its file 30 days after it was asked for (report.expiry).
CREATE TABLE report_runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organisations (id),
    report_key TEXT NOT NULL,
    format TEXT NOT NULL,
    -- what it holds, as asked (JSON: from, to, customerId)
    parameters TEXT NOT NULL,
    -- the customer parameters.customerId named, resolved when asked for
    customer_id TEXT,
    status TEXT NOT NULL,
    -- where its file is in the report store, once written
    object_key TEXT,
    row_count BIGINT,
    failure_message TEXT,
    created_at TEXT NOT NULL,
    started_at TEXT,
    completed_at TEXT,
    updated_at TEXT NOT NULL
);
-- GET /reports: one report's runs, newest first
CREATE INDEX report_runs_key ON report_runs (org_id, report_key, seq);
