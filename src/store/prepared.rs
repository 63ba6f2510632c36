//! The writes PostgreSQL prepares once on each connection: those nearly
//! every write request makes (its events, the idempotency key's answer)
//! and a customer's. A transaction's writes go to PostgreSQL as text in
//! one message (`pg_tx`), and text is parsed, analysed and planned on
//! every run: a quarter of PostgreSQL's time under the idempotent POST
//! (docs/performance.md). `EXECUTE sb_event(values)` runs the plan prepared
//! when the connection opened instead.
//!
//! The statements' texts are here, and their call sites use them from
//! here: a statement is run prepared when its text is one of these.

pub(super) const INSERT_EVENT: &str = "INSERT INTO events (id, org_id, event_type, occurred_at, data) VALUES ($1, $2, $3, $4, $5)";

pub(super) const INSERT_IDEMPOTENCY_KEY: &str =
    "INSERT INTO idempotency_keys (org_id, idempotency_key, fingerprint, status, headers, body, created_at, sealed_body)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";

pub(super) const INSERT_CUSTOMER: &str = "INSERT INTO customers (id, org_id, customer_type, name, identity, preferred_locale, human_readable_id,
       reference_id, contact, billing, shipping, contact_person_user_id, metadata, created_at, updated_at, contact_email)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)";

pub(super) const UPDATE_CUSTOMER: &str = "UPDATE customers SET name = $1, identity = $2, preferred_locale = $3, reference_id = $4, contact = $5,
       billing = $6, shipping = $7, contact_person_user_id = $8, metadata = $9, updated_at = $10,
       contact_email = $13
     WHERE id = $11 AND org_id = $12 AND updated_at = $14";

/// Each statement with the name it is prepared under.
const ALL: [(&str, &str); 4] =
    [("sb_event", INSERT_EVENT), ("sb_idempotency_key", INSERT_IDEMPOTENCY_KEY), ("sb_customer", INSERT_CUSTOMER), ("sb_customer_update", UPDATE_CUSTOMER)];

/// What a new connection runs before it is used (after the migrations: a
/// statement is checked against the tables as it is prepared).
pub(super) fn prepare_all() -> String {
    ALL.iter().map(|(name, sql)| format!("PREPARE {name} AS {sql};\n")).collect()
}

/// The name `sql` is prepared under, if it is one of these.
pub(super) fn name_of(sql: &str) -> Option<&'static str> {
    ALL.iter().find(|(_, s)| *s == sql).map(|(name, _)| *name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_statement_has_a_name_of_its_own() {
        let names: std::collections::HashSet<_> = super::ALL.iter().map(|(_, sql)| super::name_of(sql).unwrap()).collect();
        assert_eq!(names.len(), super::ALL.len());
        assert_eq!(super::name_of("SELECT 1"), None);
        assert!(super::prepare_all().starts_with("PREPARE sb_event AS INSERT INTO events "));
    }
}
