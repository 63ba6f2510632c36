//! What a user acting through a bearer token may see and change. A key
//! alone acts for the whole organisation; with a token the caller gets the
//! intersection of the key (full or read-only, checked in the request
//! prelude) and the user:
//! - a user sees the customers assigned to them, and the users of those;
//! - MEMBER reads, MANAGER also changes the customer's data, ADMIN also
//!   manages the customer's users;
//! - a support user sees every customer of the organisation and changes
//!   nothing.
//!
//! Seeing decides 404 (an object the caller may not see does not exist for
//! them); changing decides 403. The `Caller` (who acts, for which
//! organisation, when) is declared here with what it may do.

use crate::error::{Error, InternalCode, Result};
use crate::kinds::CustomerRole;
use crate::store::Store;
use crate::store::UserGrants;
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use uuid::Uuid;

/// Who is acting, for which organisation, at what time. Every store query
/// made for a request is scoped by `org`.
#[derive(Clone)]
pub struct Caller {
    pub store: Store,
    pub org: Uuid,
    pub api_key_id: Uuid,
    /// the user of a bearer token sent with the key; None for a key alone
    pub user: Option<std::sync::Arc<UserAccess>>,
    /// the key may only read: it writes nothing and is shown no secret
    pub read_only: bool,
    pub now: DateTime<Utc>,
}

impl Caller {
    /// The organisation `org` itself at `now`: what jobs, hosted pages and
    /// admin commands act as (the key alone's rights, no key's id).
    pub fn system(store: &Store, org: Uuid, now: DateTime<Utc>) -> Caller {
        Caller { store: store.clone(), org, api_key_id: Uuid::nil(), user: None, read_only: false, now }
    }
}

/// A user's role at one customer, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    Member,
    Manager,
    Admin,
}

impl From<CustomerRole> for Role {
    fn from(r: CustomerRole) -> Role {
        match r {
            CustomerRole::Member => Role::Member,
            CustomerRole::Manager => Role::Manager,
            CustomerRole::Admin => Role::Admin,
        }
    }
}

impl From<Role> for CustomerRole {
    fn from(r: Role) -> CustomerRole {
        match r {
            Role::Member => CustomerRole::Member,
            Role::Manager => CustomerRole::Manager,
            Role::Admin => CustomerRole::Admin,
        }
    }
}

impl UserAccess {
    /// The access of `user` with the grants the store holds for them.
    pub fn new(user_id: Uuid, grants: UserGrants) -> UserAccess {
        UserAccess { user_id, support: grants.support, roles: grants.roles.into_iter().map(|(c, r)| (c, r.into())).collect() }
    }
}

/// The user behind a bearer token, as loaded for one request.
#[derive(Debug, Clone)]
pub struct UserAccess {
    pub user_id: Uuid,
    pub support: bool,
    /// customer -> role
    pub roles: HashMap<Uuid, Role>,
}

fn forbidden(code: InternalCode, message: impl Into<String>) -> Error {
    Error::Forbidden { code, message: message.into() }
}

impl Caller {
    /// The user whose assignments bound what this caller sees, if any (a
    /// key alone and a support user see the whole organisation).
    pub fn viewer(&self) -> Option<Uuid> {
        self.user.as_ref().filter(|u| !u.support).map(|u| u.user_id)
    }

    pub fn sees_customer(&self, customer: Uuid) -> bool {
        match &self.user {
            None => true,
            Some(u) => u.support || u.roles.contains_key(&customer),
        }
    }

    /// A user sees themselves and every user of a customer they see.
    pub fn sees_user(&self, user: Uuid, their_customers: &[Uuid]) -> bool {
        match &self.user {
            None => true,
            Some(u) => u.support || u.user_id == user || their_customers.iter().any(|c| u.roles.contains_key(c)),
        }
    }

    /// Refuses (403) unless the caller holds `needed` at `customer`.
    pub fn require_role(&self, customer: Uuid, needed: Role) -> Result<()> {
        let Some(u) = &self.user else { return Ok(()) };
        if u.support {
            return Err(forbidden(InternalCode::SupportUserReadOnly, "A support user may read but not change."));
        }
        match u.roles.get(&customer) {
            Some(r) if *r >= needed => Ok(()),
            _ => Err(forbidden(InternalCode::InsufficientRole, format!("This needs the {} role at the customer.", CustomerRole::from(needed)))),
        }
    }

    /// Refuses (403) anything but organisation-wide credentials (a key alone).
    pub fn require_organisation(&self, what: &str) -> Result<()> {
        match &self.user {
            None => Ok(()),
            Some(_) => Err(forbidden(InternalCode::InsufficientRole, format!("Only the organisation's API key alone may {what}."))),
        }
    }
}
