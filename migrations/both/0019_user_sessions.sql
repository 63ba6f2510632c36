-- When a user's sessions start over: an access token issued before this
-- moment (the server's clock, to the millisecond) is no longer accepted.
-- Set when the user's sign-in address changes; NULL: every token counts.
ALTER TABLE users ADD COLUMN sessions_from TEXT;
