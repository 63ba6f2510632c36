//! Users and the customers they act for.

use super::customers::IdOrRef;
use super::{Cursor, ListQuery, Page, Store, Tx, json_col, like_pattern, parse_ts, parse_uuid, state_col, ts};
use crate::error::Result;
use crate::kinds::CustomerRole;
use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row};
use std::collections::{BTreeMap, HashMap};
use uuid::Uuid;

#[derive(Debug, Clone)]
pub struct UserRow {
    pub id: Uuid,
    pub org: Uuid,
    pub name: String,
    pub email: String,
    /// a new address, waiting for a sign-in with it to confirm it
    pub pending_email: Option<String>,
    pub msisdn: Option<String>,
    pub identity: Option<String>,
    pub reference_id: Option<String>,
    pub metadata: Option<BTreeMap<String, String>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Default)]
pub struct UserFilter {
    pub text: Option<String>,
    /// users acting for any of these customers
    pub customers: Option<Vec<Uuid>>,
    /// only users sharing a customer with this user (a bearer token's user)
    pub visible_to: Option<Uuid>,
}

const COLUMNS: &str = "seq, id, org_id, name, email, pending_email, msisdn, identity, reference_id, metadata, created_at, updated_at";

fn from_row(r: &AnyRow) -> Result<(i64, UserRow)> {
    Ok((
        r.try_get("seq")?,
        UserRow {
            id: parse_uuid(&r.try_get::<String, _>("id")?)?,
            org: parse_uuid(&r.try_get::<String, _>("org_id")?)?,
            name: r.try_get("name")?,
            email: r.try_get("email")?,
            pending_email: r.try_get("pending_email")?,
            msisdn: r.try_get("msisdn")?,
            identity: r.try_get("identity")?,
            reference_id: r.try_get("reference_id")?,
            metadata: json_col(r, "metadata")?,
            created_at: parse_ts(&r.try_get::<String, _>("created_at")?)?,
            updated_at: parse_ts(&r.try_get::<String, _>("updated_at")?)?,
        },
    ))
}

/// Emails are unique per organisation regardless of case.
pub fn email_key(email: &str) -> String {
    email.trim().to_lowercase()
}

/// A value only one user of an organisation may hold.
enum UserKey {
    Email(String),
    Reference(String),
}

/// A user's grants as stored: the support flag and the role at each
/// customer.
#[derive(Debug, Clone)]
pub struct UserGrants {
    pub support: bool,
    pub roles: Vec<(Uuid, CustomerRole)>,
    /// tokens issued before this are no longer accepted (see
    /// `redeem_challenge`)
    pub sessions_from: Option<DateTime<Utc>>,
}

impl Store {
    pub async fn insert_user(tx: &mut Tx, u: &UserRow) -> Result<()> {
        tx.execute(
            sqlx::query(
                "INSERT INTO users (id, org_id, name, email, email_key, msisdn, identity, reference_id, metadata, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
            )
            .bind(u.id.to_string())
            .bind(u.org.to_string())
            .bind(&u.name)
            .bind(&u.email)
            .bind(email_key(&u.email))
            .bind(&u.msisdn)
            .bind(&u.identity)
            .bind(&u.reference_id)
            .bind(u.metadata.as_ref().map(|m| serde_json::to_string(m).expect("JSON")))
            .bind(ts(u.created_at))
            .bind(ts(u.updated_at)),
        )
        .await?;
        Ok(())
    }

    pub async fn update_user(tx: &mut Tx, u: &UserRow) -> Result<()> {
        tx.execute(
            sqlx::query(
                "UPDATE users SET name = $1, email = $2, email_key = $3, msisdn = $4, metadata = $5, updated_at = $6,
                   pending_email = $9, pending_email_key = $10
                 WHERE id = $7 AND org_id = $8",
            )
            .bind(&u.name)
            .bind(&u.email)
            .bind(email_key(&u.email))
            .bind(&u.msisdn)
            .bind(u.metadata.as_ref().map(|m| serde_json::to_string(m).expect("JSON")))
            .bind(ts(u.updated_at))
            .bind(u.id.to_string())
            .bind(u.org.to_string())
            .bind(&u.pending_email)
            .bind(u.pending_email.as_deref().map(email_key)),
        )
        .await?;
        Ok(())
    }

    pub async fn user(&self, org: Uuid, key: &IdOrRef<'_>) -> Result<Option<UserRow>> {
        let (col, val) = key.column();
        let row = sqlx::query(AssertSqlSafe(format!("SELECT {COLUMNS} FROM users WHERE org_id = $1 AND {col} = $2")))
            .bind(org.to_string())
            .bind(val)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(from_row).transpose()?.map(|(_, u)| u))
    }

    /// Whether another user of `org` than `except` signs in with `email`.
    pub async fn user_email_taken(&self, org: Uuid, email: &str, except: Option<Uuid>) -> Result<bool> {
        self.user_taken(org, UserKey::Email(email_key(email)), except).await
    }

    /// Whether another user of `org` than `except` has this referenceId.
    pub async fn user_reference_taken(&self, org: Uuid, reference_id: &str, except: Option<Uuid>) -> Result<bool> {
        self.user_taken(org, UserKey::Reference(reference_id.to_string()), except).await
    }

    async fn user_taken(&self, org: Uuid, key: UserKey, except: Option<Uuid>) -> Result<bool> {
        let (sql, value) = match key {
            // an address another user waits to confirm is theirs too
            UserKey::Email(v) => ("SELECT id FROM users WHERE org_id = $1 AND (email_key = $2 OR pending_email_key = $2) AND id <> $3", v),
            UserKey::Reference(v) => ("SELECT id FROM users WHERE org_id = $1 AND reference_id = $2 AND id <> $3", v),
        };
        let row = sqlx::query(sql).bind(org.to_string()).bind(value).bind(except.map(|u| u.to_string()).unwrap_or_default()).fetch_optional(&self.pool).await?;
        Ok(row.is_some())
    }

    pub async fn users(&self, org: Uuid, f: &UserFilter, after: Option<Cursor>, limit: usize) -> Result<Page<UserRow>> {
        let mut q = ListQuery::new(format!("SELECT {COLUMNS} FROM users WHERE org_id = $1 AND seq > $2"));
        if let Some(t) = &f.text {
            q.condition(like_pattern(t), |p| format!("(LOWER(name) LIKE {p} ESCAPE '\\' OR email_key LIKE {p} ESCAPE '\\')"));
        }
        if let Some(customers) = &f.customers {
            q.list_condition(customers.iter().map(Uuid::to_string), |list| format!("id IN (SELECT user_id FROM customer_users WHERE customer_id IN ({list}))"));
        }
        if let Some(viewer) = f.visible_to {
            // themselves, and every user of a customer they are assigned to
            q.condition(viewer.to_string(), |p| {
                format!(
                    "(id = {p} OR id IN (SELECT user_id FROM customer_users WHERE customer_id IN \
                     (SELECT customer_id FROM customer_users WHERE user_id = {p})))"
                )
            });
        }
        let rows = q.fetch(&self.pool, org, after, "seq", limit).await?;
        Ok(Page::from_rows(rows.iter().map(from_row).collect::<Result<_>>()?, limit))
    }

    /// What a user may do in `org`: their support flag and role at each
    /// customer; None when no such user is in `org`.
    pub async fn user_grants(&self, org: Uuid, user: Uuid) -> Result<Option<UserGrants>> {
        let rows = sqlx::query(
            "SELECT u.support, u.sessions_from, cu.customer_id, cu.role FROM users u
             LEFT JOIN customer_users cu ON cu.user_id = u.id
             WHERE u.id = $1 AND u.org_id = $2",
        )
        .bind(user.to_string())
        .bind(org.to_string())
        .fetch_all(&self.pool)
        .await?;
        let Some(first) = rows.first() else { return Ok(None) };
        let sessions_from = first.try_get::<Option<String>, _>("sessions_from")?.as_deref().map(parse_ts).transpose()?;
        let mut grants = UserGrants { support: first.try_get::<i64, _>("support")? != 0, roles: vec![], sessions_from };
        for r in &rows {
            if let Some(c) = r.try_get::<Option<String>, _>("customer_id")? {
                grants.roles.push((parse_uuid(&c)?, state_col(r, "role")?));
            }
        }
        Ok(Some(grants))
    }

    /// Sets a user's support flag (an operator's decision); false when no
    /// such user exists.
    pub async fn set_user_support(&self, user: Uuid, support: bool) -> Result<bool> {
        let mut tx = self.begin().await?;
        let done = sqlx::query("UPDATE users SET support = $1 WHERE id = $2").bind(i64::from(support)).bind(user.to_string()).execute(tx.conn().await?).await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// Ends every session of `user` begun before `now` (an operator's
    /// decision); false when no such user exists.
    pub async fn end_user_sessions(&self, user: Uuid, now: DateTime<Utc>) -> Result<bool> {
        let mut tx = self.begin().await?;
        let done = sqlx::query("UPDATE users SET sessions_from = $1 WHERE id = $2").bind(ts(now)).bind(user.to_string()).execute(tx.conn().await?).await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// The customers each of `users` acts for: user -> (customer, name, role).
    pub async fn user_customers(&self, org: Uuid, users: &[Uuid]) -> Result<HashMap<Uuid, Vec<(Uuid, String, CustomerRole)>>> {
        let mut out: HashMap<Uuid, Vec<(Uuid, String, CustomerRole)>> = HashMap::new();
        if users.is_empty() {
            return Ok(out);
        }
        let rows = super::fetch_in(&self.pool, org, users.iter().map(Uuid::to_string), |list| {
            format!(
                "SELECT cu.user_id, cu.customer_id, c.name, cu.role FROM customer_users cu
                 JOIN customers c ON c.id = cu.customer_id
                 WHERE cu.org_id = $1 AND cu.user_id IN ({list}) ORDER BY c.seq"
            )
        })
        .await?;
        for r in rows {
            out.entry(parse_uuid(&r.try_get::<String, _>("user_id")?)?).or_default().push((
                parse_uuid(&r.try_get::<String, _>("customer_id")?)?,
                r.try_get("name")?,
                state_col(&r, "role")?,
            ));
        }
        Ok(out)
    }
}
