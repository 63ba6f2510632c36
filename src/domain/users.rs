//! Users: people who act for customers with a role at each.

use super::Caller;
use super::access::Role;
use super::values::Checks;
use crate::error::{Error, InternalCode, Result};
use crate::store::{Cursor, IdOrRef, Store, UserFilter, UserRow, email_key, limit_or_default};
use crate::wire::latest as wire;
use crate::wire::latest::params::UserListQuery;
use uuid::Uuid;

/// One customer a user acts for: (customer, its name, the role).
type Link = (Uuid, String, crate::kinds::CustomerRole);

pub fn to_wire(u: UserRow, customers: Vec<Link>) -> wire::User {
    wire::User {
        user_id: u.id,
        name: u.name,
        email: Some(u.email),
        pending_email: u.pending_email,
        msisdn: u.msisdn,
        identity: u.identity,
        reference_id: u.reference_id,
        customers: customers.into_iter().map(|(customer_id, name, role)| wire::UserCustomer { customer_id, name, role: role.into() }).collect(),
        created_at: Some(u.created_at),
        updated_at: Some(u.updated_at),
        metadata: u.metadata.map(wire::Metadata),
    }
}

async fn check_free(store: &Store, org: Uuid, email: Option<&str>, reference_id: Option<&str>, except: Option<Uuid>) -> Result<()> {
    if let Some(e) = email
        && store.user_email_taken(org, e, except).await?
    {
        return Err(Error::Conflict { code: InternalCode::EmailTaken, message: "another user already signs in with this email".into(), property: "email" });
    }
    if let Some(r) = reference_id
        && store.user_reference_taken(org, r, except).await?
    {
        return Err(Error::reference_taken("user"));
    }
    Ok(())
}

pub async fn create(caller: &Caller, req: wire::CreateUserRequest) -> Result<wire::User> {
    let store = &caller.store;
    let customer = super::customers::find(caller, &req.customer_id).await?;
    caller.require_role(customer.id, Role::Admin)?;
    let mut checks = Checks::default();
    checks.msisdn("msisdn", req.msisdn.as_deref());
    checks.finish()?;
    check_free(store, caller.org, Some(&req.email), req.reference_id.as_deref(), None).await?;
    let now = caller.now;
    let row = UserRow {
        id: crate::domain::new_id(),
        org: caller.org,
        name: req.name,
        email: req.email.trim().to_string(),
        pending_email: None,
        msisdn: req.msisdn,
        identity: req.identity,
        reference_id: req.reference_id,
        metadata: req.metadata.map(|m| m.0),
        created_at: now,
        updated_at: now,
    };
    // MEMBER when the request names none, as its description says
    let role = crate::kinds::CustomerRole::from(req.role);
    let mut tx = store.begin().await?;
    Store::insert_user(&mut tx, &row).await?;
    Store::link_user(&mut tx, caller.org, customer.id, row.id, role, now).await?;
    tx.commit().await?;
    Ok(to_wire(row, vec![(customer.id, customer.name, role)]))
}

/// The user named by `key` (id or `rid_`) with the customers they act for,
/// or 404; a user the caller may not see is missing too.
async fn find(caller: &Caller, key: &str) -> Result<(UserRow, Vec<Link>)> {
    let missing = || Error::not_found(InternalCode::UserNotFound, "user");
    let row = caller.store.user(caller.org, &IdOrRef::parse(key)).await?.ok_or_else(missing)?;
    let links = caller.store.user_customers(caller.org, &[row.id]).await?.remove(&row.id).unwrap_or_default();
    let customers: Vec<Uuid> = links.iter().map(|(c, _, _)| *c).collect();
    if !caller.sees_user(row.id, &customers) {
        return Err(missing());
    }
    Ok((row, links))
}

/// A user's customers as this caller may see them.
fn visible(caller: &Caller, links: Vec<Link>) -> Vec<Link> {
    links.into_iter().filter(|(c, _, _)| caller.sees_customer(*c)).collect()
}

pub async fn view(caller: &Caller, key: &str) -> Result<wire::User> {
    let (row, links) = find(caller, key).await?;
    Ok(to_wire(row, visible(caller, links)))
}

/// A user may change their own profile; anyone else needs ADMIN at every
/// customer the user acts for, since the change (their sign-in address
/// above all) reaches all of them. A support user sees the whole
/// organisation: only the organisation's key changes one, or a customer's
/// ADMIN could take its sign-in address and with it everything.
async fn may_change(caller: &Caller, user: Uuid, links: &[Link]) -> Result<()> {
    if caller.user.is_some() && caller.store.user_grants(caller.org, user).await?.is_some_and(|g| g.support) {
        return Err(Error::Forbidden {
            code: InternalCode::InsufficientRole,
            message: "A support user is changed with the organisation's API key alone.".into(),
        });
    }
    match &caller.user {
        None => Ok(()),
        Some(u) if u.user_id == user && !u.support => Ok(()),
        // a user acting for no customer is no customer's to manage
        Some(_) if links.is_empty() => caller.require_organisation("change a user who acts for no customer"),
        Some(_) => links.iter().try_for_each(|(c, _, _)| caller.require_role(*c, Role::Admin)),
    }
}

pub async fn update(caller: &Caller, key: &str, req: wire::UpdateUserRequest) -> Result<wire::User> {
    let (mut row, links) = find(caller, key).await?;
    may_change(caller, row.id, &links).await?;
    let mut checks = Checks::default();
    checks.msisdn("msisdn", req.msisdn.as_deref());
    checks.finish()?;
    check_free(&caller.store, caller.org, req.email.as_deref(), None, Some(row.id)).await?;
    if let Some(n) = req.name {
        row.name = n;
    }
    // a new address waits for a sign-in with it; the same one (in any
    // case) is set at once and withdraws a change waiting
    let mut new_address = None;
    if let Some(e) = req.email.as_deref().map(str::trim) {
        if email_key(e) == email_key(&row.email) {
            (row.email, row.pending_email) = (e.to_string(), None);
        } else {
            row.pending_email = Some(e.to_string());
            new_address = Some(e.to_string());
        }
    }
    if let Some(m) = req.msisdn {
        row.msisdn = Some(m);
    }
    if let Some(m) = req.metadata {
        row.metadata = Some(m.0);
    }
    row.updated_at = caller.now;
    let mut tx = caller.store.begin().await?;
    Store::update_user(&mut tx, &row).await?;
    if let Some(new) = &new_address {
        let (subject, body) = confirmation(new);
        Store::queue_mail(&mut tx, new, &subject, &body, caller.now).await?;
        let (subject, body) = notice(new);
        Store::queue_mail(&mut tx, &row.email, &subject, &body, caller.now).await?;
    }
    tx.commit().await?;
    Ok(to_wire(row, visible(caller, links)))
}

/// The mail to a new sign-in address: signing in with it confirms it.
fn confirmation(new: &str) -> (String, String) {
    (
        "Confirm your new sign-in address".to_string(),
        format!(
            "Someone asked to make {new} the sign-in address of a Switchboard account.\n\n\
             To confirm it, sign in with this address: the change takes effect then, and every \
             session begun with the old address ends.\nIf this was not you, ignore this mail: \
             nothing changes until this address signs in.\n"
        ),
    )
}

/// The mail to the old address: what is about to change.
fn notice(new: &str) -> (String, String) {
    (
        "Your sign-in address is being changed".to_string(),
        format!(
            "The sign-in address of your Switchboard account is to become {new}. It changes when \
             that address confirms it by signing in; until then this address still signs in.\n\
             If you did not ask for this, tell your administrator.\n"
        ),
    )
}

pub async fn list(caller: &Caller, q: UserListQuery) -> Result<wire::UserList> {
    let after = q.cursor.as_deref().map(Cursor::decode).transpose()?;
    // every customer named must exist: an unknown one is a 404, not an empty page
    let customers = super::customers::find_all(caller, &q.customer_id).await?;
    let filter = UserFilter { text: q.filter.filter(|t| !t.is_empty()), customers, visible_to: caller.viewer() };
    let page = caller.store.users(caller.org, &filter, after, limit_or_default(q.limit)).await?;
    let ids: Vec<Uuid> = page.items.iter().map(|u| u.id).collect();
    let mut links = caller.store.user_customers(caller.org, &ids).await?;
    Ok(wire::UserList {
        items: page
            .items
            .into_iter()
            .map(|u| {
                let c = links.remove(&u.id).unwrap_or_default();
                to_wire(u, visible(caller, c))
            })
            .collect(),
        pagination: wire::Pagination { next_cursor: page.next.map(Cursor::encode) },
    })
}
