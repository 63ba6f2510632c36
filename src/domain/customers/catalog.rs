//! The catalog a customer orders from (`GET /customers/{id}/product-catalog`).

use crate::domain::Caller;
use crate::domain::catalog::to_wire;
use crate::error::{Error, InternalCode, Result};
use crate::wire::latest as wire;

/// The catalog a customer orders from, with what they may order now.
pub async fn view(caller: &Caller, customer_key: &str) -> Result<wire::ProductCatalog> {
    let customer = super::find(caller, customer_key).await?;
    let (id, doc) = caller
        .store
        .customer_catalog(caller.org, customer.id)
        .await?
        .ok_or_else(|| Error::not_found(InternalCode::ProductCatalogNotFound, "product catalog"))?;
    let items = caller.store.catalog_offerings(id, Some(crate::kinds::OfferingStatus::Available)).await?;
    Ok(wire::ProductCatalog {
        product_catalog_id: id,
        name: doc.name,
        description: doc.description,
        customer_id: customer.id,
        items: items.iter().map(to_wire).collect::<Result<_>>()?,
    })
}
