//! A subscription's eSIM activation code, a secret (it lets a device take
//! the line): its one read, audited by an event (who may see it, and the
//! audit, are the SIM inventory's: `inventory::activation_codes`).
//! Subscription reads and events never carry it.

use super::find;
use crate::domain::Caller;
use crate::domain::access::Role;
use crate::domain::inventory::activation_codes::record_viewed;
use crate::error::{Error, InternalCode, Result};
use crate::wire::latest as wire;

/// The current eSIM profile of the subscription `key`, for the key alone
/// or an ADMIN; the fetch is recorded (who, never the code) in the same
/// transaction as nothing else, before the code is answered.
pub async fn view(caller: &Caller, key: &str) -> Result<wire::EsimActivationCode> {
    // the key caps everything first, as for a write
    if caller.read_only {
        return Err(Error::Forbidden { code: InternalCode::ReadOnlyApiKey, message: "A read-only API key is shown no secret.".into() });
    }
    let row = find(caller, key).await?;
    caller.require_role(row.customer_id, Role::Admin)?;
    let (Some(iccid), Some(code)) = (row.life.iccid.clone(), row.life.esim_activation_code.clone()) else {
        return Err(Error::Conflict {
            code: InternalCode::NoEsimProfile,
            message: "The subscription has no eSIM profile: a PSIM, or an eSIM not activated yet.".into(),
            property: "esimActivationCode",
        });
    };
    record_viewed(caller, row.id, row.customer_id, &iccid).await?;
    Ok(wire::EsimActivationCode { subscription_id: row.id, iccid, esim_activation_code: code })
}
