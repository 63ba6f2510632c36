//! The followers table: for each `Change` a resource tells, what the other
//! resources do in consequence, in the transaction that made it, in the
//! order written here. Read it to know everything a move sets off; add a
//! follower (workflows will be one) here and nowhere else.
//!
//! The resources do not import this module: they call `Caller::follow`,
//! so each sits below the followers it never names.

use crate::domain::change::Change;
use crate::domain::{Caller, inventory, invoices, licenses, payments, porting, subscription_addons};
use crate::error::Result;
use crate::store::Tx;

impl Caller {
    /// Runs the followers of `change` in `tx`.
    pub async fn follow(&self, tx: &mut Tx, change: Change<'_>) -> Result<()> {
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
            Change::OrderMoved { order, at } => payments::closing::order_moved(tx, self.org, order, at).await?,
            Change::OrderSubmittedUnpaid { order, at } => invoices::billed::order_submitted_unpaid(tx, self, order, at).await?,
            Change::InvoiceClosed { invoice, except, at } => payments::closing::invoice_closed(tx, self.org, invoice, except, at).await?,
            Change::InvoiceChargeDeclined { invoice } => invoices::collect::declined(tx, self, invoice).await?,
        }
        Ok(())
    }
}
