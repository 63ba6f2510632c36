-- Email login, access tokens, user permissions and outgoing mail.

-- A support user reads every customer of the organisation and changes nothing.
ALTER TABLE users ADD COLUMN support INTEGER NOT NULL DEFAULT 0;
CREATE INDEX users_email_key ON users(email_key);

-- Secrets the server generates once and every instance shares (the
-- access-token signing secret when none is configured).
CREATE TABLE server_secrets (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- One row per POST /auth/email/start, whether or not a user matched
-- (user_id is then NULL), so both cases cost the same. The code is kept
-- only as a keyed hash; attempts counts verifications, 5 at most.
CREATE TABLE login_challenges (
    nonce TEXT PRIMARY KEY,
    email_key TEXT NOT NULL,
    scope_org_id TEXT,
    user_id TEXT,
    user_org_id TEXT,
    code_hash TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT
);
CREATE INDEX login_challenges_expires ON login_challenges(expires_at);

-- Outgoing mail. Without SMTP, mail stays 'queued' here and
-- `switchboard admin mail list` shows it; with SMTP a worker sends it
-- ('sending' while leased until lease_until, then 'sent' or back to
-- 'queued' with last_error).
CREATE TABLE mail_outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    to_address TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    lease_until TEXT,
    last_error TEXT,
    created_at TEXT NOT NULL,
    sent_at TEXT
);
CREATE INDEX mail_outbox_status ON mail_outbox(status, seq);
