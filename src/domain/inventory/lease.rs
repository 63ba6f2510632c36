//! `POST /inventory/lease-numbers`: numbers of the pool held for an order
//! for an hour by the organisation's clock, named by a token only the
//! caller gets.

use super::numbers::selection_offered;
use crate::domain::Caller;
use crate::domain::values::number_display;
use crate::error::{Detail, Error, InternalCode, Result};
use crate::kinds::NumberType;
use crate::store::settings::{LEASED_NUMBERS_PER_HOLDER, LEASES_PER_HOLDER};
use crate::store::{NewLease, Store};
use crate::wire::latest as wire;
use chrono::Duration;

/// How long a lease holds its numbers (SERVICE.md: typically one hour).
pub const LEASE_MINUTES: i64 = 60;

/// The prefix of a lease token, so that one pasted in the wrong place
/// says what it is.
const TOKEN_PREFIX: &str = "nlt_";

fn refused(code: InternalCode, field: &str, detail: &'static str, message: String) -> Error {
    Error::Refused { code, message: message.clone(), details: vec![Detail::new(field, detail, message)] }
}

pub async fn lease(caller: &Caller, req: wire::LeaseNumbersRequest) -> Result<wire::NumberLeaseResult> {
    if let Some(id) = req.product_offering_id {
        let offering = caller.store.offering(caller.org, id).await?;
        let offering = offering.ok_or_else(|| Error::not_found(InternalCode::ProductOfferingNotFound, "product offering"))?;
        if !selection_offered(&offering) {
            let message = "The offering does not offer a choice of number: its lines get one assigned from the pool.".to_string();
            return Err(refused(InternalCode::NumberSelectionNotOffered, "productOfferingId", "number_selection_not_offered", message));
        }
    }
    // the types in the order asked, each once
    let mut kinds: Vec<NumberType> = vec![];
    for t in req.types {
        let kind = NumberType::from(t);
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    let mut free = Vec::with_capacity(kinds.len());
    for kind in &kinds {
        free.push(caller.store.free_numbers(caller.org, *kind, caller.now).await?);
    }
    let token = format!("{TOKEN_PREFIX}{}", crate::keys::random_token());
    let expires_at = caller.now + Duration::minutes(LEASE_MINUTES);
    // a customer's user holds its leases, the key alone its own
    let holder = match &caller.user {
        Some(u) => format!("user:{}", u.user_id),
        None => format!("key:{}", caller.api_key_id),
    };
    let [leases_at_most, numbers_at_most] = caller.store.settings_of(caller.org, [LEASES_PER_HOLDER, LEASED_NUMBERS_PER_HOLDER]).await?;
    let mut tx = caller.store.begin().await?;
    let (leases, numbers) = Store::live_leases_of(&mut tx, caller.org, &holder, caller.now).await?;
    if leases >= leases_at_most {
        let message = format!(
            "This caller holds {leases} live number leases, the most the organisation allows ({}); use or let one expire first.",
            LEASES_PER_HOLDER.name
        );
        return Err(Error::Conflict { code: InternalCode::NumberLeaseLimit, message, property: "count" });
    }
    if numbers + i64::from(req.count) > numbers_at_most {
        let message = format!(
            "This caller's live leases hold {numbers} numbers; {} more would pass the {numbers_at_most} the organisation allows ({}).",
            req.count, LEASED_NUMBERS_PER_HOLDER.name
        );
        return Err(Error::Conflict { code: InternalCode::LeasedNumbersLimit, message, property: "count" });
    }
    let lease = NewLease { id: crate::domain::new_id(), token_hash: &crate::keys::hash(&token), holder: &holder, until: expires_at };
    let held = Store::lease_numbers(&mut tx, caller.org, &lease, &kinds, i64::from(req.count), caller.now).await?;
    if held.is_empty() {
        let asked: Vec<String> = kinds.iter().map(ToString::to_string).collect();
        let message = format!("No number of the types asked for ({}) is free in the organisation's pool.", asked.join(", "));
        return Err(refused(InternalCode::NumbersUnavailable, "types", "numbers_unavailable", message));
    }
    tx.commit().await?;
    let availability = kinds
        .iter()
        .zip(free)
        .map(|(kind, before)| {
            let taken = held.iter().filter(|(_, k)| k == kind).count() as i64;
            wire::NumberAvailability { type_: (*kind).into(), available: (before - taken).max(0) }
        })
        .collect();
    let numbers = held.into_iter().map(|(msisdn, kind)| wire::LeasedNumber { display: number_display(&msisdn, None), msisdn, type_: kind.into() }).collect();
    Ok(wire::NumberLeaseResult { lease_token: token, numbers, expires_at, availability })
}
