//! The handlers of the Payment Profiles operations.

use super::Result;
use crate::api::context::Context;
use crate::api::extract::{HeaderParams, QueryParams};
use crate::api::request::read;
use crate::domain::payments::profiles;
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseOk, Path, RequestContext};

pub async fn payment_profile_list(
    rqctx: RequestContext<Context>,
    query: QueryParams<params::PaymentProfileListQuery>,
    headers: HeaderParams<params::PaymentProfileListHeaders>,
) -> Result<HttpResponseOk<types::PaymentProfileList>> {
    read(&rqctx, headers, |c| async move { Ok(profiles::list(&c, query.into_inner()?).await?) }).await
}

pub async fn payment_profile_view(
    rqctx: RequestContext<Context>,
    path: Path<params::PaymentProfileViewPath>,
    headers: HeaderParams<params::PaymentProfileViewHeaders>,
) -> Result<HttpResponseOk<types::PaymentProfile>> {
    read(&rqctx, headers, |c| async move { Ok(profiles::view(&c, &path.into_inner().payment_profile_id).await?) }).await
}
