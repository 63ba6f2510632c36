//! The handlers of the Product Catalogs operations: extract, call the domain, answer.

use super::Result;
use crate::api::context::Context;
use crate::api::extract::{HeaderParams, QueryParams};
use crate::api::request::read;
use crate::domain::{catalog, customers};
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseOk, Path, RequestContext};

pub async fn customer_product_catalog_view(
    rqctx: RequestContext<Context>,
    path: Path<params::CustomerProductCatalogViewPath>,
    headers: HeaderParams<params::CustomerProductCatalogViewHeaders>,
) -> Result<HttpResponseOk<types::ProductCatalog>> {
    read(&rqctx, headers, |c| async move { Ok(customers::catalog::view(&c, &path.into_inner().customer_id).await?) }).await
}

pub async fn product_offering_list(
    rqctx: RequestContext<Context>,
    query: QueryParams<params::ProductOfferingListQuery>,
    headers: HeaderParams<params::ProductOfferingListHeaders>,
) -> Result<HttpResponseOk<types::ProductOfferingList>> {
    read(&rqctx, headers, |c| async move { Ok(catalog::list(&c, query.into_inner()?).await?) }).await
}

pub async fn product_offering_view(
    rqctx: RequestContext<Context>,
    path: Path<params::ProductOfferingViewPath>,
    headers: HeaderParams<params::ProductOfferingViewHeaders>,
) -> Result<HttpResponseOk<types::ProductOffering>> {
    read(&rqctx, headers, |c| async move { Ok(catalog::view(&c, &path.into_inner().product_offering_id).await?) }).await
}
