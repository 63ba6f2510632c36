//! The followers table: for each `Change` a resource tells, what the other
//! resources do in consequence, in the transaction that made it, in the
//! order written here. Read it to know everything a move sets off; add a
//! follower (workflows will be one) here and nowhere else.
//!
//! The resources do not import this module: they call `Caller::follow`,
//! so each sits below the followers it never names.

use crate::domain::change::Change;
use crate::domain::{Caller, inventory, invoices, licenses, payments, porting, subscription_addons, subscriptions};
use crate::error::Result;
use crate::store::Tx;
use futures::future::BoxFuture;

impl Caller {
    /// Runs the followers of `change` in `tx`. (Boxed: a follower's own
    /// move may be followed in turn, as a subscription ported out is.)
    pub fn follow<'a>(&'a self, tx: &'a mut Tx, change: Change<'a>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move { self.run_followers(tx, change).await })
    }

    async fn run_followers(&self, tx: &mut Tx, change: Change<'_>) -> Result<()> {
        match change {
            Change::SubscriptionMoved { before, after, at } => {
                // a cancelled subscription lets its SIMs and number go, and
                // its open port-in fails at its next step; its add-ons and
                // licenses follow it (their events after its own)
                inventory::quarantine::subscription_moved(tx, after, at).await?;
                porting::subscription_moved(tx, self, after, at).await?;
                subscription_addons::lifecycle::subscription_moved(tx, self, before, after, at).await?;
                licenses::lifecycle::subscription_moved(tx, self, before, after, at).await?;
            }
            Change::SubscriptionRenewed(renewed) => invoices::billed::subscription_renewed(tx, self, &renewed).await?,
            Change::LicenseRenewed { license, renews, next, at } => invoices::billed::license_renewed(tx, self, license, (renews, next), at).await?,
            Change::OrderMoved { order, at } => payments::closing::order_moved(tx, self.org, order, at).await?,
            Change::OrderSubmittedUnpaid { order, at } => invoices::billed::order_submitted_unpaid(tx, self, order, at).await?,
            Change::InvoiceClosed { invoice, except, at } => payments::closing::invoice_closed(tx, self.org, invoice, except, at).await?,
            Change::NumberPortedOut { subscription, msisdn, at } => {
                subscriptions::write::ported_out(tx, self, subscription, at).await?;
                inventory::numbers::ported_out(tx, self, msisdn, at).await?;
            }
            Change::InvoiceOverdue { invoice, at } => subscriptions::dunning::invoice_overdue(tx, self, invoice, at).await?,
            Change::InvoiceSettled { invoice, why } => subscriptions::dunning::invoice_settled(tx, self, invoice, why).await?,
            Change::InvoiceUncollectible { invoice, at } => subscriptions::dunning::invoice_uncollectible(tx, self, invoice, at).await?,
            Change::InvoiceChargeSucceeded { invoice, intent, link, paid } => {
                *paid = invoices::paid::by_charge(tx, self, invoice, intent, link).await?;
            }
            Change::InvoiceChargeDeclined { invoice } => invoices::collect::declined(tx, self, invoice).await?,
        }
        Ok(())
    }
}
