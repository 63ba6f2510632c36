-- A port-in's secrets (the US losing carrier's transfer PIN and the
-- customer's account number there) are write-only: apart from the details
-- that are shown, sealed under the master key (src/store/port_in_secrets.rs),
-- a porting's by its id, an order line's by "order:{order id}:{line}";
-- kept until the port ends or the order closes.
CREATE TABLE port_in_secrets (
    id TEXT NOT NULL PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organisations (id),
    secrets TEXT NOT NULL
);

-- Changes to stored data made once, by the server at its start, where SQL
-- alone cannot (sealing needs the master key): each one's name, when done.
CREATE TABLE data_fixes (
    name TEXT NOT NULL PRIMARY KEY,
    done_at TEXT NOT NULL
);
