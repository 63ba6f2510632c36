-- Idempotency keys: the first answer to each (organisation, key), kept 24
-- hours by the server's clock so that a retry replays it. A row is
-- 'running' while its request executes (until locked_until, after which a
-- crashed request's key may be taken again) and 'done' once answered.
CREATE TABLE idempotency_keys (
    org_id TEXT NOT NULL REFERENCES organisations(id),
    idempotency_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    state TEXT NOT NULL,
    locked_until TEXT NOT NULL,
    status INTEGER,
    headers TEXT,
    body TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (org_id, idempotency_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);
