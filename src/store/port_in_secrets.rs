//! A port-in's secrets, the US losing carrier's transfer PIN (`passcode`)
//! and the customer's `accountNumber` there: write-only. The details that
//! are kept and shown say only that they were given (`passcodeProvided`,
//! `accountNumberLast4`); the secrets themselves are a row of their own,
//! sealed under the master key bound to it (src/sealing.rs): a porting's
//! by its id, an order line's by `order:{order id}:{line}`. They go when
//! the port ends (COMPLETED or FAILED), or the order is no longer open.
//! `seal_plain_port_in_details` moves what was stored before (once).

use super::sealed::PORT_IN_SECRETS;
use super::{Store, Tx, ts};
use crate::error::Result;
use crate::sealing::Sealing;
use serde_json::{Map, Value};
use sqlx::Row;
use sqlx::any::AnyRow;
use uuid::Uuid;

/// The fields no answer, event or report ever carries again.
const SECRET_FIELDS: [&str; 2] = ["passcode", "accountNumber"];
/// What the details show of them instead (the API's read-only fields).
pub const SHOWN_FIELDS: [&str; 2] = ["passcodeProvided", "accountNumberLast4"];

/// Takes the secrets out of `details` (an object of a port-in's details),
/// leaving in their place what may be shown: `passcodeProvided: true`,
/// `accountNumberLast4`. The secrets taken, if any. Details without
/// secrets are left as they are, so applying it twice changes nothing.
pub fn split(details: &mut Value) -> Option<Value> {
    let object = details.as_object_mut()?;
    let mut secrets = Map::new();
    for field in SECRET_FIELDS {
        if let Some(v) = object.remove(field) {
            secrets.insert(field.to_string(), v);
        }
    }
    if secrets.contains_key("passcode") {
        object.insert("passcodeProvided".into(), Value::Bool(true));
    }
    if let Some(Value::String(number)) = secrets.get("accountNumber") {
        let chars: Vec<char> = number.chars().collect();
        let last4: String = chars[chars.len().saturating_sub(4)..].iter().collect();
        object.insert("accountNumberLast4".into(), Value::String(last4));
    }
    (!secrets.is_empty()).then_some(Value::Object(secrets))
}

/// `details` with `secrets` (as `split` took them) back in, for the losing
/// carrier.
pub fn joined(details: &Value, secrets: Option<Value>) -> Value {
    let mut out = details.clone();
    if let (Some(object), Some(Value::Object(secrets))) = (out.as_object_mut(), secrets) {
        object.extend(secrets);
    }
    out
}

/// Every port-in's details within `v` (a `portIn`'s `details`, wherever a
/// subscription or an order line is: other `details`, a license's, are
/// not port-ins'), with their secrets taken out; whether there were any.
fn scrub(v: &mut Value) -> bool {
    match v {
        Value::Object(o) => {
            let mut any = false;
            if let Some(details) = o.get_mut("portIn").and_then(|p| p.get_mut("details")) {
                any |= split(details).is_some();
            }
            for (_, child) in o.iter_mut() {
                any |= scrub(child);
            }
            any
        }
        Value::Array(items) => items.iter_mut().fold(false, |any, i| scrub(i) | any),
        _ => false,
    }
}

/// The key of the secrets of order `order`'s line bringing `msisdn` (one
/// line of an order brings a number: the key follows the line however the
/// order's lines are changed).
pub fn order_line(order: Uuid, msisdn: &str) -> String {
    format!("order:{order}:{msisdn}")
}

/// `id`'s secrets from their row, if there is one, opened.
fn opened(sealing: &Sealing, id: &str, row: Option<AnyRow>) -> Result<Option<Value>> {
    let Some(row) = row else { return Ok(None) };
    let unreadable = |e: String| crate::error::Error::Internal(format!("the port-in secrets of {id}: {e}"));
    let opened = sealing.open(&PORT_IN_SECRETS.place(id), &row.try_get::<String, _>("secrets")?).map_err(|e| unreadable(e.to_string()))?;
    serde_json::from_str(&opened).map(Some).map_err(|e| unreadable(e.to_string()))
}

impl Store {
    /// Keeps `secrets` (sealed) as `id`'s of `org`, or, None, forgets them.
    pub async fn keep_port_in_secrets(tx: &mut Tx, org: Uuid, id: &str, secrets: Option<&Value>) -> Result<()> {
        tx.execute(sqlx::query("DELETE FROM port_in_secrets WHERE org_id = $1 AND id = $2").bind(org.to_string()).bind(id.to_string())).await?;
        let Some(secrets) = secrets else { return Ok(()) };
        let sealed = tx.sealing().seal(&PORT_IN_SECRETS.place(id), &secrets.to_string());
        tx.execute(sqlx::query("INSERT INTO port_in_secrets (id, org_id, secrets) VALUES ($1, $2, $3)").bind(id.to_string()).bind(org.to_string()).bind(sealed))
            .await
    }

    /// Forgets the secrets of `org`'s order `order`'s lines but those
    /// `kept` (their keys).
    pub async fn forget_order_port_in_secrets(tx: &mut Tx, org: Uuid, order: Uuid, kept: &[String]) -> Result<()> {
        let mut sql = "DELETE FROM port_in_secrets WHERE org_id = $1 AND id LIKE $2".to_string();
        if !kept.is_empty() {
            sql += &format!(" AND id NOT IN ({})", super::placeholders(3, kept.len()));
        }
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(org.to_string()).bind(format!("order:{order}:%"));
        for k in kept {
            q = q.bind(k.clone());
        }
        tx.execute(q).await
    }

    /// The secrets kept as `id`'s of `org`, as `tx` sees them, opened.
    async fn port_in_secrets_in(tx: &mut Tx, org: Uuid, id: &str) -> Result<Option<Value>> {
        let row = sqlx::query("SELECT secrets FROM port_in_secrets WHERE org_id = $1 AND id = $2")
            .bind(org.to_string())
            .bind(id.to_string())
            .fetch_optional(tx.conn().await?)
            .await?;
        opened(tx.sealing(), id, row)
    }

    /// Keeps `given` as `id`'s secrets, over those kept before: a secret
    /// given again replaces its own, the other stays.
    pub async fn add_port_in_secrets(tx: &mut Tx, org: Uuid, id: &str, given: Value) -> Result<()> {
        let mut kept = Store::port_in_secrets_in(tx, org, id).await?.unwrap_or_else(|| Value::Object(Map::new()));
        if let (Some(kept), Value::Object(given)) = (kept.as_object_mut(), given) {
            kept.extend(given);
        }
        Store::keep_port_in_secrets(tx, org, id, Some(&kept)).await
    }

    /// The secrets kept as `id`'s of `org`, opened.
    pub async fn port_in_secrets(&self, org: Uuid, id: &str) -> Result<Option<Value>> {
        let row = sqlx::query("SELECT secrets FROM port_in_secrets WHERE org_id = $1 AND id = $2")
            .bind(org.to_string())
            .bind(id.to_string())
            .fetch_optional(&self.pool)
            .await?;
        opened(&self.sealing, id, row)
    }

    /// Once per database: the secrets that port-ins, orders, events and
    /// stored answers kept in plain before they were write-only. A porting
    /// that has not ended and an open order keep theirs sealed; every other
    /// copy is erased, `passcodeProvided` and `accountNumberLast4` in its
    /// place.
    pub async fn seal_plain_port_in_details(&self, now: chrono::DateTime<chrono::Utc>) -> Result<()> {
        const FIX: &str = "port_in_secrets_write_only";
        let done = sqlx::query("SELECT 1 AS one FROM data_fixes WHERE name = $1").bind(FIX).fetch_optional(&self.pool).await?;
        if done.is_some() {
            return Ok(());
        }
        let holds = "(x LIKE '%\"passcode\"%' OR x LIKE '%\"accountNumber\"%')";
        let mut tx = self.begin().await?;
        let portings = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT id, org_id, status, details FROM portings WHERE {}", holds.replace('x', "details"))))
            .fetch_all(tx.conn().await?)
            .await?;
        for r in portings {
            let (id, org, status): (String, String, String) = (r.try_get("id")?, r.try_get("org_id")?, r.try_get("status")?);
            let mut details: Value = super::parse_json("details", r.try_get::<Option<String>, _>("details")?.as_deref())?.unwrap_or(Value::Null);
            let secrets = split(&mut details);
            let ended = status == "COMPLETED" || status == "FAILED";
            Store::keep_port_in_secrets(&mut tx, super::parse_uuid(&org)?, &id, secrets.as_ref().filter(|_| !ended)).await?;
            tx.execute(sqlx::query("UPDATE portings SET details = $1 WHERE id = $2").bind(details.to_string()).bind(id)).await?;
        }
        let orders = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT id, org_id, status, line_items FROM orders WHERE {}", holds.replace('x', "line_items"))))
            .fetch_all(tx.conn().await?)
            .await?;
        for r in orders {
            let (id, org, status): (String, String, String) = (r.try_get("id")?, r.try_get("org_id")?, r.try_get("status")?);
            let mut doc: Value = super::parse_json("line_items", Some(&r.try_get::<String, _>("line_items")?))?.unwrap_or(Value::Null);
            let open = status == "DRAFT" || status == "APPROVED";
            for line in doc.get_mut("lines").and_then(Value::as_array_mut).into_iter().flatten() {
                let msisdn = line.pointer("/subscription/msisdn").and_then(Value::as_str).unwrap_or_default().to_string();
                let Some(details) = line.pointer_mut("/subscription/portIn/details") else { continue };
                let secrets = split(details);
                Store::keep_port_in_secrets(
                    &mut tx,
                    super::parse_uuid(&org)?,
                    &order_line(super::parse_uuid(&id)?, &msisdn),
                    secrets.as_ref().filter(|_| open),
                )
                .await?;
            }
            tx.execute(sqlx::query("UPDATE orders SET line_items = $1 WHERE id = $2").bind(doc.to_string()).bind(id)).await?;
        }
        // copies in events and stored answers are erased
        for (table, keys, column) in [("events", "id, id", "data"), ("idempotency_keys", "org_id, idempotency_key", "body")] {
            let sql = format!("SELECT {keys}, {column} FROM {table} WHERE {}", holds.replace('x', column));
            for r in sqlx::query(sqlx::AssertSqlSafe(sql)).fetch_all(tx.conn().await?).await? {
                let (a, b, text): (String, String, String) = (r.try_get(0)?, r.try_get(1)?, r.try_get(2)?);
                let Ok(mut v) = serde_json::from_str::<Value>(&text) else { continue };
                if scrub(&mut v) {
                    let (ka, kb) = keys.split_once(", ").expect("two key columns");
                    let sql = format!("UPDATE {table} SET {column} = $1 WHERE {ka} = $2 AND {kb} = $3");
                    tx.execute(sqlx::query(sqlx::AssertSqlSafe(sql)).bind(v.to_string()).bind(a).bind(b)).await?;
                }
            }
        }
        // (two instances starting at once: the second finds nothing left)
        tx.execute(sqlx::query("INSERT INTO data_fixes (name, done_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING").bind(FIX).bind(ts(now))).await?;
        tx.commit().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn split_takes_the_secrets_and_leaves_what_may_be_shown_once() {
        let mut d = json!({"firstName": "Ada", "passcode": "4321", "accountNumber": "ACC-987654"});
        let secrets = split(&mut d);
        assert_eq!(d, json!({"firstName": "Ada", "passcodeProvided": true, "accountNumberLast4": "7654"}));
        assert_eq!(secrets, Some(json!({"passcode": "4321", "accountNumber": "ACC-987654"})));
        // again: nothing more to take, nothing changed
        let shown = d.clone();
        assert_eq!(split(&mut d), None);
        assert_eq!(d, shown);
        assert_eq!(joined(&d, secrets)["passcode"], "4321");
        // a short account number shows whole; none at all shows nothing
        let mut d = json!({"accountNumber": "12"});
        split(&mut d);
        assert_eq!(d, json!({"accountNumberLast4": "12"}));
        let mut d = json!({"identity": "19900101-0017"});
        assert_eq!((split(&mut d), d), (None, json!({"identity": "19900101-0017"})));
    }

    #[test]
    fn scrub_finds_details_anywhere() {
        let mut v = json!({"subscription": {"portIn": {"details": {"passcode": "1", "firstName": "A"}}},
                           "lines": [{"subscription": {"portIn": {"details": {"accountNumber": "123456"}}}}, {"license": {"details": {"passcode": "kept"}}}]});
        assert!(scrub(&mut v));
        assert!(!v["subscription"].to_string().contains("\"passcode\""));
        assert_eq!(v["lines"][0]["subscription"]["portIn"]["details"]["accountNumberLast4"], "3456");
        assert_eq!(v["lines"][1]["license"]["details"]["passcode"], "kept", "a license's details are no port-in's");
        assert!(!scrub(&mut v));
    }
}
