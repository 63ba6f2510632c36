//! Customers and the users acting for them.

use super::coalesce::Coalesced;
use super::{Backend, Cursor, ListQuery, Page, Store, Tx, like_pattern, parse_json, parse_state, parse_ts, parse_uuid, ts};
use crate::error::{Error, Result};
use crate::kinds::{BillingMethod, CustomerRole, CustomerType};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, AnyPool};
use sqlx::{AssertSqlSafe, Row};
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use uuid::Uuid;

/// A customer as stored (contact, billing and shipping as JSON documents).
#[derive(Debug, Clone)]
pub struct CustomerRow {
    pub id: Uuid,
    pub org: Uuid,
    pub customer_type: CustomerType,
    pub name: String,
    pub identity: Option<String>,
    pub preferred_locale: String,
    pub human_readable_id: String,
    pub reference_id: Option<String>,
    pub contact: Contact,
    pub billing: Option<Billing>,
    pub shipping: Option<Shipping>,
    pub contact_person_user_id: Option<Uuid>,
    pub metadata: Option<BTreeMap<String, String>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// How to reach a customer (the `contact` column).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Contact {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msisdn: Option<String>,
}

/// How a customer is billed (the `billing` column).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Billing {
    pub method: BillingMethod,
    pub currency: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<Address>,
    #[serde(default)]
    pub auto_pay: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_payment_profile_id: Option<String>,
}

/// Where a customer's goods go (the `shipping` column).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Shipping {
    pub name: String,
    pub address: Address,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msisdn: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// A postal address, in a billing or a shipping document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Address {
    pub street1: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub street2: Option<String>,
    pub zip: String,
    pub city: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    pub country: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention: Option<String>,
}

#[derive(Debug, Default)]
pub struct CustomerFilter {
    pub text: Option<String>,
    pub customer_type: Option<CustomerType>,
    /// only customers this user is assigned to (a bearer token's user)
    pub visible_to: Option<Uuid>,
}

const COLUMNS: &str = "seq, id, org_id, customer_type, name, identity, preferred_locale, human_readable_id, \
     reference_id, contact, billing, shipping, contact_person_user_id, metadata, created_at, updated_at";

/// What `with_users` adds to a customer's columns: the link's.
const LINK_COLUMNS: [&str; 4] = ["link_user", "link_name", "link_role", "link_seq"];

/// SQLite only: the rows of `rows` (customer and link columns) as one row,
/// `page`, a JSON array of an object per row, in their order. sqlx's SQLite
/// driver hands each row from SQLite's thread to the request as a message
/// of its own and converts each row and its columns to its `Any` form; one
/// row instead of 101 took a list page from 0.9 to 1.4-1.6 times the
/// baseline's. (On PostgreSQL, whose rows stream over one connection, the
/// JSON made its pages slower: 0.6 times.)
fn as_one_json_row(rows: &str) -> String {
    let pairs: Vec<String> = COLUMNS.split(", ").chain(LINK_COLUMNS).map(|c| format!("'{c}', {c}")).collect();
    format!("SELECT json_group_array(json_object({}) ORDER BY seq, link_seq) AS page FROM ({rows}) r", pairs.join(", "))
}

fn from_row(r: &AnyRow) -> Result<(i64, CustomerRow)> {
    Ok((r.try_get("seq")?, customer_of(&row_text(r))?))
}

/// A column's text by name (None for NULL), borrowed from where it was read.
type Text<'a> = dyn Fn(&str) -> Result<Option<&'a str>> + 'a;

/// A database row's columns as `Text`.
fn row_text<'a>(r: &'a AnyRow) -> impl Fn(&str) -> Result<Option<&'a str>> + 'a {
    move |col: &str| -> Result<Option<&'a str>> { Ok(r.try_get::<Option<&str>, _>(col)?) }
}

/// A customer from the text of its columns (`text(col)`, None for NULL):
/// a database row's, or one object of a page read as JSON. The text is
/// borrowed: a page reads 1,600 columns.
fn customer_of(text: &Text) -> Result<CustomerRow> {
    let need = |col: &str| text(col)?.ok_or_else(|| Error::Internal(format!("customers.{col} is NULL")));
    let owned = |col: &str| Ok::<_, Error>(text(col)?.map(str::to_string));
    Ok(CustomerRow {
        id: parse_uuid(need("id")?)?,
        org: parse_uuid(need("org_id")?)?,
        customer_type: parse_state("customer_type", need("customer_type")?)?,
        name: need("name")?.to_string(),
        identity: owned("identity")?,
        preferred_locale: need("preferred_locale")?.to_string(),
        human_readable_id: need("human_readable_id")?.to_string(),
        reference_id: owned("reference_id")?,
        contact: parse_json("contact", Some(need("contact")?))?.ok_or_else(|| Error::Internal("a customer without contact".into()))?,
        billing: parse_json("billing", text("billing")?)?,
        shipping: parse_json("shipping", text("shipping")?)?,
        contact_person_user_id: text("contact_person_user_id")?.map(parse_uuid).transpose()?,
        metadata: parse_json("metadata", text("metadata")?)?,
        created_at: parse_ts(need("created_at")?)?,
        updated_at: parse_ts(need("updated_at")?)?,
    })
}

/// The contact email, kept in its own column for the list's text filter.
fn contact_email(c: &CustomerRow) -> Option<String> {
    c.contact.email.as_ref().map(|e| e.to_lowercase())
}

fn json_text<T: serde::Serialize>(v: &Option<T>) -> Option<String> {
    v.as_ref().map(|v| serde_json::to_string(v).expect("JSON"))
}

impl Store {
    pub async fn insert_customer(tx: &mut Tx, c: &CustomerRow) -> Result<()> {
        tx.execute(
            sqlx::query(super::prepared::INSERT_CUSTOMER)
                .bind(c.id.to_string())
                .bind(c.org.to_string())
                .bind(c.customer_type.stored())
                .bind(&c.name)
                .bind(&c.identity)
                .bind(&c.preferred_locale)
                .bind(&c.human_readable_id)
                .bind(&c.reference_id)
                .bind(json_text(&Some(&c.contact)))
                .bind(json_text(&c.billing))
                .bind(json_text(&c.shipping))
                .bind(c.contact_person_user_id.map(|u| u.to_string()))
                .bind(json_text(&c.metadata))
                .bind(ts(c.created_at))
                .bind(ts(c.updated_at))
                .bind(contact_email(c)),
        )
        .await?;
        Ok(())
    }

    /// Writes `c` over the stored customer if it has not changed since it
    /// was read (`read_at`: its `updated_at` then), as `tx` sees it; false
    /// when another write came first (read it again in `tx` and retry).
    pub async fn update_customer(tx: &mut Tx, c: &CustomerRow, read_at: DateTime<Utc>) -> Result<bool> {
        let done = sqlx::query(super::prepared::UPDATE_CUSTOMER)
            .bind(&c.name)
            .bind(&c.identity)
            .bind(&c.preferred_locale)
            .bind(&c.reference_id)
            .bind(json_text(&Some(&c.contact)))
            .bind(json_text(&c.billing))
            .bind(json_text(&c.shipping))
            .bind(c.contact_person_user_id.map(|u| u.to_string()))
            .bind(json_text(&c.metadata))
            .bind(ts(c.updated_at))
            .bind(c.id.to_string())
            .bind(c.org.to_string())
            .bind(contact_email(c))
            .bind(ts(read_at))
            .execute(tx.conn().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The customer `id` of `org` with its users, as `tx` sees it.
    pub async fn customer_in(tx: &mut Tx, org: Uuid, id: Uuid) -> Result<Option<(CustomerRow, Vec<Link>)>> {
        Ok(customers_with_users(tx.conn().await?, org, "id", vec![id.to_string()]).await?.into_values().next())
    }

    /// A customer of `org` by internal id or by reference id.
    pub async fn customer(&self, org: Uuid, key: &IdOrRef<'_>) -> Result<Option<CustomerRow>> {
        let (col, val) = key.column();
        let row = sqlx::query(AssertSqlSafe(format!("SELECT {COLUMNS} FROM customers WHERE org_id = $1 AND {col} = $2")))
            .bind(org.to_string())
            .bind(val)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(from_row).transpose()?.map(|(_, c)| c))
    }

    /// A customer of `org` with the users acting for it (user, name, role):
    /// one query, shared with the lookups by id running at the same time
    /// (see `coalesce`).
    pub async fn customer_with_users(&self, org: Uuid, key: &IdOrRef<'_>) -> Result<Option<(CustomerRow, Vec<Link>)>> {
        match key {
            IdOrRef::Id(id) => self.customers_by_id.get(org, *id).await,
            _ => {
                let (col, val) = key.column();
                Ok(customers_with_users(&mut *self.pool.acquire().await?, org, col, vec![val]).await?.into_values().next())
            }
        }
    }

    /// Whether a customer of `org` has this human-readable id (concurrent
    /// checks share one query).
    pub async fn human_readable_id_taken(&self, org: Uuid, id: &str) -> Result<bool> {
        Ok(self.human_readable_ids.get(org, id.to_string()).await?.is_some())
    }

    /// A page of customers, each with the users acting for it: one query
    /// (the page, and its customers' users joined to it).
    pub async fn customers(&self, org: Uuid, f: &CustomerFilter, after: Option<Cursor>, limit: usize) -> Result<Page<(CustomerRow, Vec<Link>)>> {
        let mut q = ListQuery::new(format!("SELECT {COLUMNS} FROM customers WHERE org_id = $1 AND seq > $2"));
        if let Some(t) = &f.text {
            q.condition(like_pattern(t), |p| {
                format!("(LOWER(name) LIKE {p} ESCAPE '\\' OR LOWER(contact_email) LIKE {p} ESCAPE '\\' OR LOWER(human_readable_id) LIKE {p} ESCAPE '\\')")
            });
        }
        if let Some(t) = &f.customer_type {
            q.eq("customer_type", t.stored().to_string());
        }
        q.visible_to("id", f.visible_to);
        let sqlite = self.backend == Backend::Sqlite;
        let rows = q
            .fetch_within(&self.pool, org, after, "seq", limit, |page| {
                let rows = with_users(&format!("({page})"), "", "c.seq, lu.seq");
                if sqlite { as_one_json_row(&rows) } else { rows }
            })
            .await?;
        let mut page: Vec<(i64, (CustomerRow, Vec<Link>))> = vec![];
        if sqlite {
            let json: Option<String> = rows.first().map(|r| r.try_get("page")).transpose()?.flatten();
            let objects: Vec<serde_json::Map<String, serde_json::Value>> =
                json.map(|j| serde_json::from_str(&j).map_err(|e| Error::Internal(format!("a customer page: {e}")))).transpose()?.unwrap_or_default();
            for o in &objects {
                let seq = o.get("seq").and_then(serde_json::Value::as_i64).ok_or_else(|| Error::Internal("a customer page row without seq".into()))?;
                add_page_row(&mut page, seq, &|col: &str| -> Result<Option<&str>> { Ok(o.get(col).and_then(serde_json::Value::as_str)) })?;
            }
        } else {
            for r in &rows {
                add_page_row(&mut page, r.try_get("seq")?, &row_text(r))?;
            }
        }
        Ok(Page::from_rows(page, limit))
    }

    pub async fn link_user(tx: &mut Tx, org: Uuid, customer: Uuid, user: Uuid, role: CustomerRole, now: DateTime<Utc>) -> Result<()> {
        tx.execute(
            sqlx::query("INSERT INTO customer_users (org_id, customer_id, user_id, role, created_at) VALUES ($1, $2, $3, $4, $5)")
                .bind(org.to_string())
                .bind(customer.to_string())
                .bind(user.to_string())
                .bind(role.stored())
                .bind(ts(now)),
        )
        .await?;
        Ok(())
    }
}

/// Customers of `org` whose `col` is one of `vals`, each with the users
/// acting for it, by that column's value: one query (a LEFT JOIN). The
/// organisation is matched as an expression (`|| ''`) so that SQLite's
/// planner looks rows up by `col`'s unique index rather than scanning the
/// organisation's rows, which it otherwise does for a list of values.
/// The customers of `from` (a table or a subquery, as `c`) that `filter`
/// keeps, with the users acting for each (`link_user`, `link_name`,
/// `link_role`; null for a customer without users), ordered by `order`.
fn with_users(from: &str, filter: &str, order: &str) -> String {
    let columns: Vec<String> = COLUMNS.split(", ").map(|c| format!("c.{c}")).collect();
    format!(
        "SELECT {}, cu.user_id AS link_user, lu.name AS link_name, cu.role AS link_role, lu.seq AS link_seq
         FROM {from} c
         LEFT JOIN customer_users cu ON cu.org_id = c.org_id AND cu.customer_id = c.id
         LEFT JOIN users lu ON lu.id = cu.user_id
         {filter} ORDER BY {order}",
        columns.join(", ")
    )
}

/// A `with_users` row of a page (`text` as `customer_of`'s): a customer's
/// rows are consecutive, one per user or one without.
fn add_page_row(page: &mut Vec<(i64, (CustomerRow, Vec<Link>))>, seq: i64, text: &Text) -> Result<()> {
    if page.last().is_none_or(|(s, _)| *s != seq) {
        page.push((seq, (customer_of(text)?, vec![])));
    }
    match page.last_mut() {
        Some((_, (_, links))) => add_link(links, text),
        None => Ok(()),
    }
}

/// The user of a `with_users` row, if it names one (`text` as `customer_of`'s).
fn add_link(links: &mut Vec<Link>, text: &Text) -> Result<()> {
    if let Some(user) = text("link_user")? {
        let need = |col: &str| text(col)?.ok_or_else(|| Error::Internal(format!("a link without {col}")));
        links.push((parse_uuid(user)?, need("link_name")?.to_string(), parse_state("link_role", need("link_role")?)?));
    }
    Ok(())
}

/// `UPDATE_CUSTOMER`'s values ($1 to $13) from `c`.
async fn customers_with_users(conn: &mut AnyConnection, org: Uuid, col: &str, vals: Vec<String>) -> Result<HashMap<String, (CustomerRow, Vec<Link>)>> {
    let rows =
        super::fetch_in(conn, org, vals, |list| with_users("customers", &format!("WHERE c.org_id || '' = $1 AND c.{col} IN ({list})"), "lu.seq")).await?;
    let mut found: HashMap<String, (CustomerRow, Vec<Link>)> = HashMap::new();
    for r in rows {
        let (_, links) = match found.entry(r.try_get(col)?) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert((from_row(&r)?.1, vec![])),
        };
        add_link(links, &row_text(&r))?;
    }
    Ok(found)
}

/// The coalesced lookup of customers by id, with their users.
pub(super) type CustomersById = Arc<Coalesced<Uuid, Uuid, (CustomerRow, Vec<Link>)>>;

pub(super) fn customers_by_id(pool: AnyPool) -> CustomersById {
    Coalesced::new(
        pool,
        Arc::new(|org: Uuid, ids: Vec<Uuid>, mut conn| {
            Box::pin(async move {
                let found = async {
                    let found = customers_with_users(&mut conn, org, "id", ids.iter().map(Uuid::to_string).collect()).await?;
                    found.into_iter().map(|(id, v)| Ok((parse_uuid(&id)?, v))).collect()
                }
                .await;
                (conn, found)
            })
        }),
    )
}

/// The coalesced check of human-readable ids in use.
pub(super) type HumanReadableIds = Arc<Coalesced<Uuid, String, ()>>;

pub(super) fn human_readable_ids(pool: AnyPool) -> HumanReadableIds {
    Coalesced::new(
        pool,
        Arc::new(|org: Uuid, ids: Vec<String>, mut conn| {
            Box::pin(async move {
                let found = async {
                    let rows = super::fetch_in(&mut *conn, org, ids, |list| {
                        format!("SELECT human_readable_id FROM customers WHERE org_id = $1 AND human_readable_id IN ({list})")
                    })
                    .await?;
                    rows.iter().map(|r| Ok((r.try_get("human_readable_id")?, ()))).collect()
                }
                .await;
                (conn, found)
            })
        }),
    )
}

/// One link of a customer and a user, seen from one side: the other
/// side's id and name, and the user's role at the customer.
pub type Link = (Uuid, String, CustomerRole);

/// How a path or query names a resource: its id, or `rid_` + its reference id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdOrRef<'a> {
    Id(Uuid),
    Ref(&'a str),
    /// neither a UUID nor `rid_`: names nothing
    Nothing,
}

impl<'a> IdOrRef<'a> {
    pub fn parse(raw: &'a str) -> IdOrRef<'a> {
        if let Some(r) = raw.strip_prefix("rid_") {
            return if r.is_empty() { IdOrRef::Nothing } else { IdOrRef::Ref(r) };
        }
        match Uuid::parse_str(raw) {
            Ok(u) => IdOrRef::Id(u),
            Err(_) => IdOrRef::Nothing,
        }
    }

    /// (column, value) to look it up by; `Nothing` matches no row.
    pub(crate) fn column(&self) -> (&'static str, String) {
        match self {
            IdOrRef::Id(u) => ("id", u.to_string()),
            IdOrRef::Ref(r) => ("reference_id", r.to_string()),
            IdOrRef::Nothing => ("id", String::new()),
        }
    }
}
