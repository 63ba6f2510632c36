-- Sandbox organisations and their test clocks (docs/sandbox.md). An
-- organisation's time is the server's plus clock_offset_ms, which only a
-- sandbox organisation's advance moves, forward; while an advance runs the
-- work that fell due up to clock_advancing_to, that column is set.
ALTER TABLE organisations ADD COLUMN sandbox INTEGER NOT NULL DEFAULT 0;
ALTER TABLE organisations ADD COLUMN clock_offset_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE organisations ADD COLUMN clock_advanced_at TEXT;
ALTER TABLE organisations ADD COLUMN clock_advancing_to TEXT;
-- an advance runs the organisation's due work in due order, across kinds
CREATE INDEX jobs_org_due ON jobs (org_id, due_at);
