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

/// A column: its name, where its value is in the API's object (a JSON
/// pointer), and whether it is free text (which a CSV file neutralises).
pub type Column = (&'static str, &'static str, Cell);

/// What a column holds, for a spreadsheet's sake (OWASP's CSV injection).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    /// text someone typed (a name, a reference): a cell that would start a
    /// formula is written with a leading `'`
    Text,
    /// what Switchboard itself formats: ids, states, numbers, amounts,
    /// dates, E.164 numbers (a `+46…` msisdn stays one): written as it is
    Typed,
}
use Cell::{Text, Typed};

const SUBSCRIPTIONS: &[Column] = &[
    ("subscriptionId", "/subscriptionId", Typed),
    ("referenceId", "/referenceId", Text),
    ("customerId", "/customer/customerId", Typed),
    ("customerName", "/customer/name", Text),
    ("productOfferingId", "/productOffering/productOfferingId", Typed),
    ("productOfferingName", "/productOffering/name", Text),
    ("type", "/type", Typed),
    ("status", "/status", Typed),
    ("msisdn", "/msisdn", Typed),
    ("simType", "/simType", Typed),
    ("iccid", "/iccid", Typed),
    ("currency", "/currency", Typed),
    ("createdAt", "/createdAt", Typed),
    ("activatedAt", "/activatedAt", Typed),
    ("cancelledAt", "/cancelledAt", Typed),
    ("endedAt", "/endedAt", Typed),
    ("renewsOn", "/renewsOn", Typed),
    ("updatedAt", "/updatedAt", Typed),
];

const USAGE: &[Column] = &[
    ("subscriptionId", "/subscriptionId", Typed),
    ("customerId", "/customerId", Typed),
    ("msisdn", "/msisdn", Typed),
    ("periodStart", "/periodStart", Typed),
    ("periodEnd", "/periodEnd", Typed),
    ("dataUsedMb", "/data/used", Typed),
    ("dataIncludedMb", "/data/included", Typed),
    ("voiceUsedSeconds", "/voice/used", Typed),
    ("voiceIncludedSeconds", "/voice/included", Typed),
    ("smsUsed", "/sms/used", Typed),
    ("smsIncluded", "/sms/included", Typed),
    ("internationalVoiceSeconds", "/internationalVoice/usedSeconds", Typed),
    ("internationalVoiceChargedMinor", "/internationalVoice/chargedMinor", Typed),
    ("currency", "/internationalVoice/currency", Typed),
    ("updatedAt", "/updatedAt", Typed),
];

const ORDERS: &[Column] = &[
    ("orderId", "/orderId", Typed),
    ("referenceId", "/referenceId", Text),
    ("customerId", "/customer/customerId", Typed),
    ("customerName", "/customer/name", Text),
    ("status", "/status", Typed),
    ("lineItemCount", "/lineItemCount", Typed),
    ("currency", "/pricing/currency", Typed),
    ("totalMinor", "/pricing/totalMinor", Typed),
    ("expiresAt", "/expiresAt", Typed),
    ("createdAt", "/createdAt", Typed),
    ("updatedAt", "/updatedAt", Typed),
];

const PAYMENT_INTENTS: &[Column] = &[
    ("paymentIntentId", "/paymentIntentId", Typed),
    ("customerId", "/customerId", Typed),
    ("status", "/status", Typed),
    ("amountMinor", "/amountMinor", Typed),
    ("currency", "/currency", Typed),
    ("description", "/description", Text),
    ("dueAt", "/dueAt", Typed),
    ("createdAt", "/createdAt", Typed),
    ("updatedAt", "/updatedAt", Typed),
];

const INVOICES: &[Column] = &[
    ("invoiceId", "/invoiceId", Typed),
    ("number", "/number", Typed),
    ("customerId", "/customerId", Typed),
    ("status", "/status", Typed),
    ("currency", "/currency", Typed),
    ("billingDate", "/billingDate", Typed),
    ("billingMethod", "/billingMethod", Typed),
    ("autoPay", "/autoPay", Typed),
    ("subtotalMinor", "/subtotalMinor", Typed),
    ("totalDiscountsMinor", "/totalDiscountsMinor", Typed),
    ("taxAmountMinor", "/taxAmountMinor", Typed),
    ("totalMinor", "/totalMinor", Typed),
    ("finalizedAt", "/finalizedAt", Typed),
    ("dueAt", "/dueAt", Typed),
    ("paidAt", "/paidAt", Typed),
    ("paymentMethod", "/paymentMethod", Typed),
    ("paymentReference", "/paymentReference", Text),
    ("paymentIntentId", "/paymentIntentId", Typed),
    ("createdAt", "/createdAt", Typed),
    ("updatedAt", "/updatedAt", Typed),
];

const EVENTS: &[Column] = &[("eventId", "/eventId", Typed), ("type", "/type", Typed), ("occurredAt", "/occurredAt", Typed), ("data", "/data", Text)];

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
                    items.push(crate::domain::subscriptions::render::shown(caller, &mut offerings, row).await?);
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
            if let std::collections::hash_map::Entry::Vacant(e) = offerings.entry(s.offering_id) {
                let offering = caller.store.offering(caller.org, s.offering_id).await?;
                let offering = offering.ok_or_else(|| crate::error::Error::Internal(format!("offering {} vanished", s.offering_id)))?;
                e.insert(Included::of(&offering));
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
