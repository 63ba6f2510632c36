//! The handlers of a sandbox organisation's test clock (its key alone).

use super::Result;
use crate::api::context::Context;
use crate::api::extract::{HeaderParams, JsonBody};
use crate::api::request::{Access, handle, handle_idempotent};
use crate::domain::sandbox;
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseAccepted, HttpResponseOk, RequestContext};
use std::sync::{Arc, OnceLock};

pub async fn sandbox_clock_view(
    rqctx: RequestContext<Context>,
    headers: HeaderParams<params::SandboxClockViewHeaders>,
) -> Result<HttpResponseOk<types::SandboxClock>> {
    let clock = rqctx.context().clock.clone();
    handle(&rqctx, Access::Read, headers, |c| async move { Ok(HttpResponseOk(sandbox::show(&c, clock.now()).await?)) }).await
}

pub async fn sandbox_clock_advance(
    rqctx: RequestContext<Context>,
    headers: HeaderParams<params::SandboxClockAdvanceHeaders>,
    body: JsonBody<types::AdvanceSandboxClockRequest>,
) -> Result<HttpResponseAccepted<types::SandboxClock>> {
    let ctx = rqctx.context();
    let clock = ctx.clock.clone();
    let asked = Arc::new(OnceLock::new());
    let org = asked.clone();
    let answer = handle_idempotent(&rqctx, Access::Write, headers, body, |c, body| async move {
        org.set(c.org).ok();
        Ok(HttpResponseAccepted(sandbox::advance(&c, clock.now(), body).await?))
    })
    .await;
    // committed, or refused (then the offset read is the one in place):
    // this instance's cached keys take the organisation's new time, and
    // the advance's worker looks now rather than at its next poll
    if let Some(org) = asked.get() {
        if let Ok(Some(row)) = ctx.store.clock_of(*org).await {
            ctx.keys.clock_moved(*org, row.offset);
        }
        ctx.advance_wake.notify_one();
    }
    answer
}
