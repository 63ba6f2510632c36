//! Licenses (business telephony features, external products): the reads
//! of them (a read shows what fell due done). Below them, from the bottom
//! up: how a license shows (`shown`), its lifecycle (`lifecycle`: its
//! table, its moves and those following its subscription), what order
//! submission and an add-on create (`create`), and what falls due on a
//! date (`scheduled`). Above them, the moves a request asks for
//! (`cancel`, `offerings`).

pub mod cancel;
pub mod create;
pub mod lifecycle;
pub mod offerings;
pub mod render;
pub mod scheduled;

use super::catalog::Offerings;
use super::{Caller, customers, subscriptions};
use crate::error::{Error, InternalCode, Result};
use crate::store::{Cursor, LicenseFilter, LicenseRow, limit_or_default};
use crate::wire::latest as wire;
use crate::wire::latest::params::LicenseListQuery;
use render::shown;
use uuid::Uuid;

/// The license `key`, if the caller sees its customer; else 404. What is
/// due by now is done first: a read shows it done.
pub async fn find(caller: &Caller, key: &str) -> Result<LicenseRow> {
    let not_found = || Error::not_found(InternalCode::LicenseNotFound, "license");
    let id = Uuid::parse_str(key).map_err(|_| not_found())?;
    let row = caller.store.license(caller.org, id).await?.filter(|l| caller.sees_customer(l.customer_id)).ok_or_else(not_found)?;
    scheduled::apply_if_due(caller, row).await
}

pub async fn view(caller: &Caller, key: &str) -> Result<wire::License> {
    shown(caller, &mut Offerings::default(), &find(caller, key).await?).await
}

pub async fn list(caller: &Caller, q: LicenseListQuery) -> Result<wire::LicenseList> {
    let after = q.cursor.as_deref().map(Cursor::decode).transpose()?;
    let filter = LicenseFilter {
        customers: customers::find_all(caller, &q.customer_id).await?,
        statuses: super::filter_of::<wire::LicenseStatus, _>("status", &q.status)?,
        subscriptions: subscriptions::find_all(caller, &q.subscription_id).await?,
        visible_to: caller.viewer(),
    };
    let page = caller.store.licenses(caller.org, &filter, after, limit_or_default(q.limit)).await?;
    // (what is due by now shows done; the page's rows are those the filter
    // found before it)
    let (mut items, mut offerings) = (Vec::with_capacity(page.items.len()), Offerings::default());
    for row in page.items {
        items.push(shown(caller, &mut offerings, &scheduled::apply_if_due(caller, row).await?).await?);
    }
    Ok(wire::LicenseList { items, pagination: wire::Pagination { next_cursor: page.next.map(Cursor::encode) } })
}
