//! The handlers of the Users operations: extract, call the domain, answer.

use super::Result;
use crate::api::context::Context;
use crate::api::extract::{HeaderParams, JsonBody, QueryParams};
use crate::api::request::{Access, handle, handle_idempotent, read};
use crate::domain::users;
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseCreated, HttpResponseOk, Path, RequestContext};

pub async fn user_list(
    rqctx: RequestContext<Context>,
    query: QueryParams<params::UserListQuery>,
    headers: HeaderParams<params::UserListHeaders>,
) -> Result<HttpResponseOk<types::UserList>> {
    read(&rqctx, headers, |c| async move { Ok(users::list(&c, query.into_inner()?).await?) }).await
}

pub async fn user_create(
    rqctx: RequestContext<Context>,
    headers: HeaderParams<params::UserCreateHeaders>,
    body: JsonBody<types::CreateUserRequest>,
) -> Result<HttpResponseCreated<types::User>> {
    handle_idempotent(&rqctx, Access::Write, headers, body, |c, body| async move { Ok(HttpResponseCreated(users::create(&c, body).await?)) }).await
}

pub async fn user_view(
    rqctx: RequestContext<Context>,
    path: Path<params::UserViewPath>,
    headers: HeaderParams<params::UserViewHeaders>,
) -> Result<HttpResponseOk<types::User>> {
    read(&rqctx, headers, |c| async move { Ok(users::view(&c, &path.into_inner().user_id).await?) }).await
}

pub async fn user_update(
    rqctx: RequestContext<Context>,
    path: Path<params::UserUpdatePath>,
    headers: HeaderParams<params::UserUpdateHeaders>,
    body: JsonBody<types::UpdateUserRequest>,
) -> Result<HttpResponseOk<types::User>> {
    handle(&rqctx, Access::Write, headers, |c| async move {
        let body = body.into_inner()?;
        Ok(HttpResponseOk(users::update(&c, &path.into_inner().user_id, body).await?))
    })
    .await
}
