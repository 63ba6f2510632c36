//! The domain core: the service's rules, independent of HTTP.

pub mod access;
pub mod catalog;
pub mod customers;
pub mod licenses;
pub mod login;
pub mod money;
pub mod orders;
pub mod pricing;
pub mod states;
pub mod subscriptions;
pub mod users;
pub mod values;

use crate::wire::latest::CustomerRole;
use crate::store::Store;
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// Who is acting, for which organisation, at what time. Every store query
/// made for a request is scoped by `org`.
#[derive(Clone)]
pub struct Caller {
    pub store: Store,
    pub org: Uuid,
    pub api_key_id: Uuid,
    /// the user of a bearer token sent with the key; None for a key alone
    pub user: Option<std::sync::Arc<access::UserAccess>>,
    pub now: DateTime<Utc>,
}

/// A stored role name -> its wire enum (only valid names are ever stored).
pub fn customer_role(stored: &str) -> CustomerRole {
    stored.parse().unwrap_or(CustomerRole::Member)
}

/// A stored state name -> its wire enum (only valid names are stored, so
/// anything else is a fault of the stored data).
pub fn stored<T: std::str::FromStr>(value: &str, what: &str) -> crate::error::Result<T> {
    value.parse().map_err(|_| crate::error::Error::Internal(format!("stored {what} {value:?}")))
}
