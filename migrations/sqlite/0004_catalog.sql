-- The product catalog: groups, products, offerings, catalogs, customer
-- assignments and tax rates, loaded by `switchboard admin catalog import`.
-- Each entity is named by (org_id, key) and keeps its imported definition
-- as JSON in doc; the other columns are what queries filter and join on.
CREATE TABLE product_groups (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    key TEXT NOT NULL,
    doc TEXT NOT NULL,
    UNIQUE (org_id, key)
);

CREATE TABLE products (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    key TEXT NOT NULL,
    product_type TEXT NOT NULL,
    category TEXT NOT NULL,
    doc TEXT NOT NULL,
    UNIQUE (org_id, key)
);

CREATE TABLE product_offerings (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    key TEXT NOT NULL,
    status TEXT NOT NULL,
    product_id TEXT NOT NULL REFERENCES products(id),
    group_id TEXT REFERENCES product_groups(id),
    doc TEXT NOT NULL,
    UNIQUE (org_id, key)
);
CREATE INDEX product_offerings_org_seq ON product_offerings(org_id, seq);

CREATE TABLE product_catalogs (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    key TEXT NOT NULL,
    doc TEXT NOT NULL,
    UNIQUE (org_id, key)
);

-- Membership, in the order customers see the offerings.
CREATE TABLE product_catalog_offerings (
    catalog_id TEXT NOT NULL REFERENCES product_catalogs(id),
    offering_id TEXT NOT NULL REFERENCES product_offerings(id),
    position INTEGER NOT NULL,
    PRIMARY KEY (catalog_id, offering_id)
);

-- A customer orders from its assigned catalog, else the default one.
CREATE TABLE customer_catalogs (
    customer_id TEXT PRIMARY KEY REFERENCES customers(id),
    org_id TEXT NOT NULL REFERENCES organisations(id),
    catalog_id TEXT NOT NULL REFERENCES product_catalogs(id)
);

-- Tax rates per country: doc is the JSON array of {description, rateBasisPoints}.
CREATE TABLE tax_rates (
    org_id TEXT NOT NULL REFERENCES organisations(id),
    country TEXT NOT NULL,
    doc TEXT NOT NULL,
    PRIMARY KEY (org_id, country)
);

CREATE TABLE catalog_settings (
    org_id TEXT PRIMARY KEY REFERENCES organisations(id),
    default_catalog_id TEXT REFERENCES product_catalogs(id),
    default_tax_country TEXT
);
