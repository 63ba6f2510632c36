-- Which server instance holds an item's claim (a random id per start): an
-- instance that shuts down releases its own claims at once, so other
-- instances take its items without waiting out the lease.
ALTER TABLE jobs ADD COLUMN claimed_by TEXT;
CREATE INDEX jobs_claimed_by ON jobs (claimed_by) WHERE claimed_by IS NOT NULL;
