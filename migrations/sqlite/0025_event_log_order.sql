-- The event log in the order its events were recorded, for those who
-- follow it (GET /events?after=...; switchboard listen). An event's seq is
-- taken when it is written, which on PostgreSQL is not the order of the
-- commits: a follower at seq 11 would never see a 10 that committed later.
-- The dispatcher, which takes every committed event once, numbers each
-- batch it takes from a counter whose row it holds until it commits, so
-- batches become visible in their numbers' order; the log's order is
-- (log_batch, seq). Events dispatched before this are batch 0.
ALTER TABLE events ADD COLUMN log_batch INTEGER;
UPDATE events SET log_batch = 0 WHERE dispatched_at IS NOT NULL;
CREATE INDEX events_org_log ON events (org_id, log_batch, seq);
CREATE TABLE event_log_batches (
    log TEXT NOT NULL PRIMARY KEY,
    batch INTEGER NOT NULL
);
INSERT INTO event_log_batches (log, batch) VALUES ('events', 0);
