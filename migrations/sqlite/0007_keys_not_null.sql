-- no-transaction
-- SQLite lets a PRIMARY KEY that is not an INTEGER hold NULL, unless the
-- column says NOT NULL (PostgreSQL's keys always are; tests/migrations.rs
-- found these nine that did not). SQLite cannot add NOT NULL to a column,
-- so each table is rebuilt (https://sqlite.org/lang_altertable.html, the
-- twelve steps), with foreign keys off while tables are swapped, which
-- can only be switched outside a transaction; hence this migration runs
-- its own. Run again after a crash before sqlx recorded it, it rebuilds
-- the same tables once more.
PRAGMA foreign_keys = OFF;
BEGIN;

CREATE TABLE organisations_new (
    id TEXT NOT NULL PRIMARY KEY,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
);
INSERT INTO organisations_new SELECT id, name, created_at FROM organisations;
DROP TABLE organisations;
ALTER TABLE organisations_new RENAME TO organisations;

CREATE TABLE api_keys_new (
    id TEXT NOT NULL PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    key_hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    revision TEXT NOT NULL,
    read_only INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
INSERT INTO api_keys_new SELECT id, org_id, key_hash, prefix, revision, read_only, created_at, revoked_at FROM api_keys;
DROP TABLE api_keys;
ALTER TABLE api_keys_new RENAME TO api_keys;
CREATE INDEX api_keys_org ON api_keys(org_id);

CREATE TABLE server_secrets_new (
    name TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL,
    created_at TEXT NOT NULL
);
INSERT INTO server_secrets_new SELECT name, value, created_at FROM server_secrets;
DROP TABLE server_secrets;
ALTER TABLE server_secrets_new RENAME TO server_secrets;

CREATE TABLE login_challenges_new (
    nonce TEXT NOT NULL PRIMARY KEY,
    email_key TEXT NOT NULL,
    scope_org_id TEXT,
    user_id TEXT,
    user_org_id TEXT,
    code_hash TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT
);
INSERT INTO login_challenges_new
    SELECT nonce, email_key, scope_org_id, user_id, user_org_id, code_hash, attempts, created_at, expires_at, used_at FROM login_challenges;
DROP TABLE login_challenges;
ALTER TABLE login_challenges_new RENAME TO login_challenges;
CREATE INDEX login_challenges_expires ON login_challenges(expires_at);

CREATE TABLE product_groups_new (
    id TEXT NOT NULL PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    key TEXT NOT NULL,
    doc TEXT NOT NULL,
    UNIQUE (org_id, key)
);
INSERT INTO product_groups_new SELECT id, org_id, key, doc FROM product_groups;
DROP TABLE product_groups;
ALTER TABLE product_groups_new RENAME TO product_groups;

CREATE TABLE products_new (
    id TEXT NOT NULL PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    key TEXT NOT NULL,
    product_type TEXT NOT NULL,
    category TEXT NOT NULL,
    doc TEXT NOT NULL,
    UNIQUE (org_id, key)
);
INSERT INTO products_new SELECT id, org_id, key, product_type, category, doc FROM products;
DROP TABLE products;
ALTER TABLE products_new RENAME TO products;

CREATE TABLE product_catalogs_new (
    id TEXT NOT NULL PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organisations(id),
    key TEXT NOT NULL,
    doc TEXT NOT NULL,
    UNIQUE (org_id, key)
);
INSERT INTO product_catalogs_new SELECT id, org_id, key, doc FROM product_catalogs;
DROP TABLE product_catalogs;
ALTER TABLE product_catalogs_new RENAME TO product_catalogs;

CREATE TABLE customer_catalogs_new (
    customer_id TEXT NOT NULL PRIMARY KEY REFERENCES customers(id),
    org_id TEXT NOT NULL REFERENCES organisations(id),
    catalog_id TEXT NOT NULL REFERENCES product_catalogs(id)
);
INSERT INTO customer_catalogs_new SELECT customer_id, org_id, catalog_id FROM customer_catalogs;
DROP TABLE customer_catalogs;
ALTER TABLE customer_catalogs_new RENAME TO customer_catalogs;

CREATE TABLE catalog_settings_new (
    org_id TEXT NOT NULL PRIMARY KEY REFERENCES organisations(id),
    default_catalog_id TEXT REFERENCES product_catalogs(id),
    default_tax_country TEXT
);
INSERT INTO catalog_settings_new SELECT org_id, default_catalog_id, default_tax_country FROM catalog_settings;
DROP TABLE catalog_settings;
ALTER TABLE catalog_settings_new RENAME TO catalog_settings;

COMMIT;
PRAGMA foreign_keys = ON;
