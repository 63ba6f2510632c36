-- The SQLite twin of this migration makes nine key columns NOT NULL;
-- PostgreSQL's primary keys always were. Nothing to do here; the file
-- keeps the two folders' migrations in step.
SELECT 1;
