-- The mobile network is one and is addressed by number and SIM, so what
-- it is addressed by is held by one organisation in the whole
-- installation: a live number until its subscription is cancelled, a SIM
-- for good (a SIM once used stays blocked). A move at the network goes
-- only to the subscription that holds its number, and usage is matched
-- through the holder of its SIM.
CREATE TABLE network_holds (
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    subscription_id TEXT NOT NULL REFERENCES subscriptions(id),
    held_since TEXT NOT NULL,
    PRIMARY KEY (kind, value)
);
CREATE INDEX network_holds_subscription ON network_holds(subscription_id);

-- Where two organisations' data share a number or a SIM (possible before
-- this migration) the earliest holds it; the other's subscription is
-- refused every move at the network (409 number_not_held).
INSERT INTO network_holds (kind, value, org_id, subscription_id, held_since)
    SELECT 'msisdn', msisdn, org_id, id, created_at FROM subscriptions WHERE status <> 'CANCELLED' ORDER BY seq
    ON CONFLICT DO NOTHING;
INSERT INTO network_holds (kind, value, org_id, subscription_id, held_since)
    SELECT 'iccid', iccid, org_id, subscription_id, created_at FROM sims ORDER BY seq
    ON CONFLICT DO NOTHING;
