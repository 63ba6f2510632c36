-- A number is one organisation's in the whole installation: in at most one
-- pool (a number PORTED_OUT is no longer the pool's, and may come back to
-- another organisation by a port-in). Numbers that two pools hold today
-- are settled first: the row that is ASSIGNED, else the oldest, stays; the
-- others, not ASSIGNED to anyone, leave their pools.
DELETE FROM numbers
WHERE status <> 'ASSIGNED' AND status <> 'PORTED_OUT'
  AND EXISTS (
    SELECT 1 FROM numbers o
    WHERE o.msisdn = numbers.msisdn AND o.org_id <> numbers.org_id AND o.status <> 'PORTED_OUT'
      AND (o.status = 'ASSIGNED' OR o.created_at < numbers.created_at OR (o.created_at = numbers.created_at AND o.org_id < numbers.org_id))
  );
CREATE UNIQUE INDEX numbers_one_organisation ON numbers (msisdn) WHERE status <> 'PORTED_OUT';
