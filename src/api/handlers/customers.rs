//! The handlers of the Customers operations: extract, call the domain, answer.

use super::Result;
use crate::api::context::Context;
use crate::api::extract::{HeaderParams, JsonBody, QueryParams};
use crate::api::request::{Access, handle, handle_idempotent, read};
use crate::domain::customers;
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseCreated, HttpResponseOk, Path, RequestContext};

pub async fn customer_list(
    rqctx: RequestContext<Context>,
    query: QueryParams<params::CustomerListQuery>,
    headers: HeaderParams<params::CustomerListHeaders>,
) -> Result<HttpResponseOk<types::CustomerList>> {
    read(&rqctx, headers, |c| async move { Ok(customers::list(&c, query.into_inner()?).await?) }).await
}

pub async fn customer_create(
    rqctx: RequestContext<Context>,
    headers: HeaderParams<params::CustomerCreateHeaders>,
    body: JsonBody<types::CreateCustomerRequest>,
) -> Result<HttpResponseCreated<types::Customer>> {
    handle_idempotent(&rqctx, Access::Write, headers, body, |c, body| async move { Ok(HttpResponseCreated(customers::create(&c, body).await?)) }).await
}

pub async fn customer_view(
    rqctx: RequestContext<Context>,
    path: Path<params::CustomerViewPath>,
    headers: HeaderParams<params::CustomerViewHeaders>,
) -> Result<HttpResponseOk<types::Customer>> {
    read(&rqctx, headers, |c| async move { Ok(customers::view(&c, &path.into_inner().customer_id).await?) }).await
}

pub async fn customer_update(
    rqctx: RequestContext<Context>,
    path: Path<params::CustomerUpdatePath>,
    headers: HeaderParams<params::CustomerUpdateHeaders>,
    body: JsonBody<types::UpdateCustomerRequest>,
) -> Result<HttpResponseOk<types::Customer>> {
    handle(&rqctx, Access::Write, headers, |c| async move {
        let body = body.into_inner()?;
        Ok(HttpResponseOk(customers::update(&c, &path.into_inner().customer_id, body).await?))
    })
    .await
}
