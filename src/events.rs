//! Events: one `Event` type with a variant for each of SERVICE.md's 32
//! event types (and the payments area's own six, the invoices' own, the
//! report runs' own two), its payload the wire type of its resource; `record` writes
//! one to the outbox in the transaction of the change it tells of, and
//! `render` shows its payload in any revision with the endpoints' own
//! conversions. The documents publish every type under `x-webhooks`; tests
//! hold the published types equal to the variants and every recorded event
//! among them.

use crate::error::{Error, Result};
use crate::store::{Store, Tx};
use crate::wire::Rendered;
use crate::wire::latest as wire;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The custom.workflow_triggered payload: an array of key/value pairs (one
/// keyed `customType`), unlike every other payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CustomFields(pub Vec<wire::CustomEventField>);

impl Rendered for CustomFields {
    fn render(self, _revision: &str) -> serde_json::Result<serde_json::Value> {
        serde_json::to_value(self)
    }
}

macro_rules! events {
    ($($variant:ident($payload:ty) = $name:literal,)*) => {
        /// Every event type of SERVICE.md, each with the payload the
        /// documents publish for it under `x-webhooks` (those not recorded
        /// yet say with which area they arrive).
        #[derive(Debug, Clone, PartialEq)]
        pub enum Event {
            $($variant($payload),)*
        }

        impl Event {
            /// Every event type's name, as `type` carries it.
            pub const TYPES: &'static [&'static str] = &[$($name),*];

            /// The dispatch key: `order.submitted`.
            pub fn type_name(&self) -> &'static str {
                match self {
                    $(Event::$variant(_) => $name,)*
                }
            }

            /// The payload as the newest revision shows it (as stored).
            pub fn data(&self) -> serde_json::Value {
                match self {
                    $(Event::$variant(p) => crate::wire::to_json(p),)*
                }
            }

            /// The payload as `revision` shows it.
            pub fn render(self, revision: &str) -> Result<serde_json::Value> {
                let rendered = match self {
                    $(Event::$variant(p) => p.render(revision),)*
                };
                rendered.map_err(|e| Error::Internal(format!("rendering an event: {e}")))
            }

            /// An event read back from the outbox.
            pub fn parse(type_name: &str, data: serde_json::Value) -> Result<Event> {
                let bad = |e: serde_json::Error| Error::Internal(format!("stored event {type_name}: {e}"));
                match type_name {
                    $($name => Ok(Event::$variant(serde_json::from_value(data).map_err(bad)?)),)*
                    other => Err(Error::Internal(format!("stored event of unknown type {other:?}"))),
                }
            }
        }
    };
}

events! {
    CustomWorkflowTriggered(CustomFields) = "custom.workflow_triggered",
    CustomerCreated(wire::Customer) = "customer.created",
    CustomerUpdated(wire::Customer) = "customer.updated",
    InvoiceFinalized(wire::Invoice) = "invoice.finalized",
    InvoicePaid(wire::Invoice) = "invoice.paid",
    InvoicePaymentFailed(wire::Invoice) = "invoice.payment_failed",
    InvoiceUncollectible(wire::Invoice) = "invoice.uncollectible",
    InvoiceVoided(wire::Invoice) = "invoice.voided",
    LicenseActivated(wire::License) = "license.activated",
    LicenseRenewed(wire::License) = "license.renewed",
    LicenseCreated(wire::License) = "license.created",
    LicenseUpdated(wire::License) = "license.updated",
    LicenseCancelled(wire::License) = "license.cancelled",
    LicenseEnded(wire::License) = "license.ended",
    OrderCreated(wire::Order) = "order.created",
    OrderUpdated(wire::Order) = "order.updated",
    OrderSubmitted(wire::Order) = "order.submitted",
    OrderCancelled(wire::Order) = "order.cancelled",
    OrderExpired(wire::Order) = "order.expired",
    OrderStatusChanged(wire::OrderStatusChange) = "order.statusChanged",
    OrderLineItemStatusChanged(wire::OrderLineItemStatusChange) = "order.lineItemStatusChanged",
    PaymentIntentSucceeded(wire::PaymentIntent) = "payment_intent.succeeded",
    PaymentIntentPaymentFailed(wire::PaymentIntent) = "payment_intent.payment_failed",
    PaymentIntentRefunded(wire::PaymentIntent) = "payment_intent.refunded",
    PaymentLinkCompleted(wire::PaymentLink) = "payment_link.completed",
    PaymentLinkExpired(wire::PaymentLink) = "payment_link.expired",
    PaymentProfileCreated(wire::PaymentProfile) = "payment_profile.created",
    ReportRunSucceeded(wire::ReportRun) = "report_run.succeeded",
    ReportRunFailed(wire::ReportRun) = "report_run.failed",
    SubscriptionCreated(wire::Subscription) = "subscription.created",
    SubscriptionUpdated(wire::Subscription) = "subscription.updated",
    SubscriptionActivated(wire::Subscription) = "subscription.activated",
    SubscriptionFirstActivated(wire::Subscription) = "subscription.first_activated",
    SubscriptionPaused(wire::Subscription) = "subscription.paused",
    SubscriptionRestored(wire::Subscription) = "subscription.restored",
    SubscriptionSuspended(wire::Subscription) = "subscription.suspended",
    SubscriptionCancelled(wire::Subscription) = "subscription.cancelled",
    SubscriptionEnded(wire::Subscription) = "subscription.ended",
    SubscriptionRenewed(wire::Subscription) = "subscription.renewed",
    SubscriptionSubscriberSet(wire::Subscription) = "subscription.subscriber_set",
    SubscriptionQuotaNotification(wire::QuotaNotification) = "subscription.quotaNotification",
    SubscriptionPortInCreated(wire::Subscription) = "subscription.portIn.created",
    SubscriptionPortInUpdated(wire::Subscription) = "subscription.portIn.updated",
    SubscriptionPortInCompleted(wire::Subscription) = "subscription.portIn.completed",
    SubscriptionPortInFailed(wire::Subscription) = "subscription.portIn.failed",
    SubscriptionEsimActivationCodeViewed(wire::EsimActivationCodeViewed) = "subscription.esim_activation_code_viewed",
}

/// Writes `event` to the organisation's outbox, inside the transaction of
/// the change it tells of, dated `at`. The one way an event is recorded.
pub async fn record(tx: &mut Tx, org: Uuid, at: DateTime<Utc>, event: &Event) -> Result<()> {
    Store::record_event(tx, org, event.type_name(), at, &event.data()).await
}

#[cfg(test)]
mod tests {
    use super::Event;

    #[test]
    fn there_is_a_variant_for_each_of_the_46_types() {
        let mut types = Event::TYPES.to_vec();
        types.sort();
        types.dedup();
        assert_eq!(types.len(), 46);
    }

    /// The documents publish exactly the variants (and the integration
    /// tests hold every recorded event among the published ones).
    #[test]
    fn the_documents_publish_every_variant() {
        for document in crate::wire::DOCUMENTS {
            let doc: serde_json::Value = serde_json::from_str(document).unwrap();
            let mut published: Vec<&str> = doc["x-webhooks"].as_object().expect("x-webhooks").keys().map(String::as_str).collect();
            let mut types = Event::TYPES.to_vec();
            published.sort();
            types.sort();
            assert_eq!(published, types);
        }
    }
}
