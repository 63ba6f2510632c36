-- What a subscription was bought at, its billing cycles, an offering change
-- scheduled for later, and its subscriber.
-- terms: {currency, price (the offering's price document as bought, or as
-- of its last offering change), bindingContract, upfrontCycles} as JSON.
-- A subscription made before this migration takes its offering's price of
-- now and its order's currency, and no upfront cycles.
ALTER TABLE subscriptions ADD COLUMN terms TEXT;
UPDATE subscriptions SET terms = json_build_object(
    'currency', (SELECT o.currency FROM orders o WHERE o.id = subscriptions.order_id),
    'price', (SELECT p.doc::jsonb -> 'price' FROM product_offerings p WHERE p.id = subscriptions.offering_id),
    'bindingContract', binding_months IS NOT NULL,
    'upfrontCycles', 0)::text;
-- billing cycles: the day of the month they begin (that of the first
-- activation), when the current one ends, and until when it is paid upfront
ALTER TABLE subscriptions ADD COLUMN billing_day BIGINT;
ALTER TABLE subscriptions ADD COLUMN renews_on TEXT;
ALTER TABLE subscriptions ADD COLUMN paid_through TEXT;
-- an offering change scheduled for later
ALTER TABLE subscriptions ADD COLUMN pending_offering_id TEXT REFERENCES product_offerings(id);
ALTER TABLE subscriptions ADD COLUMN pending_offering_schedule TEXT;
ALTER TABLE subscriptions ADD COLUMN pending_offering_at TEXT;
-- the earliest of what falls due (a scheduled move, an offering change, a
-- renewal): what the job and the reads before a list look for
ALTER TABLE subscriptions ADD COLUMN due_at TEXT;
UPDATE subscriptions SET due_at = pending_status_at;
DROP INDEX subscriptions_pending;
CREATE INDEX subscriptions_due ON subscriptions(org_id, due_at);
-- every subscription has one subscriber, from its creation
ALTER TABLE subscriptions ADD COLUMN subscriber_id TEXT;
UPDATE subscriptions SET subscriber_id = id;
CREATE UNIQUE INDEX subscriptions_subscriber ON subscriptions(org_id, subscriber_id);

-- What a subscriber was set to (absent until first set): the
-- SetSubscriberRequest as JSON.
CREATE TABLE subscribers (
    id TEXT NOT NULL PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    subscription_id TEXT NOT NULL REFERENCES subscriptions(id),
    doc TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
