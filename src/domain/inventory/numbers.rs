//! The number pool as order lines meet it: which number a line may name
//! (checked at every change of the order and at submission), and the
//! number a submitted line takes, in the submission's transaction.

use crate::domain::Caller;
use crate::error::{Detail, Error, InternalCode, Result};
use crate::kinds::{NumberType, ProductCategory};
use crate::store::{NumberStatus, OfferingRow, Store, Tx};
use uuid::Uuid;

/// The number an order line's subscription asks for: one it names (of the
/// pool, or any when there is none), a leased one, or, brought from
/// another operator, a temporary one of the pool.
#[derive(Clone, Copy)]
pub struct Asked<'a> {
    pub msisdn: Option<&'a str>,
    pub lease_token: Option<&'a str>,
    /// brought from another operator (`msisdn` is the number brought)
    pub ported: bool,
}

/// The type of number a subscription of `category` takes (a travel eSIM
/// is data-only).
pub fn number_type_of(category: ProductCategory) -> NumberType {
    number_type_of_subscription(crate::domain::catalog::subscription_type(category))
}

/// The type of number a subscription of `subscription_type` takes.
pub fn number_type_of_subscription(subscription_type: &str) -> NumberType {
    match subscription_type {
        "DATA" | "TRAVEL_ESIM" => NumberType::Data,
        "MBB" => NumberType::Mbb,
        "M2M" => NumberType::M2m,
        _ => NumberType::Cell,
    }
}

/// Whether the offering's product lets a line choose its number.
pub fn selection_offered(offering: &OfferingRow) -> bool {
    offering.product.features.as_ref().and_then(|f| f.number_selection).unwrap_or(false)
}

/// The lease a line's token names, refused (as a detail at `at`) when it
/// names none of the organisation's, or one used up or expired.
async fn lease_of(caller: &Caller, token: &str, at: &(dyn Fn(&str) -> String + Sync)) -> Result<std::result::Result<Uuid, Detail>> {
    let Some(lease) = caller.store.number_lease(caller.org, &crate::keys::hash(token)).await? else {
        return Ok(Err(Detail::new(at("numberLeaseToken"), "number_lease_not_found", "names no number lease of this organisation")));
    };
    if lease.used_at.is_some() {
        return Ok(Err(Detail::new(at("numberLeaseToken"), "lease_used", "was used up by a submitted order")));
    }
    if lease.expires_at <= caller.now {
        return Ok(Err(Detail::new(at("numberLeaseToken"), "lease_expired", format!("expired at {}", lease.expires_at.to_rfc3339()))));
    }
    Ok(Ok(lease.id))
}

/// What is wrong with the number a SUBSCRIPTION line asks for, given
/// whether the organisation has a pool (`at` names a field of the line's
/// `subscription`).
pub async fn check_line(caller: &Caller, pool: bool, offering: &OfferingRow, new: Asked<'_>, at: &(dyn Fn(&str) -> String + Sync)) -> Result<Vec<Detail>> {
    let kind = number_type_of(offering.product.category);
    if new.ported {
        return check_port_in(caller, pool, kind, new, at).await;
    }
    let Some(msisdn) = new.msisdn else {
        return Ok(match (pool, new.lease_token) {
            (_, Some(_)) => vec![Detail::new(at("msisdn"), "required", "is required with numberLeaseToken: the leased number the line takes")],
            (false, None) => vec![Detail::new(at("msisdn"), "numbers_unavailable", "is required: the organisation has no number pool to assign one from")],
            (true, None) if caller.store.free_numbers_up_to(caller.org, kind, caller.now, 1).await? == 0 => {
                vec![Detail::new(at("msisdn"), "numbers_unavailable", format!("is left out, and the pool has no {kind} number free to assign"))]
            }
            (true, None) => vec![],
        });
    };
    if !pool {
        // no pool: any valid number, as before pools; a token names nothing
        return Ok(match new.lease_token {
            Some(_) => vec![Detail::new(at("numberLeaseToken"), "number_lease_not_found", "names no number lease of this organisation")],
            None => vec![],
        });
    }
    let Some(number) = caller.store.pool_number(caller.org, msisdn).await? else {
        return Ok(vec![Detail::new(at("msisdn"), "number_not_in_pool", "is not a number of the organisation's pool")]);
    };
    if !selection_offered(offering) {
        return Ok(vec![Detail::new(
            at("msisdn"),
            "number_selection_not_offered",
            "cannot be chosen: the offering does not offer a choice of number (leave msisdn out)",
        )]);
    }
    if number.number_type != kind {
        return Ok(vec![Detail::new(at("msisdn"), "number_type_mismatch", format!("is a {} number; the subscription takes a {kind} one", number.number_type))]);
    }
    let lease = match new.lease_token {
        Some(token) => match lease_of(caller, token, at).await? {
            Ok(lease) => Some(lease),
            Err(refused) => return Ok(vec![refused]),
        },
        None => None,
    };
    let detail = match number.status_at(caller.now) {
        NumberStatus::Available if lease.is_none() => return Ok(vec![]),
        NumberStatus::Leased if lease.is_some() && number.lease_id == lease => return Ok(vec![]),
        NumberStatus::Available => ("number_not_in_lease", "is not held by the lease numberLeaseToken names"),
        NumberStatus::Leased => ("number_leased", "is held by a number lease; name it with its numberLeaseToken"),
        NumberStatus::Assigned => ("msisdn_in_use", "the number is in use"),
        NumberStatus::Quarantined => ("number_quarantined", "was released recently and rests before it is offered again"),
        NumberStatus::PortedOut => ("number_ported_out", "was ported out to another operator"),
    };
    Ok(vec![Detail::new(at("msisdn"), detail.0, detail.1)])
}

/// What is wrong with a line bringing its number from another operator
/// (`msisdn`, the number brought; the subscription starts on a temporary
/// number of the pool), as the inventory sees it (the port-in's details
/// are the order's to check, with porting's rules).
async fn check_port_in(caller: &Caller, pool: bool, kind: NumberType, new: Asked<'_>, at: &(dyn Fn(&str) -> String + Sync)) -> Result<Vec<Detail>> {
    let Some(msisdn) = new.msisdn else {
        return Ok(vec![Detail::new(at("msisdn"), "required", "is required with portIn: the number to bring")]);
    };
    let mut bad = vec![];
    if new.lease_token.is_some() {
        bad.push(Detail::new(at("numberLeaseToken"), "not_allowed", "is not for a number brought from another operator"));
    }
    if !pool {
        bad.push(Detail::new(at("portIn"), "numbers_unavailable", "needs a temporary number, and the organisation has no number pool"));
    } else if caller.store.free_numbers_up_to(caller.org, kind, caller.now, 1).await? == 0 {
        bad.push(Detail::new(at("portIn"), "numbers_unavailable", format!("needs a temporary number, and the pool has no {kind} number free")));
    }
    if caller.store.pool_number(caller.org, msisdn).await?.is_some() {
        bad.push(Detail::new(at("msisdn"), "number_in_pool", "is a number of the organisation's own pool, not another operator's"));
    } else if caller.store.porting_open(msisdn).await? {
        bad.push(Detail::new(at("msisdn"), "msisdn_in_use", "is being ported already"));
    }
    Ok(bad)
}

/// The refusal of a line whose number was taken between its check and its
/// transaction (another order's submission won).
fn taken(field: String, code: &'static str, message: &str) -> Error {
    Error::Refused {
        code: InternalCode::OrderValidationFailed,
        message: "The order cannot be submitted; see details for each failing line item.".into(),
        details: vec![Detail::new(field, code, message)],
    }
}

/// The number subscription `id` of a submitted line takes, in the
/// submission's transaction: the one named (from the pool when there is
/// one), else the lowest free one of its type. The lease the line's token
/// names, to use up once every line has taken its number.
pub async fn take(tx: &mut Tx, caller: &Caller, pool: bool, kind: NumberType, new: Asked<'_>, id: Uuid, field: String) -> Result<(String, Option<Uuid>)> {
    let lease = match new.lease_token {
        Some(token) => match caller.store.number_lease(caller.org, &crate::keys::hash(token)).await? {
            // another order's submission used it up since the check
            Some(l) if l.used_at.is_some() => return Err(taken(format!("{field}.numberLeaseToken"), "lease_used", "was used up by a submitted order")),
            l => l.map(|l| l.id),
        },
        None => None,
    };
    // a line bringing its number starts on a temporary one of the pool
    let asked = if new.ported { None } else { new.msisdn.map(str::to_string) };
    match (&asked, pool) {
        (Some(msisdn), false) => Ok((msisdn.clone(), None)),
        (Some(msisdn), true) => match Store::assign_number(tx, caller.org, msisdn, lease, id, caller.now).await? {
            true => Ok((msisdn.clone(), lease)),
            false => Err(taken(format!("{field}.msisdn"), "msisdn_in_use", "the number was taken meanwhile")),
        },
        (None, true) => match Store::assign_any_number(tx, caller.org, kind, id, caller.now).await? {
            Some(msisdn) => Ok((msisdn, None)),
            None => Err(taken(format!("{field}.msisdn"), "numbers_unavailable", "the pool has no number of its type free")),
        },
        (None, false) => Err(Error::Internal(format!("{field} has no number and the organisation no pool"))),
    }
}

/// Follows `Change::NumberPortedOut`: `msisdn` PORTED_OUT at `at` (another
/// operator has it now).
pub(in crate::domain) async fn ported_out(tx: &mut Tx, caller: &Caller, msisdn: &str, at: chrono::DateTime<chrono::Utc>) -> Result<()> {
    Store::number_ported_out(tx, caller.org, msisdn, at).await
}
