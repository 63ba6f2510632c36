-- The license an add-on carries (its product names a licenseType): created
-- with the add-on, assigned to its subscription, ended with it.
ALTER TABLE subscription_addons ADD COLUMN license_id TEXT;
