-- Usage the network reports, per subscription: each record once (its id
-- is the network's, so a record sent again changes nothing), the
-- month-long billing period it counts in (see src/domain/usage), what each
-- period adds up to with the quota thresholds it has reached, and what
-- each add-on package has given.
CREATE TABLE usage_records (
    subscription_id TEXT NOT NULL REFERENCES subscriptions(id),
    record_id TEXT NOT NULL,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    -- DATA (kilobytes), VOICE, VOICE_ILD (seconds), SMS (messages)
    kind TEXT NOT NULL,
    quantity BIGINT NOT NULL,
    -- what a VOICE_ILD call cost, in minor units of the subscription's currency
    charge_minor BIGINT NOT NULL,
    -- VOICE_ILD: the country called (ISO 3166-1 alpha-3)
    country TEXT,
    occurred_at TEXT NOT NULL,
    period_start TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    PRIMARY KEY (subscription_id, record_id)
);

CREATE TABLE usage_periods (
    subscription_id TEXT NOT NULL REFERENCES subscriptions(id),
    period_start TEXT NOT NULL,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    data_kb BIGINT NOT NULL,
    voice_seconds BIGINT NOT NULL,
    sms BIGINT NOT NULL,
    ild_seconds BIGINT NOT NULL,
    -- what calls abroad cost beyond package credit
    ild_charged_minor BIGINT NOT NULL,
    -- the quota thresholds reached, space-separated: "DATA:80 DATA:100"
    notices TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (subscription_id, period_start)
);

CREATE TABLE usage_packages (
    addon_id TEXT NOT NULL PRIMARY KEY REFERENCES subscription_addons(id),
    org_id TEXT NOT NULL REFERENCES organisations(id),
    subscription_id TEXT NOT NULL REFERENCES subscriptions(id),
    data_kb BIGINT NOT NULL,
    voice_seconds BIGINT NOT NULL,
    sms BIGINT NOT NULL,
    ild_seconds BIGINT NOT NULL,
    ild_charge_minor BIGINT NOT NULL
);

-- the network's usage names a SIM and its number
CREATE INDEX subscriptions_iccid ON subscriptions(iccid);

-- when an add-on became ACTIVE: its package is valid from then for its
-- product's validityDays
ALTER TABLE subscription_addons ADD COLUMN activated_at TEXT;
