-- Per-organisation bounds (`switchboard admin org set`): live number leases
-- and the numbers they hold per holder (a customer's user, or the API key
-- alone), and report runs queued at once.
ALTER TABLE organisations ADD COLUMN lease_limit BIGINT NOT NULL DEFAULT 3;
ALTER TABLE organisations ADD COLUMN leased_numbers_limit BIGINT NOT NULL DEFAULT 30;
ALTER TABLE organisations ADD COLUMN report_queue_limit BIGINT NOT NULL DEFAULT 20;
-- who holds a lease: "user:{id}" or "key:{id}" (none for leases made before)
ALTER TABLE number_leases ADD COLUMN holder TEXT;
CREATE INDEX number_leases_by_holder ON number_leases (org_id, holder);
