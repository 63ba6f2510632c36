-- A key's row is now written once, with its answer, in the transaction of
-- the work it answers: no claim is committed before the work, so the claim
-- columns go. A claim an earlier version left running answers nothing; it
-- is dropped, and a retry with its key executes.
DELETE FROM idempotency_keys WHERE state <> 'done';
ALTER TABLE idempotency_keys DROP COLUMN state;
ALTER TABLE idempotency_keys DROP COLUMN locked_until;
