//! An invoice's machine-readable document (`GET /invoice-documents/{token}`,
//! the invoice's `documentUrl`): its Peppol BIS Billing 3.0 UBL XML. The
//! token is the address's only key, as a payment page's is.

use super::{TokenPath, internal, is_token};
use crate::api::context::Context;
use crate::domain::invoices::document;
use crate::store::IdOrRef;
use dropshot::{Body, HttpError, Path, RequestContext};
use http::{Response, StatusCode};

fn answer(status: StatusCode, content_type: &str, body: String) -> Result<Response<Body>, HttpError> {
    Response::builder()
        .status(status)
        .header(http::header::CONTENT_TYPE, content_type)
        .header(http::header::CACHE_CONTROL, "no-store")
        .header("referrer-policy", "no-referrer")
        .header("x-content-type-options", "nosniff")
        .body(Body::from(body))
        .map_err(|e| HttpError::for_internal_error(e.to_string()))
}

#[dropshot::endpoint { method = GET, path = "/invoice-documents/{token}", unpublished = true }]
pub(super) async fn invoice_document(rqctx: RequestContext<Context>, path: Path<TokenPath>) -> Result<Response<Body>, HttpError> {
    super::traced(&rqctx, invoice_document_answered(&rqctx, path)).await
}

async fn invoice_document_answered(rqctx: &RequestContext<Context>, path: Path<TokenPath>) -> Result<Response<Body>, HttpError> {
    let ctx = rqctx.context();
    let token = path.into_inner().token;
    let not_found = || answer(StatusCode::NOT_FOUND, "text/plain; charset=utf-8", "There is no document at this address.\n".into());
    let invoice = match is_token(&token) {
        true => ctx.store.invoice_by_document(&token).await.map_err(internal)?,
        false => None,
    };
    let Some(invoice) = invoice else {
        super::missed(rqctx);
        return not_found();
    };
    let customer = ctx.store.customer(invoice.org, &IdOrRef::Id(invoice.customer_id)).await.map_err(internal)?;
    let Some(customer) = customer else { return not_found() };
    let seller = ctx.store.organisation_name(invoice.org).await.map_err(internal)?.unwrap_or_default();
    answer(StatusCode::OK, "application/xml; charset=utf-8", document::ubl(&invoice, &seller, &customer).map_err(internal)?)
}
