//! Loading a catalog file into an organisation: checked whole first, then
//! written in one transaction, row by row only where something changed, so
//! importing the same file again changes nothing.

use super::entity_id;
use super::file::{CatalogFile, Problem};
use crate::error::Error;
use crate::store::{Change, Columns, IdOrRef, Kind, Store};
use serde::Serialize;
use serde_json::{Value, json};
use uuid::Uuid;

/// What an import did, per entity.
#[derive(Debug, Default, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub created: usize,
    pub updated: usize,
    pub unchanged: usize,
}

impl Report {
    fn count(&mut self, c: Change) {
        match c {
            Change::Created => self.created += 1,
            Change::Updated => self.updated += 1,
            Change::Unchanged => self.unchanged += 1,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("the catalog file is invalid")]
    Invalid(Vec<Problem>),
    #[error(transparent)]
    Store(#[from] Error),
}

fn doc<T: Serialize>(v: &T) -> Value {
    crate::wire::to_json(v)
}

/// Without its `key` (the row has it) and for catalogs without the
/// membership (kept in its own table).
fn doc_without(v: Value, fields: &[&str]) -> Value {
    match v {
        Value::Object(mut m) => {
            for f in fields {
                m.remove(*f);
            }
            Value::Object(m)
        }
        v => v,
    }
}

pub async fn import(store: &Store, org: Uuid, mut file: CatalogFile) -> Result<Report, ImportError> {
    // what the file may name without defining: keys already stored
    let mut stored = std::collections::HashSet::new();
    for (kind, name, keys) in [
        (Kind::Group, "group", file.offerings.iter().filter_map(|o| o.group.clone()).collect::<Vec<_>>()),
        (Kind::Product, "product", file.offerings.iter().map(|o| o.product.clone()).collect()),
        (Kind::Offering, "offering", file.catalogs.iter().flat_map(|c| c.offerings.clone()).collect()),
        (Kind::Catalog, "catalog", file.assignments.iter().map(|a| a.catalog.clone()).collect()),
    ] {
        for k in keys {
            if store.catalog_key_id(kind, org, &k).await?.is_some() {
                stored.insert((name, k));
            }
        }
    }
    let mut problems = file.check(&|kind, key| stored.iter().any(|(n, k)| *n == kind && k == key));
    let mut customers = vec![];
    for (i, a) in file.assignments.iter().enumerate() {
        match store.customer(org, &IdOrRef::parse(&a.customer)).await? {
            Some(c) => customers.push(c.id),
            None => problems.push(Problem { path: format!("assignments[{i}].customer"), message: "names no customer of this organisation".into() }),
        }
    }
    if !problems.is_empty() {
        return Err(ImportError::Invalid(problems));
    }

    let id = |kind: &str, key: &str| entity_id(org, kind, key);
    let mut report = Report::default();
    let mut tx = store.begin().await?;
    for g in &file.groups {
        let c = Store::upsert_catalog_entity(&mut tx, Kind::Group, org, id("group", &g.key), &g.key, &Columns::None, &doc_without(doc(g), &["key"])).await?;
        report.count(c);
    }
    for p in &file.products {
        let columns = Columns::Product { product_type: p.product_type, category: p.category };
        let c = Store::upsert_catalog_entity(&mut tx, Kind::Product, org, id("product", &p.key), &p.key, &columns, &doc_without(doc(p), &["key"])).await?;
        report.count(c);
    }
    for o in &file.offerings {
        let columns = Columns::Offering { status: o.status, product_id: id("product", &o.product), group_id: o.group.as_ref().map(|g| id("group", g)) };
        let body = doc_without(doc(o), &["key", "product", "group"]);
        let c = Store::upsert_catalog_entity(&mut tx, Kind::Offering, org, id("offering", &o.key), &o.key, &columns, &body).await?;
        report.count(c);
    }
    let mut default_catalog = None;
    for cat in &file.catalogs {
        let cid = id("catalog", &cat.key);
        let body = doc_without(doc(cat), &["key", "offerings", "default"]);
        let c = Store::upsert_catalog_entity(&mut tx, Kind::Catalog, org, cid, &cat.key, &Columns::None, &body).await?;
        let members: Vec<Uuid> = cat.offerings.iter().map(|k| id("offering", k)).collect();
        let m = Store::set_catalog_offerings(&mut tx, cid, &members).await?;
        report.count(if c == Change::Unchanged { m } else { c });
        if cat.default {
            default_catalog = Some(cid);
        }
    }
    for (a, customer) in file.assignments.iter().zip(customers) {
        report.count(Store::assign_catalog(&mut tx, org, customer, id("catalog", &a.catalog)).await?);
    }
    for t in &file.tax_rates {
        report.count(Store::set_tax_rates(&mut tx, org, &t.country, &json!(t.rates)).await?);
    }
    let settings = Store::set_catalog_settings(&mut tx, org, default_catalog, file.default_tax_country.as_deref()).await?;
    if default_catalog.is_some() || file.default_tax_country.is_some() {
        report.count(settings);
    }
    tx.commit().await?;
    Ok(report)
}
