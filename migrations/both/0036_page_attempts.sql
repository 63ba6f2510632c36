-- The attempts (cards or accounts tried) a hosted page took: a payment
-- link's page and a payment profile session's setup page take ten at most
-- (card testing).
ALTER TABLE payment_links ADD COLUMN attempts BIGINT NOT NULL DEFAULT 0;
ALTER TABLE payment_profile_sessions ADD COLUMN attempts BIGINT NOT NULL DEFAULT 0;
