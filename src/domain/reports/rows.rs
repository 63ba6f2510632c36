//! What each report holds: its columns, and its rows read a page at a
//! time in the order they were created. A row is the object the API's own
//! read shows (rendered by the same code), and each column a field of it,
//! so a report says what the API says.

use crate::domain::Caller;
use crate::domain::usage::{Included, period_day, period_of};
use crate::domain::webhooks::{log as event_log, revision};
use crate::error::Result;
use crate::kinds::ReportKey;
use crate::store::{Cursor, EventFilter, IntentFilter, InvoiceFilter, OrderFilter, Period, SubscriptionFilter};
use serde_json::Value;
use std::collections::HashMap;
use uuid::Uuid;

/// Rows read per query: large enough that a page's query costs little per
/// row, small enough that a page is a few hundred kilobytes.
const PAGE: usize = 500;

/// A column: its name, and where its value is in the API's object (a JSON
/// pointer).
pub type Column = (&'static str, &'static str);

const SUBSCRIPTIONS: &[Column] = &[
    ("subscriptionId", "/subscriptionId"),
    ("referenceId", "/referenceId"),
    ("customerId", "/customer/customerId"),
    ("customerName", "/customer/name"),
    ("productOfferingId", "/productOffering/productOfferingId"),
    ("productOfferingName", "/productOffering/name"),
    ("type", "/type"),
    ("status", "/status"),
    ("msisdn", "/msisdn"),
    ("simType", "/simType"),
    ("iccid", "/iccid"),
    ("currency", "/currency"),
    ("createdAt", "/createdAt"),
    ("activatedAt", "/activatedAt"),
    ("cancelledAt", "/cancelledAt"),
    ("endedAt", "/endedAt"),
    ("renewsOn", "/renewsOn"),
    ("updatedAt", "/updatedAt"),
];

const USAGE: &[Column] = &[
    ("subscriptionId", "/subscriptionId"),
    ("customerId", "/customerId"),
    ("msisdn", "/msisdn"),
    ("periodStart", "/periodStart"),
    ("periodEnd", "/periodEnd"),
    ("dataUsedMb", "/data/used"),
    ("dataIncludedMb", "/data/included"),
    ("voiceUsedSeconds", "/voice/used"),
    ("voiceIncludedSeconds", "/voice/included"),
    ("smsUsed", "/sms/used"),
    ("smsIncluded", "/sms/included"),
    ("internationalVoiceSeconds", "/internationalVoice/usedSeconds"),
    ("internationalVoiceChargedMinor", "/internationalVoice/chargedMinor"),
    ("currency", "/internationalVoice/currency"),
    ("updatedAt", "/updatedAt"),
];

const ORDERS: &[Column] = &[
    ("orderId", "/orderId"),
    ("referenceId", "/referenceId"),
    ("customerId", "/customer/customerId"),
    ("customerName", "/customer/name"),
    ("status", "/status"),
    ("lineItemCount", "/lineItemCount"),
    ("currency", "/pricing/currency"),
    ("totalMinor", "/pricing/totalMinor"),
    ("expiresAt", "/expiresAt"),
    ("createdAt", "/createdAt"),
    ("updatedAt", "/updatedAt"),
];

const PAYMENT_INTENTS: &[Column] = &[
    ("paymentIntentId", "/paymentIntentId"),
    ("customerId", "/customerId"),
    ("status", "/status"),
    ("amountMinor", "/amountMinor"),
    ("currency", "/currency"),
    ("description", "/description"),
    ("dueAt", "/dueAt"),
    ("createdAt", "/createdAt"),
    ("updatedAt", "/updatedAt"),
];

const INVOICES: &[Column] = &[
    ("invoiceId", "/invoiceId"),
    ("number", "/number"),
    ("customerId", "/customerId"),
    ("status", "/status"),
    ("currency", "/currency"),
    ("billingDate", "/billingDate"),
    ("billingMethod", "/billingMethod"),
    ("autoPay", "/autoPay"),
    ("subtotalMinor", "/subtotalMinor"),
    ("totalDiscountsMinor", "/totalDiscountsMinor"),
    ("taxAmountMinor", "/taxAmountMinor"),
    ("totalMinor", "/totalMinor"),
    ("finalizedAt", "/finalizedAt"),
    ("dueAt", "/dueAt"),
    ("paidAt", "/paidAt"),
    ("paymentMethod", "/paymentMethod"),
    ("paymentReference", "/paymentReference"),
    ("paymentIntentId", "/paymentIntentId"),
    ("createdAt", "/createdAt"),
    ("updatedAt", "/updatedAt"),
];

const EVENTS: &[Column] = &[("eventId", "/eventId"), ("type", "/type"), ("occurredAt", "/occurredAt"), ("data", "/data")];

/// The columns of `key`'s report, in order.
pub fn columns(key: ReportKey) -> &'static [Column] {
    match key {
        ReportKey::Subscriptions => SUBSCRIPTIONS,
        ReportKey::Usage => USAGE,
        ReportKey::Orders => ORDERS,
        ReportKey::PaymentIntents => PAYMENT_INTENTS,
        ReportKey::Invoices => INVOICES,
        ReportKey::Events => EVENTS,
    }
}

/// What a run reads: its report, the period and the customer it asked for.
pub struct Source {
    pub key: ReportKey,
    pub period: Period,
    pub customer: Option<Uuid>,
}

/// One page of rows, as the API shows each, and where the next begins.
pub struct Rows {
    pub items: Vec<Value>,
    pub next: Option<Cursor>,
}

fn rows<T: serde::Serialize>(items: impl IntoIterator<Item = T>, next: Option<Cursor>) -> Rows {
    Rows { items: items.into_iter().map(|i| crate::wire::to_json(&i)).collect(), next }
}

impl Source {
    /// Brings what is due by now up to date first, as a list does.
    pub async fn prepare(&self, caller: &Caller) -> Result<()> {
        match self.key {
            ReportKey::Subscriptions | ReportKey::Usage => crate::domain::subscriptions::scheduled::apply_all_due(caller).await,
            ReportKey::Invoices => crate::domain::invoices::due::apply_all_due(caller).await,
            _ => Ok(()),
        }
    }

    /// The page after `after` (from the first when None).
    pub async fn page(&self, caller: &Caller, after: Option<Cursor>) -> Result<Rows> {
        let (store, org, customers) = (&caller.store, caller.org, self.customer.map(|c| vec![c]));
        Ok(match self.key {
            ReportKey::Subscriptions => {
                let filter = SubscriptionFilter { customers, created: self.period, ..Default::default() };
                let page = store.subscriptions(org, &filter, after, PAGE).await?;
                let mut offerings = crate::domain::catalog::Offerings::default();
                let mut items = Vec::with_capacity(page.items.len());
                for row in &page.items {
                    items.push(crate::domain::subscriptions::shown::shown(caller, &mut offerings, row).await?);
                }
                rows(items, page.next)
            }
            ReportKey::Usage => self.usage(caller, customers, after).await?,
            ReportKey::Orders => {
                let page = store.orders(org, &OrderFilter { customers, created: self.period, ..Default::default() }, after, PAGE).await?;
                rows(page.items.iter().map(crate::domain::orders::render::list_item).collect::<Result<Vec<_>>>()?, page.next)
            }
            ReportKey::PaymentIntents => {
                let page = store.intents(org, &IntentFilter { customers, created: self.period, ..Default::default() }, after, PAGE).await?;
                rows(page.items.iter().map(crate::domain::payments::render::intent_item), page.next)
            }
            ReportKey::Invoices => {
                let page = store.invoices(org, &InvoiceFilter { customers, created: self.period, ..Default::default() }, after, PAGE).await?;
                rows(page.items.iter().map(crate::domain::invoices::render::invoice).collect::<Result<Vec<_>>>()?, page.next)
            }
            ReportKey::Events => {
                // an event at `from` is in: the filter's bound is exclusive
                let from = self.period.from.map(|f| f - chrono::Duration::microseconds(1));
                let page = store.events(org, &EventFilter { types: vec![], after: from, before: self.period.to }, after, PAGE).await?;
                let revision = revision::of(store, org, caller.now.date_naive()).await?;
                rows(page.items.into_iter().map(|e| event_log::envelope(e, revision)).collect::<Result<Vec<_>>>()?, page.next)
            }
        })
    }

    /// A page of subscriptions' recorded periods within the period asked
    /// for, each as the usage read shows it (without its add-on packages,
    /// which are what is left now, not what a past period had).
    async fn usage(&self, caller: &Caller, customers: Option<Vec<Uuid>>, after: Option<Cursor>) -> Result<Rows> {
        let filter = SubscriptionFilter { customers, activated: true, ..Default::default() };
        let page = caller.store.subscriptions(caller.org, &filter, after, PAGE).await?;
        let ids: Vec<Uuid> = page.items.iter().map(|s| s.id).collect();
        let (from, to) = (self.period.from.map(|t| t.date_naive()), self.period.to.map(|t| t.date_naive()));
        let mut periods: HashMap<Uuid, Vec<_>> = HashMap::new();
        for (id, start, usage) in caller.store.periods_of(caller.org, &ids, from, to).await? {
            periods.entry(id).or_default().push((start, usage));
        }
        let mut offerings = HashMap::new();
        let mut items = vec![];
        for s in &page.items {
            let Some(recorded) = periods.remove(&s.id) else { continue };
            if !offerings.contains_key(&s.offering_id) {
                let offering = caller.store.offering(caller.org, s.offering_id).await?;
                let offering = offering.ok_or_else(|| crate::error::Error::Internal(format!("offering {} vanished", s.offering_id)))?;
                offerings.insert(s.offering_id, Included::of(&offering));
            }
            for (start, usage) in recorded {
                // a period's first day, by the subscription's billing day
                let start = period_of(period_day(s), start).0;
                items.push(crate::domain::usage::to_wire(s, &offerings[&s.offering_id], start, &usage, &[], caller.now));
            }
        }
        Ok(rows(items, page.next))
    }
}
