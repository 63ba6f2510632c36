//! The domain core: rules of customers and users, independent of HTTP.

pub mod customers;
pub mod users;
pub mod values;

use crate::api::generated::bullfinch::types::CustomerRole;
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
    pub now: DateTime<Utc>,
}

/// A stored role name -> its wire enum (only valid names are ever stored).
pub fn customer_role(stored: &str) -> CustomerRole {
    stored.parse().unwrap_or(CustomerRole::Member)
}
