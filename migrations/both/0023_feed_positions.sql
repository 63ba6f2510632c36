-- How far the server has read each feed of the mobile network (its usage
-- records), so that every instance, and the next start, goes on from
-- there instead of reading the feed again from its start. It only moves
-- forward; a record read twice is recorded once (by its id).
CREATE TABLE feed_positions (
    feed TEXT NOT NULL PRIMARY KEY,
    position BIGINT NOT NULL,
    updated_at TEXT NOT NULL
);
