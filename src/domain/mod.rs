//! The domain core: the service's rules, independent of HTTP.

pub mod access;
pub mod catalog;
pub mod change;
pub mod customers;
pub mod cycles;
pub mod follow;
pub mod inventory;
pub mod invoices;
pub mod licenses;
pub mod login;
pub mod offering_change;
pub mod orders;
pub mod payments;
pub mod porting;
pub mod pricing;
pub mod purchases;
pub mod reports;
pub mod sandbox;
pub mod subscribers;
pub mod subscription_addons;
pub mod subscriptions;
pub mod usage;
pub mod users;
pub mod values;
pub mod webhooks;

use crate::store::Store;
use uuid::Uuid;

pub use crate::store::new_id;
pub use access::Caller;

/// The ids a list filter names (ids or `rid_`), each found by `find`,
/// which answers 404 for one the caller may not see; None when the filter
/// names none.
pub async fn find_all<'a, F, Fut>(keys: &'a [String], find: F) -> crate::error::Result<Option<Vec<Uuid>>>
where
    F: Fn(&'a str) -> Fut,
    Fut: std::future::Future<Output = crate::error::Result<Uuid>>,
{
    if keys.is_empty() {
        return Ok(None);
    }
    let mut ids = Vec::with_capacity(keys.len());
    for key in keys {
        ids.push(find(key).await?);
    }
    Ok(Some(ids))
}

/// A list filter's values of query parameter `param` (checked against the
/// document's enum before), as the domain's kind `K` of wire enum `W`.
pub fn filter_of<W: std::str::FromStr, K: From<W>>(param: &'static str, values: &[String]) -> crate::error::Result<Vec<K>> {
    let read = |v: &String| {
        v.parse::<W>().map(K::from).map_err(|_| crate::error::Error::invalid(param, "invalid_value", format!("{v:?} is not one of the allowed values")))
    };
    values.iter().map(read).collect()
}

/// A `referenceId` is free: no other `kind` of the organisation than
/// `except` has it (409 `reference_id_taken` otherwise).
pub async fn check_reference_free(store: &Store, org: Uuid, kind: crate::store::Referenced, reference: &str, except: Option<Uuid>) -> crate::error::Result<()> {
    match store.reference_taken(kind, org, reference, except).await? {
        true => Err(crate::error::Error::reference_taken(kind.noun())),
        false => Ok(()),
    }
}
