//! The moves a request asks for: activate, pause, restore, suspend,
//! block-sim, cancel, withdraw-cancellation and change-sim. Each reads the
//! subscription (404 if the caller does not see it), checks who may move
//! it (403) and the transition table (409), asks the network, then writes
//! the move and its events in one transaction.

use super::find;
use super::write::{Also, Events, activation_events, begin_service, commit, end_service};
use crate::domain::Caller;
use crate::domain::access::Role;
use crate::domain::inventory::sims;
use crate::error::{Error, InternalCode, Result};
use crate::events::Event;
use crate::kinds::SimType;
use crate::network::{Activation, Network, Refused, Sim};
use crate::states::subscriptions::{SUBSCRIPTION, SubscriptionOp as Op, SubscriptionStatus as Status};
use crate::store::SubscriptionRow;
use crate::wire::latest as wire;
use chrono::NaiveTime;

/// A move asked for by a request: who asks, and the network it goes to.
pub struct Moves<'a> {
    pub caller: &'a Caller,
    pub network: &'a dyn Network,
}

/// Who may make a move: a user with a role at the subscription's customer
/// (and the API key alone), or the API key alone (the operator).
enum Need {
    Role(Role),
    Operator(&'static str),
}

fn refused(r: Refused) -> Error {
    Error::Conflict { code: InternalCode::NetworkRefused, message: r.0, property: "" }
}

fn conflict(code: InternalCode, message: impl Into<String>, property: &'static str) -> Error {
    Error::Conflict { code, message: message.into(), property }
}

/// A move asked for, with its request.
pub enum Move {
    Activate(wire::ActivateSubscriptionRequest),
    Pause(wire::SubscriptionStatusChangeRequest),
    Restore(wire::SubscriptionStatusChangeRequest),
    Suspend(wire::SubscriptionStatusChangeRequest),
    BlockSim(wire::SubscriptionStatusChangeRequest),
    Cancel(wire::CancelSubscriptionRequest),
    WithdrawCancellation(wire::SubscriptionStatusChangeRequest),
    ChangeSim(wire::ChangeSimRequest),
}

impl Moves<'_> {
    /// Makes `m` on the subscription `key`.
    pub async fn make(&self, key: &str, m: Move) -> Result<wire::Subscription> {
        match m {
            Move::Activate(r) => self.activate(key, r).await,
            Move::Pause(r) => self.pause(key, r).await,
            Move::Restore(r) => self.restore(key, r).await,
            Move::Suspend(r) => self.suspend(key, r).await,
            Move::BlockSim(r) => self.block_sim(key, r).await,
            Move::Cancel(r) => self.cancel(key, r).await,
            Move::WithdrawCancellation(r) => self.withdraw_cancellation(key, r).await,
            Move::ChangeSim(r) => self.change_sim(key, r).await,
        }
    }

    /// The subscription `key` after `op`, with the fields every move sets:
    /// its new state, the reason given, the time. Who may ask is checked
    /// before the state (`need` of its state): a caller who may not make
    /// the move learns nothing of the state from a 409.
    async fn start(&self, key: &str, op: Op, reason: Option<String>, need: fn(Status) -> Need) -> Result<(SubscriptionRow, SubscriptionRow)> {
        let before = find(self.caller, key).await?;
        match need(before.status) {
            Need::Role(role) => self.caller.require_role(before.customer_id, role)?,
            Need::Operator(what) => self.caller.require_organisation(what)?,
        }
        let mut after = before.clone();
        after.status = SUBSCRIPTION.next(op, before.status)?;
        // the network is addressed by the number: only its holder moves it
        if !self.caller.store.holds_number(self.caller.org, before.id, &before.msisdn).await? {
            return Err(conflict(InternalCode::NumberNotHeld, "Another subscription holds this number at the network: this one cannot be moved.", "msisdn"));
        }
        after.life.status_reason = reason;
        // a move asked for is no longer dunning's: paying the invoice
        // does not undo it
        after.life.suspended_for_invoice = None;
        after.updated_at = self.caller.now;
        Ok((before, after))
    }

    async fn write(&self, before: &SubscriptionRow, after: &SubscriptionRow, sim: Option<&Sim>, op: Op, events: Events) -> Result<wire::Subscription> {
        let also = sim.map_or(Also::Nothing, Also::Sim);
        commit(self.caller, before, after, also, op, events, self.caller.now).await
    }

    pub async fn activate(&self, key: &str, req: wire::ActivateSubscriptionRequest) -> Result<wire::Subscription> {
        sims::check_iccid(req.iccid.as_ref())?;
        let c = self.caller;
        let (before, mut after) = self.start(key, Op::Activate, req.reason, |_| Need::Role(Role::Manager)).await?;
        if before.life.pending.is_some_and(|(s, _)| s == Status::Activated) {
            return Err(conflict(InternalCode::ActivationInProgress, "The network is activating this subscription already.", "status"));
        }
        let (sim, new) = match (req.iccid, &before.life.iccid) {
            (Some(named), current) if current.as_ref() == Some(&named) => {
                (Sim { iccid: named, activation_code: before.life.esim_activation_code.clone() }, false)
            }
            (Some(named), _) => (sims::take(c, self.network, Some(&named), before.sim_type, before.id, &before.msisdn).await?, true),
            (None, Some(current)) => (Sim { iccid: current.clone(), activation_code: before.life.esim_activation_code.clone() }, false),
            (None, None) if before.sim_type == SimType::Esim => (sims::take(c, self.network, None, SimType::Esim, before.id, &before.msisdn).await?, true),
            (None, None) => {
                return Err(conflict(InternalCode::IccidRequired, "A PSIM subscription is activated on a card: name its iccid.", "iccid"));
            }
        };
        after.life.iccid = Some(sim.iccid.clone());
        after.life.esim_activation_code = sim.activation_code.clone();
        let events: Events = match self.network.activate(&before.msisdn, &sim, c.now).await.map_err(refused)? {
            Activation::Done => {
                begin_service(&mut after, c.now)?;
                activation_events(&before)
            }
            Activation::At(at) => {
                // still PENDING until the network completes it
                after.status = before.status;
                after.life.pending = Some((Status::Activated, at));
                &[Event::SubscriptionUpdated]
            }
        };
        let answer = self.write(&before, &after, new.then_some(&sim), Op::Activate, events).await?;
        Ok(self.with_new_profile(answer, new.then_some(&sim)))
    }

    /// The answer of a move that issued `sim`: with its eSIM activation
    /// code, shown this once, to the API key alone or an ADMIN.
    fn with_new_profile(&self, mut answer: wire::Subscription, sim: Option<&Sim>) -> wire::Subscription {
        if crate::domain::inventory::activation_codes::may_see(self.caller, answer.customer.customer_id) {
            answer.esim_activation_code = sim.and_then(|s| s.activation_code.clone());
        }
        answer
    }

    pub async fn pause(&self, key: &str, req: wire::SubscriptionStatusChangeRequest) -> Result<wire::Subscription> {
        let (before, mut after) = self.start(key, Op::Pause, req.reason, |_| Need::Role(Role::Manager)).await?;
        self.network.set_service(&before.msisdn, false).await.map_err(refused)?;
        after.life.paused_at = Some(self.caller.now);
        self.write(&before, &after, None, Op::Pause, &[Event::SubscriptionPaused]).await
    }

    pub async fn suspend(&self, key: &str, req: wire::SubscriptionStatusChangeRequest) -> Result<wire::Subscription> {
        let (before, mut after) = self.start(key, Op::Suspend, req.reason, |_| Need::Operator("suspend a subscription")).await?;
        self.network.set_service(&before.msisdn, false).await.map_err(refused)?;
        after.life.suspended_at = Some(self.caller.now);
        self.write(&before, &after, None, Op::Suspend, &[Event::SubscriptionSuspended]).await
    }

    pub async fn block_sim(&self, key: &str, req: wire::SubscriptionStatusChangeRequest) -> Result<wire::Subscription> {
        let (before, mut after) = self.start(key, Op::BlockSim, req.reason, |_| Need::Operator("block a SIM")).await?;
        self.network.set_service(&before.msisdn, false).await.map_err(refused)?;
        after.life.blocked_at = Some(self.caller.now);
        self.write(&before, &after, None, Op::BlockSim, &[Event::SubscriptionUpdated]).await
    }

    pub async fn restore(&self, key: &str, req: wire::SubscriptionStatusChangeRequest) -> Result<wire::Subscription> {
        // a pause is the customer's to end; a suspension or a block the operator's
        let need = |s| match s {
            Status::Suspended | Status::Blocked => Need::Operator("restore a SUSPENDED or BLOCKED subscription"),
            _ => Need::Role(Role::Manager),
        };
        let (before, mut after) = self.start(key, Op::Restore, req.reason, need).await?;
        self.network.set_service(&before.msisdn, true).await.map_err(refused)?;
        (after.life.paused_at, after.life.suspended_at, after.life.blocked_at) = (None, None, None);
        self.write(&before, &after, None, Op::Restore, &[Event::SubscriptionRestored]).await
    }

    pub async fn cancel(&self, key: &str, req: wire::CancelSubscriptionRequest) -> Result<wire::Subscription> {
        let c = self.caller;
        let today = c.now.date_naive();
        // a date after today schedules; today, a past date or none: now
        let later = req.effective_date.filter(|d| *d > today);
        let op = if later.is_some() { Op::CancelLater } else { Op::CancelNow };
        let (before, mut after) = self.start(key, op, req.reason, |_| Need::Role(Role::Admin)).await?;
        // left out: false
        let force = req.force.unwrap_or(false);
        if force {
            c.require_organisation("cancel before a binding contract ends (force)")?;
        }
        let ends = later.unwrap_or(today);
        if let Some(binding) = before.life.binding_ends_on.filter(|b| *b > ends && !force) {
            return Err(conflict(
                InternalCode::BindingContractActive,
                format!("The binding contract runs until {binding}: cancel with an effectiveDate on or after it (or force, with the API key alone)."),
                "effectiveDate",
            ));
        }
        let at = later.map(|d| d.and_time(NaiveTime::MIN).and_utc()).unwrap_or(c.now);
        self.network.end_service(&before.msisdn, at).await.map_err(refused)?;
        after.life.cancelled_at = Some(c.now);
        if later.is_some() {
            after.life.pending = Some((Status::Cancelled, at));
            return self.write(&before, &after, None, op, &[Event::SubscriptionCancelled]).await;
        }
        after.life.pending = None;
        end_service(&mut after, c.now);
        self.write(&before, &after, None, op, &[Event::SubscriptionCancelled, Event::SubscriptionEnded]).await
    }

    pub async fn withdraw_cancellation(&self, key: &str, req: wire::SubscriptionStatusChangeRequest) -> Result<wire::Subscription> {
        let (before, mut after) = self.start(key, Op::WithdrawCancellation, req.reason, |_| Need::Role(Role::Admin)).await?;
        if !before.life.pending.is_some_and(|(s, _)| s == Status::Cancelled) {
            return Err(conflict(InternalCode::NoCancellationScheduled, "No cancellation of this subscription is scheduled.", "pendingStatus"));
        }
        self.network.keep_service(&before.msisdn).await.map_err(refused)?;
        (after.life.pending, after.life.cancelled_at) = (None, None);
        self.write(&before, &after, None, Op::WithdrawCancellation, &[Event::SubscriptionUpdated]).await
    }

    pub async fn change_sim(&self, key: &str, req: wire::ChangeSimRequest) -> Result<wire::Subscription> {
        sims::check_iccid(req.iccid.as_ref())?;
        if SimType::from(req.sim_type) == SimType::Psim && req.iccid.is_none() {
            return Err(Error::invalid("iccid", "required", "a PSIM is named by its iccid"));
        }
        let (before, mut after) = self.start(key, Op::ChangeSim, req.reason, |_| Need::Role(Role::Admin)).await?;
        let sim = sims::take(self.caller, self.network, req.iccid.as_deref(), req.sim_type.into(), before.id, &before.msisdn).await?;
        let old = before.life.iccid.clone().map(|iccid| Sim { iccid, activation_code: before.life.esim_activation_code.clone() });
        // a PENDING subscription is not in the network yet: its SIM is only noted
        if before.status != Status::Pending {
            self.network.swap_sim(&before.msisdn, old.as_ref(), &sim).await.map_err(refused)?;
        }
        after.sim_type = req.sim_type.into();
        after.life.iccid = Some(sim.iccid.clone());
        after.life.esim_activation_code = sim.activation_code.clone();
        let answer = self.write(&before, &after, Some(&sim), Op::ChangeSim, &[Event::SubscriptionUpdated]).await?;
        Ok(self.with_new_profile(answer, Some(&sim)))
    }
}
