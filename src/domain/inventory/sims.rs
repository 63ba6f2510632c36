//! The organisation's SIMs: the one a move (activate, change-sim) puts a
//! subscription on, from the inventory when the organisation has imported
//! one, and a SIM as `GET /inventory/sims/{iccid}` shows it.

use super::activation_codes;
use crate::domain::Caller;
use crate::domain::values::iccid;
use crate::error::{Error, InternalCode, Result};
use crate::kinds::SimType;
use crate::network::{EsimStatus, Network, Sim};
use crate::store::Held;
use crate::wire::latest as wire;

fn conflict(code: InternalCode, message: String) -> Error {
    Error::Conflict { code, message, property: "iccid" }
}

fn refused(r: crate::network::Refused) -> Error {
    conflict(InternalCode::NetworkRefused, r.0)
}

/// 400 unless `value` is an ICCID with a right check digit.
pub fn check_iccid(value: Option<&String>) -> Result<()> {
    match value {
        Some(v) if !iccid::valid(v) => {
            Err(Error::invalid("iccid", "invalid_iccid", "must be an ICCID: 19 or 20 digits starting with 89, the last a Luhn check digit"))
        }
        _ => Ok(()),
    }
}

/// The SIM of `kind` a move puts subscription `subscription` (on number
/// `msisdn`) on.
///
/// With an inventory: the one `named` (an AVAILABLE inventory SIM of the
/// kind), else the lowest AVAILABLE one of the kind no other move has
/// claimed; claimed for the subscription before an eSIM gets a fresh
/// profile on it from the network, so that moves at once never reach for
/// one SIM. Without: the one named if no subscription has had it (in the
/// whole installation: the network is one; whose it was is not said),
/// else, for an eSIM, a new profile.
pub async fn take(caller: &Caller, network: &dyn Network, named: Option<&str>, kind: SimType, subscription: uuid::Uuid, msisdn: &str) -> Result<Sim> {
    let (store, org) = (&caller.store, caller.org);
    if !store.has_sim_inventory(org).await? {
        let Some(iccid) = named else {
            return network.issue_esim(msisdn, None).await.map_err(refused);
        };
        if store.held(Held::Iccid, iccid).await? {
            return Err(conflict(InternalCode::IccidTaken, "This ICCID is in use or was used before.".into()));
        }
        return Ok(Sim { iccid: iccid.to_string(), activation_code: None });
    }
    let iccid = match named {
        Some(iccid) => {
            let Some(sim) = store.sim(org, iccid).await? else {
                return Err(conflict(InternalCode::SimNotInInventory, format!("{iccid} is not a SIM of the organisation's inventory.")));
            };
            if sim.sim_type != kind {
                return Err(conflict(InternalCode::SimTypeMismatch, format!("{iccid} is a {} in the inventory, not a {kind}.", sim.sim_type)));
            }
            if !store.sim_free(org, iccid).await? {
                let status = if sim.status == "AVAILABLE" { "held at the network" } else { sim.status.as_str() };
                return Err(conflict(InternalCode::SimNotAvailable, format!("{iccid} is {status}, not AVAILABLE.")));
            }
            if !store.claim_sim(org, iccid, subscription, caller.now).await? {
                return Err(conflict(InternalCode::SimNotAvailable, format!("{iccid} is being taken by another subscription's move.")));
            }
            iccid.to_string()
        }
        None => store
            .claim_free_sim(org, kind, subscription, caller.now)
            .await?
            .ok_or_else(|| conflict(InternalCode::SimsUnavailable, format!("The inventory has no AVAILABLE {kind}.")))?,
    };
    match kind {
        SimType::Esim => network.issue_esim(msisdn, Some(&iccid)).await.map_err(refused),
        SimType::Psim => Ok(Sim { iccid, activation_code: None }),
    }
}

fn installation(status: EsimStatus) -> wire::EsimInstallationStatus {
    use wire::EsimInstallationStatus as W;
    match status {
        EsimStatus::Released => W::Released,
        EsimStatus::Downloaded => W::Downloaded,
        EsimStatus::Installed => W::Installed,
        EsimStatus::Enabled => W::Enabled,
        EsimStatus::Disabled => W::Disabled,
        EsimStatus::Deleted => W::Deleted,
    }
}

fn status_of(stored: &str) -> Result<wire::InventorySimStatus> {
    use wire::InventorySimStatus as W;
    Ok(match stored {
        "AVAILABLE" => W::Available,
        "ACTIVE" => W::Active,
        "BLOCKED" => W::Blocked,
        "RETIRED" => W::Retired,
        other => return Err(Error::Internal(format!("{other:?} is no SIM status"))),
    })
}

/// `GET /inventory/sims/{iccid}`: the SIM, if the caller sees it (a SIM
/// no subscription has had only the key alone or a support user). Its
/// activation code, shown to those who may see the customer's secrets, is
/// recorded as viewed first.
pub async fn view(caller: &Caller, network: &dyn Network, key: &str) -> Result<wire::InventorySim> {
    check_iccid(Some(&key.to_string()))?;
    let sim = caller
        .store
        .sim(caller.org, key)
        .await?
        .filter(|s| match s.customer_id {
            Some(customer) => caller.sees_customer(customer),
            None => caller.viewer().is_none(),
        })
        .ok_or_else(|| Error::not_found(InternalCode::SimNotFound, "SIM"))?;
    let installation_status = match (&sim.activation_code, sim.sim_type) {
        (Some(_), SimType::Esim) => network.esim_status(&sim.iccid).await.map_err(refused)?.map(installation),
        _ => None,
    };
    let shown = match (sim.customer_id, sim.subscription_id, &sim.activation_code) {
        (Some(customer), Some(subscription), Some(code)) if activation_codes::may_see(caller, customer) => {
            activation_codes::record_viewed(caller, subscription, customer, &sim.iccid).await?;
            Some(code.clone())
        }
        _ => None,
    };
    Ok(wire::InventorySim {
        status: status_of(&sim.status)?,
        type_: sim.sim_type.into(),
        subscription_id: sim.subscription_id,
        msisdn: sim.msisdn,
        esim_activation_code: shown,
        installation_status,
        created_at: sim.created_at,
        updated_at: sim.updated_at,
        iccid: sim.iccid,
    })
}
