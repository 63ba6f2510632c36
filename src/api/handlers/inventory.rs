//! The handlers of the Inventory operations.

use super::Result;
use crate::api::context::Context;
use crate::api::extract::{HeaderParams, JsonBody};
use crate::api::request::{Access, handle_idempotent, read};
use crate::domain::inventory;
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseOk, Path, RequestContext};

pub async fn number_lease(
    rqctx: RequestContext<Context>,
    headers: HeaderParams<params::NumberLeaseHeaders>,
    body: JsonBody<types::LeaseNumbersRequest, false>,
) -> Result<HttpResponseOk<types::NumberLeaseResult>> {
    handle_idempotent(&rqctx, Access::Write, headers, body, |c, body| async move { Ok(HttpResponseOk(inventory::lease::lease(&c, body).await?)) }).await
}

pub async fn inventory_sim_view(
    rqctx: RequestContext<Context>,
    path: Path<params::InventorySimViewPath>,
    headers: HeaderParams<params::InventorySimViewHeaders>,
) -> Result<HttpResponseOk<types::InventorySim>> {
    let network = rqctx.context().network.clone();
    read(&rqctx, headers, |c| async move { Ok(inventory::sims::view(&c, network.as_ref(), &path.into_inner().iccid).await?) }).await
}
