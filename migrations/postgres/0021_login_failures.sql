-- Wrong login codes per email address, counted in the database so that
-- every instance sees one count: once an address has
-- --login-failures-per-day of them within 24 hours of the first, its
-- login is refused until those 24 hours end (a right code clears it).
CREATE TABLE login_failures (
    email_key TEXT NOT NULL PRIMARY KEY,
    failures BIGINT NOT NULL,
    since TEXT NOT NULL
);
CREATE INDEX login_failures_since ON login_failures(since);
