//! The one-line purchases: a subscription (POST /subscriptions), a license
//! (POST /licenses) and a subscription's add-ons (POST
//! /subscriptions/{id}/addons), each an order created and submitted in one
//! transaction, so pricing and history stay with orders. They stand above
//! orders, which create all three on submission.

pub mod addons;
pub mod license;
pub mod subscription;

use crate::error::{Detail, Error};

/// The refusal of an order bought directly, in the fields of the request
/// that bought it: `rename` turns a line's field (`lineItems[0].subscription.msisdn`)
/// into the request's (`subscription.msisdn`).
fn own_fields(e: Error, rename: impl Fn(&str) -> String) -> Error {
    let rename = |details: Vec<Detail>| details.into_iter().map(|d| Detail { property: rename(&d.property), ..d }).collect();
    match e {
        Error::Refused { code, message, details } => Error::Refused { code, message, details: rename(details) },
        Error::Missing { code, message, details } => Error::Missing { code, message, details: rename(details) },
        Error::Invalid(details) => Error::Invalid(rename(details)),
        // the order's referenceId is orderReferenceId here
        Error::Conflict { code, message, property: "referenceId" } => Error::Conflict { code, message, property: "orderReferenceId" },
        other => other,
    }
}
