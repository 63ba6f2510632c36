//! A porting as the API shows it (a subscription read shows its latest
//! port-in with it).

use crate::error::{Error, Result};
use crate::kinds::PortingStatus;
use crate::store::PortingRow;
use crate::wire::latest as wire;

/// `p` as the API shows it.
pub fn to_wire(p: &PortingRow) -> Result<wire::Porting> {
    let details = p.details.clone().map(serde_json::from_value).transpose().map_err(|e| Error::Internal(format!("porting {}: details: {e}", p.id)))?;
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
