//! The product catalog: imported entities kept as JSON documents by key,
//! offerings with their product and group, catalogs, assignments, taxes.

use super::{Cursor, ListQuery, Page, Store, Tx, parse_uuid};
use crate::error::{Error, Result};
use crate::kinds::{ActivationType, OfferingStatus, ProductCategory, ProductType, SimType};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row};
use uuid::Uuid;

/// What an upsert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Created,
    Updated,
    Unchanged,
}

/// An offering with the product it sells and its group, as stored.
#[derive(Debug, Clone)]
pub struct OfferingRow {
    pub id: Uuid,
    pub key: String,
    pub offering: OfferingDoc,
    pub product_id: Uuid,
    pub product: ProductDoc,
    pub group_id: Option<Uuid>,
    pub group: Option<GroupDoc>,
}

/// An offering's stored document: its wire fields but the ids.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OfferingDoc {
    pub status: OfferingStatus,
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub rich_content: Option<String>,
    #[serde(default)]
    pub usp_list: Vec<String>,
    /// the price document, read as the wire `Price` for answers and as the
    /// domain's `Price` for pricing
    pub price: Value,
    #[serde(default)]
    pub image_url: Option<String>,
}

/// A product's stored document: its wire fields but the id, and the
/// License.type a LICENSE product's licenses get.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProductDoc {
    pub internal_name: String,
    #[serde(rename = "type")]
    pub product_type: ProductType,
    pub category: ProductCategory,
    #[serde(default)]
    pub network_provider_id: Option<String>,
    #[serde(default)]
    pub features: Option<Features>,
    #[serde(default)]
    pub license_type: Option<String>,
}

/// A product's features, as the catalog file gives them and its stored
/// document keeps them: what is included, where, for how long, how it
/// activates.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Features {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_mb: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub included_call_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub included_sms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validity_days: Option<i32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub countries: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub regions: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_type: Option<ActivationType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim_card_type: Option<SimType>,
    /// a subscription of it may choose its number from the pool
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number_selection: Option<bool>,
}

/// A catalog's stored document: what a customer's catalog shows of it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogDoc {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
}

/// A group's stored document: its wire fields but the id.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupDoc {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    pub category: ProductCategory,
    #[serde(default)]
    pub internal_description: Option<String>,
}

#[derive(Debug, Default)]
pub struct OfferingFilter {
    pub status: Option<OfferingStatus>,
    pub category: Option<ProductCategory>,
    pub product_type: Option<ProductType>,
    pub group_id: Option<Uuid>,
}

/// What an entity keeps in columns of its own besides id, org_id, key and
/// doc (for the list filters and joins).
#[derive(Debug, Clone)]
pub enum Columns {
    None,
    Product { product_type: ProductType, category: ProductCategory },
    Offering { status: OfferingStatus, product_id: Uuid, group_id: Option<Uuid> },
}

impl Columns {
    /// (column, value) of each.
    fn pairs(&self) -> Vec<(&'static str, Option<String>)> {
        match self {
            Columns::None => vec![],
            Columns::Product { product_type, category } => {
                vec![("product_type", Some(product_type.stored().to_string())), ("category", Some(category.stored().to_string()))]
            }
            Columns::Offering { status, product_id, group_id } => {
                vec![("status", Some(status.stored().to_string())), ("product_id", Some(product_id.to_string())), ("group_id", group_id.map(|g| g.to_string()))]
            }
        }
    }
}

/// The catalog tables an import writes.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Group,
    Product,
    Offering,
    Catalog,
}

impl Kind {
    fn table(self) -> &'static str {
        match self {
            Kind::Group => "product_groups",
            Kind::Product => "products",
            Kind::Offering => "product_offerings",
            Kind::Catalog => "product_catalogs",
        }
    }
}

const OFFERING_SELECT: &str = "SELECT o.seq, o.id, o.key, o.doc, p.id AS product_id, p.doc AS product_doc, \
     g.id AS group_id, g.doc AS group_doc
     FROM product_offerings o JOIN products p ON p.id = o.product_id LEFT JOIN product_groups g ON g.id = o.group_id";

fn doc<T: serde::de::DeserializeOwned>(r: &AnyRow, col: &str) -> Result<T> {
    let text: String = r.try_get(col)?;
    serde_json::from_str(&text).map_err(|e| Error::Internal(format!("column {col}: {e}")))
}

fn offering_from_row(r: &AnyRow) -> Result<(i64, OfferingRow)> {
    let group_id: Option<String> = r.try_get("group_id")?;
    let group_doc: Option<String> = r.try_get("group_doc")?;
    Ok((
        r.try_get("seq")?,
        OfferingRow {
            id: parse_uuid(&r.try_get::<String, _>("id")?)?,
            key: r.try_get("key")?,
            offering: doc(r, "doc")?,
            product_id: parse_uuid(&r.try_get::<String, _>("product_id")?)?,
            product: doc(r, "product_doc")?,
            group_id: group_id.as_deref().map(parse_uuid).transpose()?,
            group: group_doc.map(|t| serde_json::from_str(&t)).transpose().map_err(|e| Error::Internal(format!("column group_doc: {e}")))?,
        },
    ))
}

impl Store {
    /// The id of the entity of `kind` named `key`, if stored.
    pub async fn catalog_key_id(&self, kind: Kind, org: Uuid, key: &str) -> Result<Option<Uuid>> {
        let sql = format!("SELECT id FROM {} WHERE org_id = $1 AND key = $2", kind.table());
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(key).fetch_optional(&self.pool).await?;
        row.map(|r| parse_uuid(&r.try_get::<String, _>("id")?)).transpose()
    }

    /// Inserts or updates one entity with its own `columns`. Unchanged rows
    /// are not written.
    pub async fn upsert_catalog_entity(tx: &mut Tx, kind: Kind, org: Uuid, id: Uuid, key: &str, columns: &Columns, doc: &Value) -> Result<Change> {
        let table = kind.table();
        let columns = columns.pairs();
        let names: Vec<&str> = columns.iter().map(|(n, _)| *n).collect();
        let select = format!("SELECT doc{} FROM {table} WHERE id = $1", names.iter().map(|n| format!(", {n}")).collect::<String>());
        let existing = sqlx::query(AssertSqlSafe(select)).bind(id.to_string()).fetch_optional(tx.conn().await?).await?;
        let doc_text = doc.to_string();
        let change = match existing {
            None => {
                let cols = names.iter().map(|n| format!(", {n}")).collect::<String>();
                let params = (0..names.len()).map(|i| format!(", ${}", i + 5)).collect::<String>();
                let sql = format!("INSERT INTO {table} (id, org_id, key, doc{cols}) VALUES ($1, $2, $3, $4{params})");
                let mut q = sqlx::query(AssertSqlSafe(sql)).bind(id.to_string()).bind(org.to_string()).bind(key).bind(doc_text);
                for (_, v) in &columns {
                    q = q.bind(v.clone());
                }
                tx.execute(q).await?;
                Change::Created
            }
            Some(row) => {
                let stored: String = row.try_get("doc")?;
                let stored_doc: Value = serde_json::from_str(&stored).map_err(|e| Error::Internal(e.to_string()))?;
                let mut same = stored_doc == *doc;
                for (n, v) in &columns {
                    same &= row.try_get::<Option<String>, _>(*n)? == *v;
                }
                if same {
                    Change::Unchanged
                } else {
                    let sets = names.iter().enumerate().map(|(i, n)| format!(", {n} = ${}", i + 3)).collect::<String>();
                    let sql = format!("UPDATE {table} SET doc = $2{sets} WHERE id = $1");
                    let mut q = sqlx::query(AssertSqlSafe(sql)).bind(id.to_string()).bind(doc_text);
                    for (_, v) in &columns {
                        q = q.bind(v.clone());
                    }
                    tx.execute(q).await?;
                    Change::Updated
                }
            }
        };
        Ok(change)
    }

    /// Sets a catalog's offerings (in order); Unchanged when they already are.
    pub async fn set_catalog_offerings(tx: &mut Tx, catalog: Uuid, offerings: &[Uuid]) -> Result<Change> {
        let rows = sqlx::query("SELECT offering_id FROM product_catalog_offerings WHERE catalog_id = $1 ORDER BY position")
            .bind(catalog.to_string())
            .fetch_all(tx.conn().await?)
            .await?;
        let stored: Vec<String> = rows.iter().map(|r| r.try_get("offering_id")).collect::<std::result::Result<_, _>>()?;
        let wanted: Vec<String> = offerings.iter().map(Uuid::to_string).collect();
        if stored == wanted {
            return Ok(Change::Unchanged);
        }
        tx.execute(sqlx::query("DELETE FROM product_catalog_offerings WHERE catalog_id = $1").bind(catalog.to_string())).await?;
        for (i, o) in wanted.iter().enumerate() {
            tx.execute(
                sqlx::query("INSERT INTO product_catalog_offerings (catalog_id, offering_id, position) VALUES ($1, $2, $3)")
                    .bind(catalog.to_string())
                    .bind(o)
                    .bind(i as i64),
            )
            .await?;
        }
        Ok(if stored.is_empty() { Change::Created } else { Change::Updated })
    }

    pub async fn assign_catalog(tx: &mut Tx, org: Uuid, customer: Uuid, catalog: Uuid) -> Result<Change> {
        let row =
            sqlx::query("SELECT catalog_id FROM customer_catalogs WHERE customer_id = $1").bind(customer.to_string()).fetch_optional(tx.conn().await?).await?;
        let stored: Option<String> = row.map(|r| r.try_get("catalog_id")).transpose()?;
        let change = match stored {
            Some(s) if s == catalog.to_string() => return Ok(Change::Unchanged),
            Some(_) => Change::Updated,
            None => Change::Created,
        };
        tx.execute(sqlx::query("DELETE FROM customer_catalogs WHERE customer_id = $1").bind(customer.to_string())).await?;
        tx.execute(
            sqlx::query("INSERT INTO customer_catalogs (customer_id, org_id, catalog_id) VALUES ($1, $2, $3)")
                .bind(customer.to_string())
                .bind(org.to_string())
                .bind(catalog.to_string()),
        )
        .await?;
        Ok(change)
    }

    pub async fn set_tax_rates(tx: &mut Tx, org: Uuid, country: &str, rates: &Value) -> Result<Change> {
        let row = sqlx::query("SELECT doc FROM tax_rates WHERE org_id = $1 AND country = $2")
            .bind(org.to_string())
            .bind(country)
            .fetch_optional(tx.conn().await?)
            .await?;
        let change = match row {
            Some(r) if doc::<Value>(&r, "doc")? == *rates => return Ok(Change::Unchanged),
            Some(_) => Change::Updated,
            None => Change::Created,
        };
        tx.execute(sqlx::query("DELETE FROM tax_rates WHERE org_id = $1 AND country = $2").bind(org.to_string()).bind(country)).await?;
        tx.execute(sqlx::query("INSERT INTO tax_rates (org_id, country, doc) VALUES ($1, $2, $3)").bind(org.to_string()).bind(country).bind(rates.to_string()))
            .await?;
        Ok(change)
    }

    /// Sets the default catalog and/or default tax country (None leaves a
    /// setting as it is).
    pub async fn set_catalog_settings(tx: &mut Tx, org: Uuid, default_catalog: Option<Uuid>, default_tax_country: Option<&str>) -> Result<Change> {
        let row = sqlx::query("SELECT default_catalog_id, default_tax_country FROM catalog_settings WHERE org_id = $1")
            .bind(org.to_string())
            .fetch_optional(tx.conn().await?)
            .await?;
        let (old_catalog, old_country): (Option<String>, Option<String>) = match &row {
            Some(r) => (r.try_get("default_catalog_id")?, r.try_get("default_tax_country")?),
            None => (None, None),
        };
        let catalog = default_catalog.map(|c| c.to_string()).or(old_catalog.clone());
        let country = default_tax_country.map(str::to_string).or(old_country.clone());
        if row.is_some() && catalog == old_catalog && country == old_country {
            return Ok(Change::Unchanged);
        }
        if row.is_none() && catalog.is_none() && country.is_none() {
            return Ok(Change::Unchanged);
        }
        tx.execute(sqlx::query("DELETE FROM catalog_settings WHERE org_id = $1").bind(org.to_string())).await?;
        tx.execute(
            sqlx::query("INSERT INTO catalog_settings (org_id, default_catalog_id, default_tax_country) VALUES ($1, $2, $3)")
                .bind(org.to_string())
                .bind(catalog)
                .bind(country),
        )
        .await?;
        Ok(if row.is_some() { Change::Updated } else { Change::Created })
    }

    pub async fn offerings(&self, org: Uuid, f: &OfferingFilter, after: Option<Cursor>, limit: usize) -> Result<Page<OfferingRow>> {
        let mut q = ListQuery::new(format!("{OFFERING_SELECT} WHERE o.org_id = $1 AND o.seq > $2"));
        for (col, v) in [
            ("o.status", &f.status.map(|s| s.stored().to_string())),
            ("p.category", &f.category.map(|c| c.stored().to_string())),
            ("p.product_type", &f.product_type.map(|t| t.stored().to_string())),
            ("o.group_id", &f.group_id.map(|g| g.to_string())),
        ] {
            if let Some(v) = v {
                q.eq(col, v.clone());
            }
        }
        let rows = q.fetch(&self.pool, org, after, "o.seq", limit).await?;
        Ok(Page::from_rows(rows.iter().map(offering_from_row).collect::<Result<_>>()?, limit))
    }

    pub async fn offering(&self, org: Uuid, id: Uuid) -> Result<Option<OfferingRow>> {
        self.offering_in(None, org, id).await
    }

    /// The offering `id` of `org`, read in `tx` when given (a move that
    /// reads inside its transaction reads all through it).
    pub async fn offering_in(&self, tx: Option<&mut super::Tx>, org: Uuid, id: Uuid) -> Result<Option<OfferingRow>> {
        let sql = format!("{OFFERING_SELECT} WHERE o.org_id = $1 AND o.id = $2");
        let q = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string());
        let row = match tx {
            Some(tx) => q.fetch_optional(tx.conn().await?).await?,
            None => q.fetch_optional(&self.pool).await?,
        };
        Ok(row.as_ref().map(offering_from_row).transpose()?.map(|(_, o)| o))
    }

    /// The catalog a customer orders from: its own, else the default.
    pub async fn customer_catalog(&self, org: Uuid, customer: Uuid) -> Result<Option<(Uuid, CatalogDoc)>> {
        let row = sqlx::query(
            "SELECT c.id, c.doc FROM product_catalogs c WHERE c.org_id = $1 AND c.id = COALESCE(
               (SELECT catalog_id FROM customer_catalogs WHERE customer_id = $2),
               (SELECT default_catalog_id FROM catalog_settings WHERE org_id = $1))",
        )
        .bind(org.to_string())
        .bind(customer.to_string())
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| Ok((parse_uuid(&r.try_get::<String, _>("id")?)?, doc(&r, "doc")?))).transpose()
    }

    /// A catalog's offerings in catalog order, only those with `status` if given.
    pub async fn catalog_offerings(&self, catalog: Uuid, status: Option<OfferingStatus>) -> Result<Vec<OfferingRow>> {
        let sql = format!(
            "{OFFERING_SELECT} JOIN product_catalog_offerings m ON m.offering_id = o.id
             WHERE m.catalog_id = $1 AND ($2 = '' OR o.status = $2) ORDER BY m.position"
        );
        let rows = sqlx::query(AssertSqlSafe(sql)).bind(catalog.to_string()).bind(status.map(|s| s.stored()).unwrap_or_default()).fetch_all(&self.pool).await?;
        rows.iter().map(|r| offering_from_row(r).map(|(_, o)| o)).collect()
    }

    /// Tax rates of a country (the JSON array), if the organisation has any.
    pub async fn tax_rates(&self, org: Uuid, country: &str) -> Result<Option<Value>> {
        let row =
            sqlx::query("SELECT doc FROM tax_rates WHERE org_id = $1 AND country = $2").bind(org.to_string()).bind(country).fetch_optional(&self.pool).await?;
        row.map(|r| doc(&r, "doc")).transpose()
    }

    pub async fn default_tax_country(&self, org: Uuid) -> Result<Option<String>> {
        let row = sqlx::query("SELECT default_tax_country FROM catalog_settings WHERE org_id = $1").bind(org.to_string()).fetch_optional(&self.pool).await?;
        Ok(row.map(|r| r.try_get("default_tax_country")).transpose()?.flatten())
    }
}
