//! Each organisation's webhook revision: the shape of its event payloads.
//! It starts at the oldest supported revision and moves only when the
//! integrator moves it (SERVICE.md); one past its support date resolves to
//! the oldest supported one, as a request's does. Never set is stored as
//! no value, which resolves the same way.

use crate::error::{Error, Result};
use crate::store::Store;
use crate::wire::revision::Revision;
use chrono::NaiveDate;
use uuid::Uuid;

/// The revision `org`'s events are rendered in on `today`.
pub async fn of(store: &Store, org: Uuid, today: NaiveDate) -> Result<&'static Revision> {
    let set = store.webhook_revision(org).await?;
    Ok(resolve(set.as_deref(), today))
}

fn resolve(set: Option<&str>, today: NaiveDate) -> &'static Revision {
    match set.and_then(Revision::by_name) {
        Some(r) => r.or_oldest_supported(today),
        None => Revision::oldest_supported(today),
    }
}

/// Moves `org`'s webhook revision to `name`, a revision supported on
/// `today`.
pub async fn set(store: &Store, org: Uuid, name: &str, today: NaiveDate) -> Result<&'static Revision> {
    let known: Vec<&str> = Revision::all().iter().map(|r| r.name).collect();
    let revision = Revision::by_name(name)
        .ok_or_else(|| Error::invalid("revision", "unknown_api_revision", format!("unknown revision {name:?}; known: {}", known.join(", "))))?;
    if !revision.supported_on(today) {
        return Err(Error::invalid("revision", "unsupported_api_revision", format!("{name} is past its support date")));
    }
    if !store.set_webhook_revision(org, revision.name).await? {
        return Err(Error::not_found(crate::error::InternalCode::NotFound, "organisation"));
    }
    Ok(revision)
}
