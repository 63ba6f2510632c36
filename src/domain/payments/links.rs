//! Payment links: creating one (rule 2: only for an order that would
//! submit), cancelling, expiring by the clock, and closing the link of an
//! order that changed.

use super::collectable::{Collecting, INVOICE_LIFETIME_DAYS, Of, insert, new_link};
use super::enabled::provider;
use super::{closing, render};
use crate::domain::access::Role;
use crate::domain::{Caller, customers, orders};
use crate::error::{Detail, Error, InternalCode, Result};
use crate::events::{self, Event};
use crate::states::payments::{LINK, LinkOp, PaymentIntentStatus, PaymentLinkStatus, PaymentProfileStatus};
use crate::store::{LinkRow, OrderRow, Stateful, Store};
use crate::wire::latest as wire;
use chrono::{DateTime, Duration, Utc};
use futures::future::BoxFuture;
use uuid::Uuid;

/// An order's link expires unpaid after this long at most.
pub const LIFETIME_HOURS: i64 = 24;

/// What a link asks beyond the payment, each false when left out.
#[derive(Clone, Copy)]
struct Asks {
    save: bool,
    set_default: bool,
    autopay: bool,
}

impl Asks {
    fn of(req: &wire::CreatePaymentLinkRequest) -> Asks {
        Asks { save: req.save_payment_profile, set_default: req.set_as_default_payment_profile, autopay: req.grant_autopay_consent }
    }
}

/// `v` as an absolute http or https URL (where a page sends the payer),
/// written as the URL parser writes it: what is stored is what a
/// `Location` header can carry (the parser drops tabs and line breaks and
/// escapes what a header may not hold). None when it is no such URL.
pub(super) fn http_url(v: &str) -> Option<String> {
    url::Url::parse(v).ok().filter(|u| matches!(u.scheme(), "http" | "https") && u.has_host()).map(String::from)
}

/// The request's fields that must agree with each other (400 for each that
/// does not, all at once).
fn check_fields(req: &wire::CreatePaymentLinkRequest, asks: Asks, now: DateTime<Utc>) -> Result<()> {
    let lifetime = if req.invoice_id.is_some() { Duration::days(INVOICE_LIFETIME_DAYS) } else { Duration::hours(LIFETIME_HOURS) };
    let mut bad = vec![];
    if req.order_id.is_some() && req.invoice_id.is_some() {
        bad.push(Detail::new("invoiceId", "exactly_one", "give orderId or invoiceId, not both"));
    }
    if req.order_id.is_none() && req.invoice_id.is_none() {
        bad.push(Detail::new("orderId", "required", "give orderId or invoiceId"));
    }
    if asks.set_default && !asks.save {
        bad.push(Detail::new("setAsDefaultPaymentProfile", "requires_save_payment_profile", "needs savePaymentProfile"));
    }
    if asks.autopay && !asks.save {
        bad.push(Detail::new("grantAutopayConsent", "requires_save_payment_profile", "needs savePaymentProfile"));
    }
    for (field, value) in [("returnUrl", &req.return_url), ("cancelUrl", &req.cancel_url)] {
        if let Some(v) = value
            && http_url(v).is_none()
        {
            bad.push(Detail::new(field, "invalid_url", "must be an absolute http or https URL"));
        }
    }
    if let Some(at) = req.expires_at {
        if at <= now {
            bad.push(Detail::new("expiresAt", "in_the_past", "must be in the future"));
        } else if at > now + lifetime {
            let most = if req.invoice_id.is_some() { "at most 30 days from now" } else { "at most 24 hours from now" };
            bad.push(Detail::new("expiresAt", "too_far", most));
        }
    }
    if !bad.is_empty() {
        return Err(Error::Invalid(bad));
    }
    Ok(())
}

/// The order named by `key`, the body field `orderId` (404 naming it).
pub(super) async fn order_named(caller: &Caller, key: &str) -> Result<OrderRow> {
    orders::find(caller, key).await.map_err(|e| match e {
        Error::NotFound { code, .. } => Error::missing_reference(code, "orderId", "orderId names no order of this organisation"),
        e => e,
    })
}

/// The order named by `key` (body field `orderId`) if collection may start
/// for it: the caller a MANAGER of its customer; rule 2, what submission
/// would refuse, refused now with what submission answers; something to
/// pay now. The order as read, priced, and its initial invoice total.
pub(super) async fn collectable(caller: &Caller, key: &str) -> Result<(OrderRow, wire::Order, i64)> {
    let order = order_named(caller, key).await?;
    caller.require_role(order.customer_id, Role::Manager)?;
    orders::submission::ready(&order)?;
    orders::submission::check(caller, &order).await?;
    let priced = orders::view(caller, &order.id.to_string()).await?;
    let amount = priced.pricing.initial_invoice.total_minor;
    if amount <= 0 {
        return Err(Error::Conflict {
            code: InternalCode::NothingToPay,
            message: "The order has nothing to pay now; save a payment method with a payment profile session instead.".into(),
            property: "orderId",
        });
    }
    Ok((order, priced, amount))
}

/// The order named by the body's `orderId`, if collection may start for
/// it (`collectable`).
async fn order_collecting(caller: &Caller, key: &str) -> Result<Collecting> {
    let (order, priced, amount) = collectable(caller, key).await?;
    Ok(Collecting {
        customer_id: order.customer_id,
        currency: order.currency.clone(),
        amount_minor: amount,
        lines: serde_json::to_value(render::lines_of(&priced)).expect("JSON"),
        description: format!("Order {}", order.id),
        until: Some(order.expires_at),
        of: Of::Order(order),
    })
}

/// How a link's `invoiceId` is read: the invoices' own reading of it, as
/// the link collects it (`invoices::collect::link_collecting`), handed in
/// by the caller, since the invoices sit above payments and collect
/// through them.
pub type InvoiceCollecting = for<'a> fn(&'a Caller, &'a str) -> BoxFuture<'a, Result<Collecting>>;

pub async fn create(
    caller: &Caller,
    public_url: &str,
    req: wire::CreatePaymentLinkRequest,
    invoice_collecting: InvoiceCollecting,
) -> Result<wire::PaymentLink> {
    let now = caller.now;
    let asks = Asks::of(&req);
    check_fields(&req, asks, now)?;
    let collecting = match (&req.order_id, &req.invoice_id) {
        (Some(order), None) => order_collecting(caller, order).await?,
        (None, Some(invoice)) => invoice_collecting(caller, invoice).await?,
        (Some(_), Some(_)) | (None, None) => return Err(Error::Internal("a link for both or nothing passed its checks".into())),
    };
    let customer = collecting.customer_id;
    let profile = match &req.payment_profile_id {
        Some(key) => Some(super::profiles::usable(caller, key, customer).await?),
        None => None,
    };
    let provider = provider(caller, req.payment_provider.map(Into::into), profile.as_ref().map(|p| p.provider)).await?;
    if let Some(p) = &profile
        && p.provider != provider
    {
        return Err(Error::Conflict {
            code: InternalCode::PaymentProfileNotUsable,
            message: format!("The payment profile is kept by {}, not {}.", p.provider.as_str(), provider.as_str()),
            property: "paymentProfileId",
        });
    }
    if asks.autopay && !asks.set_default {
        let customer = customers::find(caller, &customer.to_string()).await?;
        let default = customer.billing.as_ref().and_then(|b| b.default_payment_profile_id.clone());
        let usable = match default.as_deref().and_then(|d| Uuid::parse_str(d).ok()) {
            Some(id) => caller.store.profile(caller.org, id).await?.is_some_and(|p| p.status == PaymentProfileStatus::Active),
            None => false,
        };
        if !usable {
            return Err(Error::Conflict {
                code: InternalCode::DefaultPaymentProfileRequired,
                message:
                    "Autopay consent needs a usable default payment profile: set setAsDefaultPaymentProfile, or give the customer an ACTIVE default first."
                        .into(),
                property: "grantAutopayConsent",
            });
        }
    }
    let lifetime = if collecting.invoice_id().is_some() { Duration::days(INVOICE_LIFETIME_DAYS) } else { Duration::hours(LIFETIME_HOURS) };
    let mut expires_at = req.expires_at.unwrap_or(now + lifetime);
    if let Some(until) = collecting.until {
        expires_at = expires_at.min(until);
    }
    let link = new_link(caller, public_url, &collecting, provider, expires_at, req.description.clone());
    let link = LinkRow {
        profile_id: profile.map(|p| p.id),
        save_profile: asks.save,
        set_default: asks.set_default,
        autopay: asks.autopay,
        return_url: req.return_url.as_deref().and_then(http_url),
        cancel_url: req.cancel_url.as_deref().and_then(http_url),
        metadata: req.metadata.map(|m| m.0),
        ..link
    };
    let mut tx = caller.store.begin().await?;
    collecting.claim(&mut tx).await?;
    insert(&mut tx, caller, &collecting, &link).await?;
    tx.commit().await?;
    Ok(render::link(&link))
}

pub async fn cancel(caller: &Caller, key: &str) -> Result<wire::PaymentLink> {
    let link = super::find_link(caller, key).await?;
    caller.require_role(link.customer_id, Role::Manager)?;
    LINK.next(LinkOp::Cancel, link.status)?;
    let intent = caller.store.intent(caller.org, link.intent_id).await?;
    if intent.is_some_and(|i| i.status == PaymentIntentStatus::Processing) {
        return Err(Error::Conflict {
            code: InternalCode::PaymentInProgress,
            message: "A payment on the link's page is being processed; try again once it has settled.".into(),
            property: "status",
        });
    }
    let mut tx = caller.store.begin().await?;
    let Some(after) = closing::close(&mut tx, &link, LinkOp::Cancel, caller.now).await? else {
        // the move that beat it, read in the transaction (on SQLite's
        // shared writer it may not be committed yet)
        let now: Option<PaymentLinkStatus> = Store::status_in(&mut tx, Stateful::PaymentLinks, caller.org, link.id).await?;
        return Err(now.and_then(|s| LINK.next(LinkOp::Cancel, s).err()).unwrap_or_else(|| Error::changed_meanwhile("payment link")));
    };
    tx.commit().await?;
    Ok(render::link(&after))
}

/// Moves an ACTIVE link past its expiry to EXPIRED (`payment_link.expired`,
/// dated at the expiry). The link as it now is.
pub async fn expire_if_due(caller: &Caller, row: LinkRow) -> Result<LinkRow> {
    if LINK.target(LinkOp::Expire, row.status).is_none() || row.expires_at > caller.now {
        return Ok(row);
    }
    let at = row.expires_at;
    let mut tx = caller.store.begin().await?;
    match closing::close(&mut tx, &row, LinkOp::Expire, at).await? {
        Some(after) => {
            events::record(&mut tx, caller.org, at, &Event::PaymentLinkExpired(render::link(&after))).await?;
            tx.commit().await?;
            Ok(after)
        }
        None => {
            drop(tx);
            caller.store.link(caller.org, row.id).await?.ok_or_else(|| Error::Internal(format!("link {} vanished", row.id)))
        }
    }
}

/// The payment.link_expiry job: expires link `id` of `org` if it is still
/// ACTIVE past its expiry at `now` (safe to run again).
pub async fn expire(store: &Store, org: Uuid, id: Uuid, now: DateTime<Utc>) -> Result<()> {
    if let Some(row) = store.link(org, id).await? {
        expire_if_due(&Caller::system(store, org, now), row).await?;
    }
    Ok(())
}
