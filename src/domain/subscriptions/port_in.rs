//! A porting as the API shows it: in its subscription's read (its latest
//! port-in), in the subscription's `portIn` events and on its own (the
//! porting area reads it from here); and an order line's port-in. Never
//! their secrets.

use crate::error::{Error, Result};
use crate::states::porting::PortingStatus;
use crate::store::PortingRow;
use crate::wire::latest as wire;

/// `p` as the API shows it.
pub fn to_wire(p: &PortingRow) -> Result<wire::Porting> {
    // (as stored they are without their secrets; a row not yet written has them)
    let details = p.details.clone().map(|mut d| {
        crate::store::port_in_split(&mut d);
        d
    });
    let details = details.map(serde_json::from_value).transpose().map_err(|e| Error::Internal(format!("porting {}: details: {e}", p.id)))?;
    Ok(wire::Porting {
        porting_id: p.id,
        subscription_id: p.subscription_id,
        msisdn: p.msisdn.clone(),
        status: p.status.into(),
        direction: p.direction.into(),
        scheduled_at: p.scheduled_on,
        details,
        failure_reason: p.failure_reason.clone().filter(|_| p.status == PortingStatus::Failed),
        waiting_for: p.failure_reason.clone().filter(|_| p.status == PortingStatus::InProgress),
        updated_at: Some(p.updated_at),
        created_at: p.created_at,
    })
}

/// An order line's port-in as the API shows it: its details without their
/// secrets (None if that could not be written, which never shows them).
pub fn new_port_in(p: wire::NewPortIn) -> Option<wire::NewPortIn> {
    let mut v = crate::wire::to_json(&p);
    crate::store::port_in_split(v.get_mut("details")?);
    serde_json::from_value(v).ok()
}
