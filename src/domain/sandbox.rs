//! A sandbox organisation's test clock, through the API: what it shows,
//! and an advance, which moves it at once and leaves the work that fell
//! due to the jobs (`jobs::clock_advance`). The organisation's key alone.

use super::Caller;
use crate::error::{Error, InternalCode, Result};
use crate::store::{ClockRow, JobKind, Store};
use crate::wire::latest::types;
use chrono::{DateTime, Months, Utc};

/// How far one advance may move the clock: two years of monthly renewals
/// over a few hundred subscriptions stays seconds of work.
const MAX_ADVANCE: Months = Months::new(24);

/// The caller's organisation's clock: 403 for a user's token, and for an
/// organisation that is not a sandbox.
async fn sandbox_clock(caller: &Caller, what: &str) -> Result<ClockRow> {
    caller.require_organisation(what)?;
    let row = caller.store.clock_of(caller.org).await?.filter(|c| c.sandbox);
    row.ok_or_else(|| Error::Forbidden {
        code: InternalCode::SandboxOnly,
        message: "Only a sandbox organisation has a test clock; this organisation is not one.".into(),
    })
}

fn view(row: &ClockRow, now: DateTime<Utc>) -> types::SandboxClock {
    types::SandboxClock {
        now,
        status: if row.advancing_to.is_some() { types::SandboxClockStatus::Advancing } else { types::SandboxClockStatus::Ready },
        advanced_at: row.advanced_at,
    }
}

/// The clock now; `server_now` is the server's time.
pub async fn show(caller: &Caller, server_now: DateTime<Utc>) -> Result<types::SandboxClock> {
    let row = sandbox_clock(caller, "read the sandbox clock").await?;
    Ok(view(&row, server_now + row.offset))
}

/// Moves the clock to `to` and schedules the advance's work, in one
/// transaction (with the idempotency key's answer, in its scope).
pub async fn advance(caller: &Caller, server_now: DateTime<Utc>, body: types::AdvanceSandboxClockRequest) -> Result<types::SandboxClock> {
    let row = sandbox_clock(caller, "advance the sandbox clock").await?;
    let refused = || Error::Conflict {
        code: InternalCode::ClockAdvancing,
        message: "The sandbox clock is ADVANCING: an advance is still running; try again when it is READY.".into(),
        property: "",
    };
    // first: while one runs, the clock's now is already its `to`
    if row.advancing_to.is_some() {
        return Err(refused());
    }
    let now = server_now + row.offset;
    let to = body.to;
    if to < now {
        return Err(Error::invalid("to", "before_now", format!("must not be before the clock's now ({now})")));
    }
    if now.checked_add_months(MAX_ADVANCE).is_none_or(|limit| to > limit) {
        return Err(Error::invalid("to", "too_far", "must be at most two years after the clock's now"));
    }
    let mut tx = caller.store.begin().await?;
    // the row as read decides between two advances at once (the second
    // finds it changed: 409), and keeps the clock from moving back
    if !tx.begin_advance(caller.org, row.offset, to - server_now, to, server_now).await? {
        return Err(refused());
    }
    Store::schedule_job(&mut tx, JobKind::ClockAdvance, &caller.org.to_string(), Some(caller.org), server_now, server_now).await?;
    tx.commit().await?;
    let advanced = ClockRow { advancing_to: Some(to), advanced_at: Some(server_now), offset: to - server_now, ..row };
    Ok(view(&advanced, to))
}
