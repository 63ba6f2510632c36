-- Refresh tokens (src/store/refresh_tokens.rs): a login's session is a
-- family of them, each used once. Only a keyed hash of a token is kept.
-- Using one again revokes its family (revoked_at on every member); a
-- family begun before its user's sessions_from is over.
CREATE TABLE refresh_tokens (
    token_hash TEXT NOT NULL PRIMARY KEY,
    family_id TEXT NOT NULL,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    user_id TEXT NOT NULL REFERENCES users(id),
    -- when the family's login was (sessions_from ends families begun before)
    family_started_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT,
    revoked_at TEXT
);
CREATE INDEX refresh_tokens_family ON refresh_tokens(family_id);
CREATE INDEX refresh_tokens_expires ON refresh_tokens(expires_at);
