//! Submitting an order: every line checked again against the catalog as it
//! is now, then, in one transaction, the order and its lines SUBMITTED and
//! what the lines create (subscriptions, add-ons, licenses, SIM changes)
//! with every event.

use super::events::record_transition;
use super::lines::{Line, OrderDoc, check_lines, context};
use crate::domain::access::Role;
use crate::domain::change::Change;
use crate::domain::inventory::numbers::{self, number_type_of};
use crate::domain::orders::meanwhile::moved_meanwhile;
use crate::domain::{Caller, catalog, customers, licenses, subscriptions};
use crate::error::{Detail, Error, InternalCode, Result};
use crate::events::{self, Event};
use crate::kinds::{NumberType, ProductType as T};
use crate::states::orders::{LINE_ITEM, LineOp, ORDER, OrderOp};
use crate::store::{IdOrRef, OfferingRow, OrderRow, Store, SubscriptionRow, Tx};
use crate::wire::latest as wire;
use std::collections::{HashMap, HashSet};

/// What one line needs read before the transaction (which only writes):
/// its offering, and the subscription it names with that one's offering
/// (and the offering of a change it has scheduled).
struct Reads {
    offering: OfferingRow,
    subscription: Option<(SubscriptionRow, wire::ProductOffering, Option<wire::ProductOffering>)>,
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
            let pending = match &row.life.pending_offering {
                Some(p) => Some(offerings.get(caller, p.offering_id).await?),
                None => None,
            };
            Some((row, its_offering, pending))
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

/// Numbers and references the new subscriptions take must be free: a
/// number in the whole installation (the network is one), a reference
/// within the organisation; and the pool must have a number of its type
/// for each line that leaves its number out. Who holds a number is not
/// said.
async fn check_new_subscriptions(caller: &Caller, doc: &OrderDoc, bad: &mut Vec<Detail>) -> Result<()> {
    let mut numbers = HashSet::new();
    let mut references = HashSet::new();
    let mut assigned: HashMap<NumberType, i64> = HashMap::new();
    // the pool's free numbers of each type, counted once per order
    let mut free: HashMap<NumberType, i64> = HashMap::new();
    for (i, l) in doc.lines.iter().enumerate() {
        let Some(s) = &l.subscription else { continue };
        let field = format!("lineItems[{i}].subscription.msisdn");
        if let Some(m) = &s.msisdn
            && (!numbers.insert(m.to_string()) || caller.store.number_in_use(caller.org, m).await? || caller.store.porting_open(m).await?)
        {
            bad.push(Detail::new(field.clone(), "msisdn_in_use", "the number is in use"));
        }
        // a line without a number, or bringing one, takes one of the pool
        match s.msisdn.is_none() || s.port_in.is_some() {
            false => {}
            true => {
                // (an offering gone is the line check's detail)
                let Some(offering) = caller.store.offering(caller.org, l.product_offering.product_offering_id).await? else { continue };
                let kind = number_type_of(offering.product.category);
                let wanted = assigned.entry(kind).or_default();
                *wanted += 1;
                let have = match free.get(&kind) {
                    Some(&n) => n,
                    None => {
                        // (no order wants more than it has lines)
                        let n = caller.store.free_numbers_up_to(caller.org, kind, caller.now, doc.lines.len() as i64).await?;
                        free.insert(kind, n);
                        n
                    }
                };
                if have < *wanted {
                    bad.push(Detail::new(field, "numbers_unavailable", format!("is left out, and the pool has too few {kind} numbers free for the order")));
                }
            }
        }
        if let Some(r) = &s.reference_id
            && (!references.insert(r.to_string()) || caller.store.subscription_reference_taken(caller.org, r).await?)
        {
            bad.push(Detail::new(format!("lineItems[{i}].subscription.referenceId"), "reference_id_taken", "another subscription has this referenceId"));
        }
    }
    Ok(())
}

/// Whether the order's state lets it be submitted: open, and approved if
/// a MEMBER made it (409 naming what stands in the way).
pub fn ready(before: &OrderRow) -> Result<()> {
    ORDER.next(OrderOp::Submit, before.status)?;
    if before.status == crate::states::orders::OrderStatus::Draft && before.approval_required {
        return Err(Error::Conflict {
            code: InternalCode::OrderNotApproved,
            message: "The order was made by a MEMBER and needs approval by a MANAGER or ADMIN first.".into(),
            property: "status",
        });
    }
    Ok(())
}

pub async fn submit(caller: &Caller, key: &str) -> Result<wire::Order> {
    let before = super::find(caller, key).await?;
    caller.require_role(before.customer_id, Role::Member)?;
    ready(&before)?;
    let checked = match check(caller, &before).await {
        Ok(checked) => checked,
        // a submission that beat this one to the order has taken its
        // lines' numbers: the answer is the state it left
        Err(refused) => {
            let now = super::find(caller, key).await?;
            let moved = now.status != before.status || now.updated_at != before.updated_at;
            return Err(if moved { ORDER.next(OrderOp::Submit, now.status).err().unwrap_or(refused) } else { refused });
        }
    };
    let mut tx = caller.store.begin().await?;
    let Some((order, _)) = write(&mut tx, caller, &before, checked).await? else {
        return Err(moved_meanwhile(&mut tx, caller, before.id, OrderOp::Submit).await);
    };
    // submitted without paying its link: the link collects no more, and
    // its initial invoice is billed
    caller.follow(&mut tx, Change::OrderMoved { order: before.id, at: caller.now }).await?;
    caller.follow(&mut tx, Change::OrderSubmittedUnpaid { order: &order, at: caller.now }).await?;
    tx.commit().await?;
    Ok(order)
}

/// An order checked for submission: its document and what each line
/// needs read, for `write`.
pub struct Checked {
    doc: OrderDoc,
    reads: Vec<Reads>,
    /// whether the organisation has a number pool the lines take from
    pool: bool,
}

/// Every line of `before` checked again against the catalog and the
/// customer as they are now (409 order_validation_failed with a detail per
/// failing field), and what writing it needs read.
pub async fn check(caller: &Caller, before: &OrderRow) -> Result<Checked> {
    let customer = customers::find(caller, &before.customer_id.to_string()).await?;
    let doc = OrderDoc::of(before)?;
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
    Ok(Checked { doc, reads: line_reads, pool: ctx.pool })
}

/// Writes the submission of `before` in `tx`: what each line creates, the
/// order and its lines SUBMITTED, every event. The order, and the events of
/// what the lines created; None when another request moved the order first.
pub async fn write(tx: &mut Tx, caller: &Caller, before: &OrderRow, checked: Checked) -> Result<Option<(wire::Order, Vec<Event>)>> {
    let Checked { mut doc, reads, pool } = checked;
    let now = caller.now;
    // the order is claimed before anything is made for it: a request that
    // moved it meanwhile (another submit, a cancel) wins, and this one
    // meets the state it left instead of the numbers its lines would share
    let mut claimed = before.clone();
    claimed.updated_at = now;
    if !Store::update_order(tx, &claimed, before).await? {
        return Ok(None);
    }
    let (org, customer) = (caller.org, (before.customer_id, before.customer_name.as_str()));
    let mut created_events: Vec<Event> = vec![];
    let mut leases = vec![];
    for (i, (l, read)) in doc.lines.iter_mut().zip(reads).enumerate() {
        let offering = catalog::to_wire(&read.offering)?;
        match (l.product_type, &mut l.subscription, read.subscription, l.sim_type) {
            (T::Subscription, Some(new), _, _) => {
                let id = crate::domain::new_id();
                let kind = number_type_of(read.offering.product.category);
                let (msisdn, lease) = numbers::take(tx, caller, pool, kind, new.number_asked(), id, format!("lineItems[{i}].subscription")).await?;
                leases.extend(lease);
                let terms = subscriptions::terms::bought(&before.currency, &l.price, l.binding_contract, l.upfront_payment);
                let on = subscriptions::NewSubscription { msisdn: Some(msisdn.clone()), ..new.clone() };
                let s = subscriptions::create_pending(tx, org, id, customer, before.id, &read.offering, offering, &on, terms, now).await?;
                l.created_subscription_id = Some(s.subscription_id);
                match (&new.port_in, &new.msisdn) {
                    // the number brought is asked for; the line keeps showing it
                    (Some(port), Some(brought)) => {
                        // with the secrets the order kept apart for the line
                        let secrets = caller.store.port_in_secrets(org, &crate::store::port_in_order_line(before.id, brought)).await?;
                        let details = crate::store::port_in_joined(&crate::wire::to_json(&port.details), secrets);
                        let p = crate::domain::porting::create_in(tx, org, id, brought, details, now).await?;
                        let with_port = wire::Subscription { port_in: Some(crate::domain::porting::to_wire(&p)?), ..s.clone() };
                        created_events.push(Event::SubscriptionCreated(s));
                        created_events.push(Event::SubscriptionPortInCreated(with_port));
                    }
                    // the line shows the number it took from now on
                    _ => {
                        new.msisdn = Some(msisdn);
                        created_events.push(Event::SubscriptionCreated(s));
                    }
                }
            }
            (T::SubscriptionAddon, _, Some((parent, ..)), _) => {
                let bought = (before.id, before.currency.as_str());
                let (id, events) = crate::domain::subscription_addons::lifecycle::create(tx, org, &parent, bought, &read.offering, now).await?;
                l.created_subscription_addon_id = Some(id);
                l.created_license_id = licenses::create::created_by(&events);
                created_events.extend(events);
            }
            (T::License | T::ExternalProduct, _, assigned, _) => {
                let assigned = assigned.map(|(s, ..)| s);
                let bought = (before.id, before.currency.as_str());
                let events = licenses::create::create(tx, org, customer, bought, &read.offering, l.license.as_ref(), offering, assigned.as_ref(), now).await?;
                l.created_license_id = licenses::create::created_by(&events);
                created_events.extend(events);
            }
            (T::SimCard, _, Some((sub, its_offering, pending)), Some(sim)) => {
                let s = subscriptions::change_sim(tx, org, sub, sim, its_offering, pending, now).await?;
                created_events.push(Event::SubscriptionUpdated(s));
            }
            (t, ..) => return Err(Error::Internal(format!("line {} of type {t} lacks what its check required", l.line_item_id))),
        }
        l.status = LINE_ITEM.next(LineOp::Submit, l.status)?;
    }
    // every line has its number: what the leases still hold goes back
    leases.sort();
    leases.dedup();
    for lease in leases {
        Store::use_lease(tx, lease, now).await?;
    }
    let mut after = before.clone();
    after.status = ORDER.next(OrderOp::Submit, before.status)?;
    after.submitted_at = Some(now);
    after.updated_at = now;
    after.doc = doc.to_stored();
    if !Store::update_order(tx, &after, &claimed).await? {
        return Err(Error::Internal(format!("order {} moved while claimed", before.id)));
    }
    let order = record_transition(tx, before, &after, now, Some(Event::OrderSubmitted)).await?;
    for event in &created_events {
        events::record(tx, org, now, event).await?;
    }
    Ok(Some((order, created_events)))
}
