//! Customers: creation, change, lookup by id or `rid_`, listing; each change
//! records its customer.created / customer.updated event in the same
//! transaction.

pub mod catalog;
mod documents;

use super::Caller;
use super::access::Role;
use super::values::Checks;
use crate::error::{Error, InternalCode, Result};
use crate::events::{self, Event};
use crate::store::{Cursor, CustomerFilter, CustomerRow, IdOrRef, Link, Referenced, Store, limit_or_default};
use crate::wire::latest as wire;
use rand::Rng;
use uuid::Uuid;

/// preferredLocale of a customer created without one: the `default` of
/// CreateCustomerRequest.preferredLocale (which the request type fills in
/// as it reads the body), named here for the demo's own requests.
pub const DEFAULT_LOCALE: &str = "en-US";

/// The wire form of a stored customer.
pub fn to_wire(c: CustomerRow, users: Vec<Link>) -> wire::Customer {
    let users: Vec<wire::CustomerUser> = users.into_iter().map(|(user_id, name, role)| wire::CustomerUser { user_id, name, role: role.into() }).collect();
    let contact_person = c.contact_person_user_id.and_then(|id| users.iter().find(|u| u.user_id == id).cloned());
    wire::Customer {
        customer_id: c.id,
        customer_type: c.customer_type.into(),
        name: c.name,
        identity: c.identity,
        preferred_locale: Some(c.preferred_locale),
        human_readable_id: Some(c.human_readable_id),
        reference_id: c.reference_id,
        contact: c.contact.into(),
        billing: c.billing.map(Into::into),
        shipping: c.shipping.map(Into::into),
        users,
        contact_person,
        metadata: c.metadata.map(wire::Metadata),
        created_at: c.created_at,
        updated_at: c.updated_at,
    }
}

/// `CU-` and eight Crockford base32 characters: short enough to read aloud.
fn human_readable_id() -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let mut rng = rand::rng();
    let tail: String = (0..8).map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char).collect();
    format!("CU-{tail}")
}

/// The billing's default payment profile must be one of the customer's
/// (`customer` None: a customer being created, which has none yet).
async fn check_payment_profile(caller: &Caller, customer: Option<Uuid>, billing: Option<&wire::CustomerBilling>) -> Result<()> {
    let Some(id) = billing.and_then(|b| b.default_payment_profile_id.as_ref()) else { return Ok(()) };
    let found = match (customer, Uuid::parse_str(id)) {
        (Some(c), Ok(id)) => caller.store.profile(caller.org, id).await?.is_some_and(|p| p.customer_id == c),
        _ => false,
    };
    if found {
        return Ok(());
    }
    Err(Error::missing_reference(
        InternalCode::PaymentProfileNotFound,
        "billing.defaultPaymentProfileId",
        "billing.defaultPaymentProfileId names no payment profile of this customer",
    ))
}

/// The customer's billing made to name `default` as its default payment
/// profile, and autoPay turned on when `autopay`, in `tx`
/// (`customer.updated`); a customer without billing is left as it is.
/// How often a guarded write of a customer is tried before it answers
/// 409: each miss means another write committed in between.
const WRITE_TRIES: usize = 5;

pub async fn set_payment_defaults(tx: &mut crate::store::Tx, caller: &Caller, customer: Uuid, default: Option<Uuid>, autopay: bool) -> Result<()> {
    // read and written in `tx`, guarded by the time it was last changed: a
    // change committed meanwhile (a PUT) is read again, never overwritten
    for _ in 0..WRITE_TRIES {
        let found = Store::customer_in(tx, caller.org, customer).await?.filter(|(c, _)| caller.sees_customer(c.id));
        let (mut row, users) = found.ok_or_else(missing)?;
        let read_at = row.updated_at;
        let Some(billing) = row.billing.as_mut() else { return Ok(()) };
        if let Some(d) = default {
            billing.default_payment_profile_id = Some(d.to_string());
        }
        billing.auto_pay |= autopay;
        row.updated_at = caller.now;
        if Store::update_customer(tx, &row, read_at).await? {
            return events::record(tx, caller.org, caller.now, &Event::CustomerUpdated(to_wire(row, users))).await;
        }
    }
    Err(Error::changed_meanwhile("customer"))
}

/// The locale, contact, billing and shipping a request gives (each when given):
/// every failing field at once.
fn check_documents(
    locale: Option<&str>,
    contact: Option<&wire::CustomerContact>,
    billing: Option<&wire::CustomerBilling>,
    shipping: Option<&wire::Shipping>,
) -> Result<()> {
    let mut checks = Checks::default();
    if let Some(l) = locale {
        checks.locale("preferredLocale", l);
    }
    if let Some(c) = contact {
        checks.contact(c);
    }
    if let Some(b) = billing {
        checks.billing(b);
    }
    if let Some(s) = shipping {
        checks.shipping(s);
    }
    checks.finish()
}

/// Only organisation-wide credentials create customers: a user could not
/// see the customer they made, as no one is assigned to it yet.
pub async fn create(caller: &Caller, req: wire::CreateCustomerRequest) -> Result<wire::Customer> {
    caller.require_organisation("create customers")?;
    check_documents(Some(&req.preferred_locale), Some(&req.contact), req.billing.as_ref(), req.shipping.as_ref())?;
    check_payment_profile(caller, None, req.billing.as_ref()).await?;
    let store = &caller.store;
    if let Some(r) = &req.reference_id {
        super::check_reference_free(store, caller.org, Referenced::Customer, r, None).await?;
    }
    let now = caller.now;
    let mut row = CustomerRow {
        id: crate::domain::new_id(),
        org: caller.org,
        customer_type: req.customer_type.into(),
        name: req.name,
        identity: req.identity,
        preferred_locale: req.preferred_locale,
        human_readable_id: human_readable_id(),
        reference_id: req.reference_id,
        contact: req.contact.into(),
        billing: req.billing.map(Into::into),
        shipping: req.shipping.map(Into::into),
        contact_person_user_id: None,
        metadata: req.metadata.map(|m| m.0),
        created_at: now,
        updated_at: now,
    };
    // a clash of random ids is rare; draw again rather than fail
    for _ in 0..4 {
        if !store.human_readable_id_taken(caller.org, &row.human_readable_id).await? {
            break;
        }
        row.human_readable_id = human_readable_id();
    }
    let customer = to_wire(row.clone(), vec![]);
    let mut tx = store.begin().await?;
    Store::insert_customer(&mut tx, &row).await?;
    events::record(&mut tx, caller.org, now, &Event::CustomerCreated(customer.clone())).await?;
    tx.commit().await?;
    Ok(customer)
}

/// The stored customer named by `key` (id or `rid_`), or 404; a customer
/// the caller may not see is missing too.
pub async fn find(caller: &Caller, key: &str) -> Result<CustomerRow> {
    caller.store.customer(caller.org, &IdOrRef::parse(key)).await?.filter(|c| caller.sees_customer(c.id)).ok_or_else(missing)
}

/// A customer that does not exist, or that the caller may not see.
fn missing() -> Error {
    Error::not_found(InternalCode::CustomerNotFound, "customer")
}

/// The ids of the customers a list filter names (ids or `rid_`); None when
/// it names none; 404 when one of them is not the caller's to see.
pub async fn find_all(caller: &Caller, keys: &[String]) -> Result<Option<Vec<Uuid>>> {
    super::find_all(keys, |key| async move { Ok(find(caller, key).await?.id) }).await
}

/// `find`, with the users acting for the customer, in one query.
async fn find_with_users(caller: &Caller, key: &str) -> Result<(CustomerRow, Vec<Link>)> {
    caller.store.customer_with_users(caller.org, &IdOrRef::parse(key)).await?.filter(|(c, _)| caller.sees_customer(c.id)).ok_or_else(missing)
}

pub async fn view(caller: &Caller, key: &str) -> Result<wire::Customer> {
    let (row, users) = find_with_users(caller, key).await?;
    Ok(to_wire(row, users))
}

pub async fn update(caller: &Caller, key: &str, req: wire::UpdateCustomerRequest) -> Result<wire::Customer> {
    let store = &caller.store;
    let (mut row, mut users) = find_with_users(caller, key).await?;
    caller.require_role(row.id, Role::Manager)?;
    check_documents(req.preferred_locale.as_deref(), req.contact.as_ref(), req.billing.as_ref(), req.shipping.as_ref())?;
    check_payment_profile(caller, Some(row.id), req.billing.as_ref()).await?;
    if let Some(r) = req.reference_id.as_ref().filter(|r| row.reference_id.as_ref() != Some(*r)) {
        // `rid_` look-ups (and the integrator's own records) go by it: a
        // user could point another system's references at this customer
        if caller.user.is_some() {
            return Err(Error::Forbidden {
                code: InternalCode::InsufficientRole,
                message: "A customer's referenceId is set with the organisation's API key alone.".into(),
            });
        }
        super::check_reference_free(store, caller.org, Referenced::Customer, r, Some(row.id)).await?;
    }
    let mut person = None;
    if let Some(key) = &req.contact_person_user_id {
        let user = store.user(caller.org, &IdOrRef::parse(key)).await?;
        match user.filter(|u| users.iter().any(|(id, _, _)| *id == u.id)) {
            Some(u) => person = Some(u.id),
            None => {
                return Err(Error::missing_reference(
                    InternalCode::UserNotFound,
                    "contactPersonUserId",
                    "contactPersonUserId names no user acting for this customer",
                ));
            }
        }
    }
    let mut read_at = row.updated_at;
    apply(&mut row, &req, person, caller.now);
    // written guarded by when it was read: a change committed meanwhile (a
    // payment that set the default profile, another PUT) is read again and
    // this request's fields laid over it, never lost. The event goes first,
    // so that the guarded write and it reach the database together (one
    // turn of SQLite's shared writer, one trip to PostgreSQL); a write
    // that missed rolls its transaction back, event and all.
    for _ in 0..WRITE_TRIES {
        // (a retry reads the users again with the customer)
        let customer = to_wire(row.clone(), std::mem::take(&mut users));
        let mut tx = store.begin().await?;
        events::record(&mut tx, caller.org, caller.now, &Event::CustomerUpdated(customer.clone())).await?;
        if Store::update_customer(&mut tx, &row, read_at).await? {
            tx.commit().await?;
            return Ok(customer);
        }
        // as the transaction sees it: on SQLite's shared writer, the
        // change that won may not be committed yet
        (row, users) = Store::customer_in(&mut tx, caller.org, row.id).await?.ok_or_else(missing)?;
        read_at = row.updated_at;
        apply(&mut row, &req, person, caller.now);
    }
    Err(Error::changed_meanwhile("customer"))
}

/// Lays the request's fields over `row` (`person`: the contact person it
/// names, found among the customer's users).
fn apply(row: &mut CustomerRow, req: &wire::UpdateCustomerRequest, person: Option<Uuid>, now: chrono::DateTime<chrono::Utc>) {
    if let Some(r) = &req.reference_id {
        row.reference_id = Some(r.clone());
    }
    if person.is_some() {
        row.contact_person_user_id = person;
    }
    if let Some(n) = &req.name {
        row.name = n.clone();
    }
    if let Some(i) = &req.identity {
        row.identity = Some(i.clone());
    }
    if let Some(l) = &req.preferred_locale {
        row.preferred_locale = l.clone();
    }
    if let Some(c) = &req.contact {
        row.contact = c.clone().into();
    }
    if let Some(b) = &req.billing {
        row.billing = Some(b.clone().into());
    }
    if let Some(s) = &req.shipping {
        row.shipping = Some(s.clone().into());
    }
    if let Some(m) = &req.metadata {
        row.metadata = Some(m.0.clone());
    }
    row.updated_at = now;
}

pub async fn list(caller: &Caller, q: crate::wire::latest::params::CustomerListQuery) -> Result<wire::CustomerList> {
    let after = q.cursor.as_deref().map(Cursor::decode).transpose()?;
    let filter = CustomerFilter {
        text: q.filter.filter(|t| !t.is_empty()),
        customer_type: super::filter_of::<wire::CustomerType, _>("customerType", q.customer_type.as_slice())?.pop(),
        visible_to: caller.viewer(),
    };
    let page = caller.store.customers(caller.org, &filter, after, limit_or_default(q.limit)).await?;
    Ok(wire::CustomerList {
        items: page.items.into_iter().map(|(c, users)| to_wire(c, users)).collect(),
        pagination: wire::Pagination { next_cursor: page.next.map(Cursor::encode) },
    })
}

/// Tax rates of the customer's billing country, else the organisation's
/// default tax country.
pub async fn tax_rates(store: &crate::store::Store, org: uuid::Uuid, customer: &crate::store::CustomerRow) -> Result<Vec<crate::domain::pricing::TaxRate>> {
    let billing_country = customer.billing.as_ref().and_then(|b| b.address.as_ref()).map(|a| a.country.clone());
    let country = match billing_country {
        Some(c) => Some(c),
        None => store.default_tax_country(org).await?,
    };
    let Some(country) = country else { return Ok(vec![]) };
    Ok(match store.tax_rates(org, &country).await? {
        Some(v) => serde_json::from_value(v).map_err(|e| Error::Internal(e.to_string()))?,
        None => vec![],
    })
}
