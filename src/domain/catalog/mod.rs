//! The product catalog: offerings with their products, groups and prices,
//! the catalogs customers order from, and the tax rates orders apply.

pub mod file;
pub mod import;
pub mod price;

use super::Caller;
use crate::error::{Error, InternalCode, Result};
use crate::store::{Cursor, Features, OfferingFilter, OfferingRow, limit_or_default};
use crate::wire::latest as wire;
use crate::wire::latest::params::ProductOfferingListQuery;
use uuid::Uuid;

/// The id of a catalog entity: derived from the organisation and the key,
/// so every import of a key names the same row and no two organisations
/// share one.
pub fn entity_id(org: Uuid, kind: &str, key: &str) -> Uuid {
    Uuid::new_v5(&org, format!("{kind}:{key}").as_bytes())
}

/// A product's stored features as the API shows them.
fn features(f: &Features) -> wire::ProductFeatures {
    wire::ProductFeatures {
        activation_type: f.activation_type.map(Into::into),
        countries: f.countries.clone(),
        data_mb: f.data_mb,
        included_call_seconds: f.included_call_seconds,
        included_sms: f.included_sms,
        regions: f.regions.clone(),
        sim_card_type: f.sim_card_type.map(Into::into),
        number_selection: f.number_selection,
        validity_days: f.validity_days,
    }
}

/// The wire form of a stored offering: its documents, with the ids put in
/// where the file named keys.
pub fn to_wire(row: &OfferingRow) -> Result<wire::ProductOffering> {
    let (o, p) = (&row.offering, &row.product);
    let price = serde_json::from_value(o.price.clone()).map_err(|e| Error::Internal(format!("stored offering {}: price: {e}", row.id)))?;
    Ok(wire::ProductOffering {
        product_offering_id: row.id,
        status: o.status.into(),
        name: o.name.clone(),
        description: o.description.clone(),
        rich_content: o.rich_content.clone(),
        usp_list: o.usp_list.clone(),
        product: wire::Product {
            product_id: row.product_id,
            internal_name: p.internal_name.clone(),
            type_: p.product_type.into(),
            category: p.category.into(),
            network_provider_id: p.network_provider_id.clone(),
            features: p.features.as_ref().map(features),
        },
        price,
        group: row.group_id.zip(row.group.as_ref()).map(|(id, g)| wire::ProductOfferingGroup {
            product_offering_group_id: Some(id),
            name: Some(g.name.clone()),
            description: g.description.clone(),
            category: g.category.into(),
            internal_description: g.internal_description.clone(),
        }),
        image_url: o.image_url.clone(),
    })
}

/// An offering as named on what was bought with it (subscriptions,
/// add-ons, licenses): as the catalog holds it now.
pub fn summary(o: wire::ProductOffering) -> wire::ProductOfferingSummary {
    wire::ProductOfferingSummary { product_offering_id: o.product_offering_id, name: o.name, price: o.price, group: o.group, image_url: o.image_url }
}

/// Offerings in their wire form by id, each read from the store once:
/// what rows naming an offering (subscriptions, add-ons, licenses) need.
#[derive(Default)]
pub struct Offerings(std::collections::HashMap<Uuid, wire::ProductOffering>);

impl Offerings {
    pub async fn get(&mut self, caller: &Caller, id: Uuid) -> Result<wire::ProductOffering> {
        self.get_in(caller, None, id).await
    }

    /// `get`, read in `tx` when given (by a move inside its transaction).
    pub async fn get_in(&mut self, caller: &Caller, tx: Option<&mut crate::store::Tx>, id: Uuid) -> Result<wire::ProductOffering> {
        if let Some(o) = self.0.get(&id) {
            return Ok(o.clone());
        }
        // offerings are never deleted: a stored reference always resolves
        let row = caller.store.offering_in(tx, caller.org, id).await?.ok_or_else(|| Error::Internal(format!("offering {id} vanished")))?;
        let o = to_wire(&row)?;
        self.0.insert(id, o.clone());
        Ok(o)
    }

    /// `rows` in their wire form, each given the offering it names.
    pub async fn attach<R, T>(
        caller: &Caller,
        rows: &[R],
        offering_of: impl Fn(&R) -> Uuid,
        to_wire: impl Fn(&R, wire::ProductOffering) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut offerings = Offerings::default();
        let mut items = Vec::with_capacity(rows.len());
        for row in rows {
            items.push(to_wire(row, offerings.get(caller, offering_of(row)).await?)?);
        }
        Ok(items)
    }
}

fn uuid_or_not_found(id: &str, what: InternalCode, name: &'static str) -> Result<Uuid> {
    Uuid::parse_str(id).map_err(|_| Error::not_found(what, name))
}

pub async fn find(caller: &Caller, id: &str) -> Result<OfferingRow> {
    let id = uuid_or_not_found(id, InternalCode::ProductOfferingNotFound, "product offering")?;
    caller.store.offering(caller.org, id).await?.ok_or_else(|| Error::not_found(InternalCode::ProductOfferingNotFound, "product offering"))
}

pub async fn view(caller: &Caller, id: &str) -> Result<wire::ProductOffering> {
    to_wire(&find(caller, id).await?)
}

pub async fn list(caller: &Caller, q: ProductOfferingListQuery) -> Result<wire::ProductOfferingList> {
    let after = q.cursor.as_deref().map(Cursor::decode).transpose()?;
    let filter = OfferingFilter {
        status: crate::domain::filter_of::<wire::ProductOfferingStatus, _>("status", q.status.as_slice())?.pop(),
        category: crate::domain::filter_of::<wire::ProductCategory, _>("category", q.category.as_slice())?.pop(),
        product_type: crate::domain::filter_of::<wire::ProductType, _>("productType", q.product_type.as_slice())?.pop(),
        // a group id that is no UUID names no group: an empty page
        group_id: match q.group_id.as_deref().map(Uuid::parse_str) {
            Some(Ok(g)) => Some(g),
            Some(Err(_)) => Some(Uuid::nil()),
            None => None,
        },
    };
    let page = caller.store.offerings(caller.org, &filter, after, limit_or_default(q.limit)).await?;
    Ok(wire::ProductOfferingList {
        items: page.items.iter().map(to_wire).collect::<Result<_>>()?,
        pagination: wire::Pagination { next_cursor: page.next.map(Cursor::encode) },
    })
}

/// The Subscription.type of a subscription product's category.
/// (Submission checks that a subscription line's product is a SUBSCRIPTION
/// product; those are of the subscription categories.)
pub fn subscription_type(category: crate::kinds::ProductCategory) -> &'static str {
    use crate::kinds::ProductCategory as C;
    match category {
        C::SubscriptionDataSim => "DATA",
        C::SubscriptionBroadband => "MBB",
        C::SubscriptionM2m => "M2M",
        C::TravelEsim => "TRAVEL_ESIM",
        _ => "CELL",
    }
}
