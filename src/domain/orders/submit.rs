//! Submitting an order: every line checked again against the catalog as it
//! is now, then, in one transaction, the order and its lines SUBMITTED and
//! what the lines create (subscriptions, add-ons, licenses, SIM changes)
//! with every event.

use super::change::moved_meanwhile;
use super::events::record_transition;
use super::lines::{Line, OrderDoc, check_lines, context};
use super::states::{LINE_ITEM, LineOp, ORDER, OrderOp};
use crate::domain::access::Role;
use crate::domain::{Caller, catalog, customers, licenses, subscriptions};
use crate::error::{Detail, Error, InternalCode, Result};
use crate::events::{self, Event};
use crate::store::{IdOrRef, OfferingRow, Store, SubscriptionRow};
use crate::wire::latest::{self as wire, ProductType as T};
use std::collections::HashSet;

/// What one line needs read before the transaction (which only writes):
/// its offering, and the subscription it names with that one's offering.
struct Reads {
    offering: OfferingRow,
    subscription: Option<(SubscriptionRow, wire::ProductOffering)>,
}

async fn reads(caller: &Caller, offerings: &mut catalog::Offerings, line: &Line) -> Result<Reads> {
    let id = line.product_offering.product_offering_id;
    // offerings are never deleted, and the line was checked just now
    let offering = caller.store.offering(caller.org, id).await?.ok_or_else(|| Error::Internal(format!("offering {id} vanished")))?;
    let subscription = match line.subscription_id {
        Some(s) => {
            let row = caller.store.subscription(caller.org, &IdOrRef::Id(s)).await?;
            let row = row.ok_or_else(|| Error::Internal(format!("subscription {s} vanished")))?;
            let its_offering = offerings.get(caller, row.offering_id).await?;
            Some((row, its_offering))
        }
        None => None,
    };
    Ok(Reads { offering, subscription })
}


fn not_submittable(details: Vec<Detail>) -> Error {
    Error::Refused {
        code: InternalCode::OrderValidationFailed,
        message: "The order cannot be submitted; see details for each failing line item.".into(),
        details,
    }
}

/// Numbers and references the new subscriptions take must be free.
async fn check_new_subscriptions(caller: &Caller, doc: &OrderDoc, bad: &mut Vec<Detail>) -> Result<()> {
    let mut numbers = HashSet::new();
    let mut references = HashSet::new();
    for (i, l) in doc.lines.iter().enumerate() {
        let Some(s) = &l.subscription else { continue };
        if !numbers.insert(s.msisdn.to_string()) || caller.store.msisdn_in_use(caller.org, &s.msisdn).await? {
            bad.push(Detail::new(format!("lineItems[{i}].subscription.msisdn"), "msisdn_in_use", "another subscription has this number"));
        }
        if let Some(r) = &s.reference_id {
            if !references.insert(r.to_string()) || caller.store.subscription_reference_taken(caller.org, r).await? {
                bad.push(Detail::new(format!("lineItems[{i}].subscription.referenceId"), "reference_id_taken", "another subscription has this referenceId"));
            }
        }
    }
    Ok(())
}

pub async fn submit(caller: &Caller, key: &str) -> Result<wire::Order> {
    let before = super::find(caller, key).await?;
    caller.require_role(before.customer_id, Role::Member)?;
    let submitted = ORDER.next(OrderOp::Submit, before.status)?;
    if before.status == wire::OrderStatus::Draft && before.approval_required {
        return Err(Error::Conflict {
            code: InternalCode::OrderNotApproved,
            message: "The order was made by a MEMBER and needs approval by a MANAGER or ADMIN first.".into(),
            property: "status",
        });
    }
    let customer = customers::find(caller, &before.customer_id.to_string()).await?;
    let mut doc = OrderDoc::of(&before)?;
    let ctx = context(caller, customer).await?;
    let requests: Vec<wire::OrderLineItemRequest> = doc.lines.iter().map(Line::as_request).collect();
    let mut bad = check_lines(caller, &ctx, &before.currency, &requests).await?.err().unwrap_or_default();
    if ctx.customer.billing.is_none() {
        bad.push(Detail::new("customer.billing", "billing_required", "the customer has no billing details"));
    }
    check_new_subscriptions(caller, &doc, &mut bad).await?;
    if !bad.is_empty() {
        return Err(not_submittable(bad));
    }
    let mut line_reads = Vec::with_capacity(doc.lines.len());
    let mut offerings = catalog::Offerings::default();
    for l in &doc.lines {
        line_reads.push(reads(caller, &mut offerings, l).await?);
    }

    let now = caller.now;
    let (org, customer) = (caller.org, (before.customer_id, before.customer_name.as_str()));
    let mut tx = caller.store.begin().await?;
    let mut created_events: Vec<Event> = vec![];
    for (l, read) in doc.lines.iter_mut().zip(line_reads) {
        let offering = catalog::to_wire(&read.offering)?;
        match (l.product_type, &l.subscription, read.subscription, l.sim_type) {
            (T::Subscription, Some(new), _, _) => {
                let binding = l.price.binding_contract.as_ref().filter(|_| l.binding_contract).map(|b| i64::from(b.duration.value));
                let s = subscriptions::create_pending(&mut tx, org, customer, before.id, &read.offering, offering, new, binding, now).await?;
                l.created_subscription_id = Some(s.subscription_id);
                created_events.push(Event::SubscriptionCreated(s));
            }
            (T::SubscriptionAddon, _, Some((parent, _)), _) => {
                l.created_subscription_addon_id = Some(subscriptions::create_pending_addon(&mut tx, org, parent.id, before.id, read.offering.id, now).await?);
            }
            (T::License | T::ExternalProduct, _, assigned, _) => {
                let assigned = assigned.map(|(s, _)| s);
                let license = licenses::create_pending(&mut tx, org, customer, before.id, &read.offering, offering, assigned.as_ref(), now).await?;
                l.created_license_id = Some(license.license_id);
                created_events.push(Event::LicenseCreated(license));
            }
            (T::SimCard, _, Some((sub, its_offering)), Some(sim)) => {
                let s = subscriptions::change_sim(&mut tx, org, sub, sim, its_offering, now).await?;
                created_events.push(Event::SubscriptionUpdated(s));
            }
            (t, ..) => return Err(Error::Internal(format!("line {} of type {t} lacks what its check required", l.line_item_id))),
        }
        l.status = LINE_ITEM.next(LineOp::Submit, l.status)?;
    }
    let mut after = before.clone();
    after.status = submitted;
    after.submitted_at = Some(now);
    after.updated_at = now;
    after.doc = doc.to_stored();
    if !Store::update_order(&mut tx, &after, &before).await? {
        drop(tx);
        return Err(moved_meanwhile(caller, before.id, OrderOp::Submit).await);
    }
    let order = record_transition(&mut tx, &before, &after, now, Some(Event::OrderSubmitted)).await?;
    for event in &created_events {
        events::record(&mut tx, org, now, event).await?;
    }
    tx.commit().await?;
    Ok(order)
}
