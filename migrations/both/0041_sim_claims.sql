-- A move claims the inventory SIM it takes before it asks the network
-- (src/store/sims.rs): moves of other subscriptions at once pass over it,
-- each taking a SIM of its own. A claim lapses at claimed_until (a move
-- that failed or crashed leaves the SIM free again); the claimant's own
-- claim is its own again when it retries.
ALTER TABLE sims ADD COLUMN claimed_by TEXT;
ALTER TABLE sims ADD COLUMN claimed_until TEXT;
CREATE INDEX sims_claimed ON sims(claimed_by) WHERE claimed_by IS NOT NULL;
