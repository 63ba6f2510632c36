//! Subscriptions and their add-ons: what order submission creates, the
//! reads of them, and their lifecycle: one transition table (`states`),
//! the moves asked for (`lifecycle`) and those that fall due on a date
//! (`scheduled`); what it was bought at and its billing cycles (`terms`),
//! buying one directly (`create`) and changing its offering (`offerings`).

pub mod esim;
pub mod lifecycle;
pub mod offerings;
pub mod scheduled;
pub mod states;
pub mod terms;

use super::catalog::{self, Offerings};
use super::{Caller, customers};
use crate::wire::latest::{ProductCategory, SimCardType, SubscriptionStatus};
use crate::wire::latest::params::SubscriptionListQuery;
use crate::wire::latest as wire;
use crate::error::{Error, InternalCode, Result};
use crate::store::{Cursor, Held, IdOrRef, Life, OfferingRow, Store, SubscriptionFilter, SubscriptionRow, Terms, Tx, limit_or_default};
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// The Subscription.type of a subscription product's category.
/// (Submission checks that a subscription line's product is a SUBSCRIPTION
/// product; those are of the subscription categories.)
pub fn subscription_type(category: ProductCategory) -> &'static str {
    use ProductCategory as C;
    match category {
        C::ProductCategorySubscriptionDataSim => "DATA",
        C::ProductCategorySubscriptionBroadband => "MBB",
        C::ProductCategorySubscriptionM2m => "M2M",
        C::ProductCategoryTravelEsim => "TRAVEL_ESIM",
        _ => "CELL",
    }
}

/// What a subscription shows as: its custom display name, else its number
/// pretty-printed in international form (`+46 70 123 45 67`).
pub fn display(msisdn: &str, display_name: Option<&str>) -> String {
    if let Some(name) = display_name {
        return name.to_string();
    }
    phonenumber::parse(None, msisdn)
        .map(|n| n.format().mode(phonenumber::Mode::International).to_string())
        .unwrap_or_else(|_| msisdn.to_string())
}

/// `row` as the API shows it, on `offering` (its own), with `pending` (the
/// offering of a change scheduled for later).
pub fn to_wire(row: &SubscriptionRow, offering: wire::ProductOffering, pending: Option<wire::ProductOffering>) -> Result<wire::Subscription> {
    let contracted = serde_json::from_value(row.terms.price.clone()).map_err(|e| Error::Internal(format!("subscription {}: terms: {e}", row.id)))?;
    Ok(wire::Subscription {
        subscription_id: row.id,
        reference_id: row.reference_id.clone(),
        status: row.status,
        type_: row.subscription_type.clone(),
        display: display(&row.msisdn, row.display_name.as_deref()),
        msisdn: row.msisdn.clone(),
        customer: wire::CustomerSummary { customer_id: row.customer_id, name: row.customer_name.clone() },
        product_offering: Some(catalog::summary(offering)),
        sim_type: row.sim_type,
        order_id: Some(row.order_id),
        created_at: row.created_at,
        updated_at: row.updated_at,
        iccid: row.life.iccid.clone(),
        // a secret: only the move that issues it and the audited fetch show it (`esim`)
        esim_activation_code: None,
        status_reason: row.life.status_reason.clone(),
        pending_status: row.life.pending.map(|(s, _)| s),
        pending_status_at: row.life.pending.map(|(_, at)| at),
        activated_at: row.life.activated_at,
        paused_at: row.life.paused_at,
        suspended_at: row.life.suspended_at,
        blocked_at: row.life.blocked_at,
        cancelled_at: row.life.cancelled_at,
        ended_at: row.life.ended_at,
        binding_ends_on: row.life.binding_ends_on,
        subscriber_id: row.subscriber_id,
        currency: row.terms.currency.clone(),
        contracted_price: contracted,
        binding_contract: row.terms.binding_contract,
        upfront_paid_cycles: row.terms.upfront_cycles as i32,
        billing_day: row.life.billing_day.map(|d| d as i32),
        renews_on: row.life.renews_on,
        next_payment_on: terms::next_payment(row),
        pending_product_offering: match (&row.life.pending_offering, pending) {
            (Some(p), Some(o)) => Some(wire::PendingProductOffering {
                product_offering: catalog::summary(o),
                change_schedule: p.schedule.parse().map_err(|_| Error::Internal(format!("subscription {}: schedule {:?}", row.id, p.schedule)))?,
                scheduled_at: p.at,
            }),
            _ => None,
        },
    })
}

/// `row` as the API shows it, with the offerings it names.
pub async fn shown(caller: &Caller, offerings: &mut Offerings, row: &SubscriptionRow) -> Result<wire::Subscription> {
    shown_in(caller, None, offerings, row).await
}

/// `shown`, read in `tx` when given (by a move inside its transaction).
pub async fn shown_in(caller: &Caller, mut tx: Option<&mut crate::store::Tx>, offerings: &mut Offerings, row: &SubscriptionRow) -> Result<wire::Subscription> {
    let offering = offerings.get_in(caller, tx.as_deref_mut(), row.offering_id).await?;
    let pending = match &row.life.pending_offering {
        Some(p) => Some(offerings.get_in(caller, tx, p.offering_id).await?),
        None => None,
    };
    to_wire(row, offering, pending)
}

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
        statuses: q.status,
        types: q.type_,
        msisdn: q.msisdn,
        visible_to: caller.viewer(),
        activated: false,
    };
    let page = caller.store.subscriptions(caller.org, &filter, after, limit_or_default(q.limit)).await?;
    let mut offerings = Offerings::default();
    let mut items = Vec::with_capacity(page.items.len());
    for row in &page.items {
        items.push(shown(caller, &mut offerings, row).await?);
    }
    Ok(wire::SubscriptionList { items, pagination: wire::Pagination { next_cursor: page.next.map(Cursor::encode) } })
}

/// What a submitted SUBSCRIPTION line creates: a PENDING subscription of
/// `customer` (id, name) on `offering`. Its wire form, for the event.
#[allow(clippy::too_many_arguments)]
pub async fn create_pending(
    tx: &mut Tx,
    org: Uuid,
    customer: (Uuid, &str),
    order_id: Uuid,
    offering: &OfferingRow,
    offering_wire: wire::ProductOffering,
    new: &wire::NewSubscription,
    terms: Terms,
    now: DateTime<Utc>,
) -> Result<wire::Subscription> {
    // a binding contract chosen runs the months of the price bought
    let binding_months = match terms.binding_contract {
        true => terms::price(&terms)?.binding_contract.map(|b| i64::from(b.duration.value)),
        false => None,
    };
    let row = SubscriptionRow {
        id: crate::domain::new_id(),
        customer_id: customer.0,
        customer_name: customer.1.to_string(),
        order_id,
        offering_id: offering.id,
        status: SubscriptionStatus::Pending,
        subscription_type: subscription_type(offering.product.category).into(),
        msisdn: new.msisdn.to_string(),
        display_name: new.display_name.as_ref().map(|d| d.to_string()),
        sim_type: new.sim_type,
        reference_id: new.reference_id.as_ref().map(|r| r.to_string()),
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
    sim: SimCardType,
    offering: wire::ProductOffering,
    pending: Option<wire::ProductOffering>,
    now: DateTime<Utc>,
) -> Result<wire::Subscription> {
    row.sim_type = sim;
    row.updated_at = now;
    Store::set_subscription_sim(tx, org, row.id, sim, now).await?;
    to_wire(&row, offering, pending)
}
