-- A new sign-in address waits here until someone signs in with it, which
-- proves the address is theirs: then it replaces `email` and the user's
-- sessions end. A login for the pending address finds the user.
ALTER TABLE users ADD COLUMN pending_email TEXT;
ALTER TABLE users ADD COLUMN pending_email_key TEXT;
CREATE INDEX users_pending_email_key ON users(pending_email_key);
