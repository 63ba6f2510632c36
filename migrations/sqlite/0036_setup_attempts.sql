-- The attempts (cards or accounts tried) a payment profile session's setup
-- page took: it takes ten at most (card testing).
ALTER TABLE payment_profile_sessions ADD COLUMN attempts BIGINT NOT NULL DEFAULT 0;
