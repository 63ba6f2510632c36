//! Subscriptions: the reads of them (a read shows what fell due done) and
//! what order submission creates. Below them, from the bottom up: what a
//! subscription was bought at and its billing cycles (`terms`), how it
//! shows (`shown`), its transition table (`states`), writing a move with
//! what follows it down to its add-ons and licenses (`write`), and what
//! falls due on a date (`scheduled`). Above them, the moves a request
//! asks for (`lifecycle`, `offerings`, `esim`).

pub mod dunning;
pub mod esim;
pub mod lifecycle;
pub mod offerings;
pub mod port_in;
pub mod render;
pub mod scheduled;
pub mod terms;
pub mod write;

use super::catalog::Offerings;
use super::{Caller, customers};
use crate::error::{Error, InternalCode, Result};
use crate::kinds::SimType;
use crate::states::subscriptions::SubscriptionStatus;
use crate::store::{Cursor, Held, IdOrRef, Life, OfferingRow, Store, SubscriptionFilter, SubscriptionRow, Terms, Tx, limit_or_default};
use crate::wire::latest as wire;
use crate::wire::latest::params::SubscriptionListQuery;
use chrono::{DateTime, Utc};
use render::{shown, to_wire};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The subscription named by `key` (id or `rid_`), if the caller sees its
/// customer; else 404 as if it did not exist. A move scheduled for a time
/// that has passed is done first: a read shows it done.
pub async fn find(caller: &Caller, key: &str) -> Result<SubscriptionRow> {
    let row = caller
        .store
        .subscription(caller.org, &IdOrRef::parse(key))
        .await?
        .filter(|s| caller.sees_customer(s.customer_id))
        .ok_or_else(|| Error::not_found(InternalCode::SubscriptionNotFound, "subscription"))?;
    scheduled::apply_if_due(caller, row).await
}

/// The ids of the subscriptions a list filter names (ids or `rid_`); None
/// when it names none; 404 when one of them is not the caller's to see.
pub async fn find_all(caller: &Caller, keys: &[String]) -> Result<Option<Vec<Uuid>>> {
    super::find_all(keys, |key| async move { Ok(find(caller, key).await?.id) }).await
}

pub async fn view(caller: &Caller, key: &str) -> Result<wire::Subscription> {
    let row = find(caller, key).await?;
    shown(caller, &mut Offerings::default(), &row).await
}

pub async fn list(caller: &Caller, q: SubscriptionListQuery) -> Result<wire::SubscriptionList> {
    // a list shows what a read of each would
    scheduled::apply_all_due(caller).await?;
    let after = q.cursor.as_deref().map(Cursor::decode).transpose()?;
    let filter = SubscriptionFilter {
        customers: customers::find_all(caller, &q.customer_id).await?,
        statuses: super::filter_of::<wire::SubscriptionStatus, _>("status", &q.status)?,
        types: q.type_,
        msisdn: q.msisdn,
        visible_to: caller.viewer(),
        ..Default::default()
    };
    let page = caller.store.subscriptions(caller.org, &filter, after, limit_or_default(q.limit)).await?;
    let mut offerings = Offerings::default();
    let mut items = Vec::with_capacity(page.items.len());
    for row in &page.items {
        items.push(shown(caller, &mut offerings, row).await?);
    }
    Ok(wire::SubscriptionList { items, pagination: wire::Pagination { next_cursor: page.next.map(Cursor::encode) } })
}

/// The subscription a SUBSCRIPTION line creates, as the order keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSubscription {
    /// None: the pool assigns one at submission (then it is the one taken)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msisdn: Option<String>,
    pub sim_type: SimType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number_lease_token: Option<String>,
    /// msisdn is brought from another operator (the subscription starts on
    /// a temporary number of the pool)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port_in: Option<wire::NewPortIn>,
}

impl NewSubscription {
    /// The number it asks the inventory for.
    pub fn number_asked(&self) -> crate::domain::inventory::numbers::Asked<'_> {
        crate::domain::inventory::numbers::Asked {
            msisdn: self.msisdn.as_deref(),
            lease_token: self.number_lease_token.as_deref(),
            ported: self.port_in.is_some(),
        }
    }
}

impl From<wire::NewSubscription> for NewSubscription {
    fn from(n: wire::NewSubscription) -> Self {
        NewSubscription {
            msisdn: n.msisdn.map(|m| m.to_string()),
            sim_type: n.sim_type.into(),
            display_name: n.display_name.map(|d| d.to_string()),
            reference_id: n.reference_id.map(|r| r.to_string()),
            number_lease_token: n.number_lease_token.map(|t| t.to_string()),
            port_in: n.port_in,
        }
    }
}

impl From<NewSubscription> for wire::NewSubscription {
    fn from(n: NewSubscription) -> Self {
        wire::NewSubscription {
            msisdn: n.msisdn,
            sim_type: n.sim_type.into(),
            display_name: n.display_name,
            reference_id: n.reference_id,
            number_lease_token: n.number_lease_token,
            // its secrets are write-only
            port_in: n.port_in.and_then(port_in::new_port_in),
        }
    }
}

/// What a submitted SUBSCRIPTION line creates: the PENDING subscription
/// `id` of `customer` (id, name) on `offering`, on the number `new` names
/// (the one it took). Its wire form, for the event.
#[allow(clippy::too_many_arguments)]
pub async fn create_pending(
    tx: &mut Tx,
    org: Uuid,
    id: Uuid,
    customer: (Uuid, &str),
    order_id: Uuid,
    offering: &OfferingRow,
    offering_wire: wire::ProductOffering,
    new: &NewSubscription,
    terms: Terms,
    now: DateTime<Utc>,
) -> Result<wire::Subscription> {
    let msisdn = new.msisdn.clone().ok_or_else(|| Error::Internal(format!("subscription {id} was made without its number")))?;
    // a binding contract chosen runs the months of the price bought
    let binding_months = match terms.binding_contract {
        true => terms::price(&terms)?.binding_contract.map(|b| i64::from(b.duration.value)),
        false => None,
    };
    let row = SubscriptionRow {
        id,
        customer_id: customer.0,
        customer_name: customer.1.to_string(),
        order_id,
        offering_id: offering.id,
        status: SubscriptionStatus::Pending,
        subscription_type: crate::domain::catalog::subscription_type(offering.product.category).into(),
        msisdn,
        display_name: new.display_name.clone(),
        sim_type: new.sim_type,
        reference_id: new.reference_id.clone(),
        created_at: now,
        updated_at: now,
        subscriber_id: crate::domain::new_id(),
        terms,
        life: Life { binding_months, ..Life::default() },
    };
    Store::insert_subscription(tx, org, &row).await?;
    Store::hold(tx, Held::Msisdn, &row.msisdn, org, row.id, now).await?;
    to_wire(&row, offering_wire, None)
}

/// What a submitted SIM_CARD line does: the subscription gets a SIM of
/// `sim`. Its wire form (with `offering`, its own), for the event.
#[allow(clippy::too_many_arguments)]
pub async fn change_sim(
    tx: &mut Tx,
    org: Uuid,
    mut row: SubscriptionRow,
    sim: SimType,
    offering: wire::ProductOffering,
    pending: Option<wire::ProductOffering>,
    now: DateTime<Utc>,
) -> Result<wire::Subscription> {
    row.sim_type = sim;
    row.updated_at = now;
    Store::set_subscription_sim(tx, org, row.id, sim, now).await?;
    to_wire(&row, offering, pending)
}
