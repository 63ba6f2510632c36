-- An answer showing a secret once (a webhook endpoint's signing secret, an
-- eSIM's activation code) is kept for its replay sealed under the master
-- key (src/sealing.rs), bound to its key's row, in sealed_body; its body is
-- then NULL. Answers stored before kept no secret: they stay as they are.
ALTER TABLE idempotency_keys ADD COLUMN sealed_body TEXT;
