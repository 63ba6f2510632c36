//! A failed request as the service's Error object: `ApiError`, and the one
//! mapping of the domain's `Error` to HTTP statuses and codes.

use super::revision::API_REVISION;
use super::routes::ErrorBody;
use crate::error::{Detail, Error, InternalCode};
use crate::wire::latest::types::ErrorDetail;
use dropshot::{Body, ErrorStatusCode, HttpError, HttpResponseError};
use http::Response;
use schemars::JsonSchema;
use serde::Serialize;
use std::borrow::Cow;

/// A failed request, rendered as the service's Error object.
#[derive(Debug)]
pub struct ApiError {
    pub status: ErrorStatusCode,
    pub body: ErrorBody,
    /// seconds for the `Retry-After` header of a 429
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(status: ErrorStatusCode, internal: InternalCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            body: ErrorBody {
                message: message.into(),
                code: code_for(status).to_string(),
                internal_code: Some(internal.as_str().to_string()),
                details: vec![],
                hint: None,
                // the request's id, set as the answer is made (`into_response`)
                trace_id: None,
                span_id: None,
            },
            retry_after: None,
        }
    }

    /// A 500 whose cause is logged, not sent.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal failure");
        ApiError::new(ErrorStatusCode::INTERNAL_SERVER_ERROR, InternalCode::InternalError, "The server failed to complete the request.")
    }

    pub fn with_details(mut self, details: Vec<Detail>) -> Self {
        self.body.details = details.into_iter().map(detail).collect();
        self
    }

    pub fn endpoint_removed() -> Self {
        ApiError::new(ErrorStatusCode::NOT_FOUND, InternalCode::EndpointRemoved, "This operation is removed in the requested revision.")
    }

    /// A request for no operation, seen by an endpoint (an unpublished
    /// routed one, `routes`) rather than by the version policy, which
    /// answers the same (`paths::refusal`).
    pub fn no_route() -> Self {
        ApiError::new(ErrorStatusCode::NOT_FOUND, InternalCode::NotFound, "No operation has this path.")
    }

    /// The full response: body, `Api-Revision`, the trace id (the
    /// request's id) and the id of the request's span.
    pub fn into_response(mut self, revision: &str, trace_id: &str) -> Response<Body> {
        self.body.trace_id = Some(trace_id.to_string());
        self.body.span_id = crate::telemetry::span_id_of(trace_id);
        let body = serde_json::to_string(&self.body).expect("Error serializes");
        let mut builder =
            Response::builder().status(self.status.as_status()).header(http::header::CONTENT_TYPE, "application/json").header(API_REVISION, revision);
        if let Some(seconds) = self.retry_after {
            builder = builder.header(http::header::RETRY_AFTER, seconds.to_string());
        }
        builder.body(body.into()).expect("valid response")
    }
}

/// An error dropshot answers itself (no route, a method not allowed, a
/// body it could not read), rendered as the Error object: installed in
/// dropshot (vendor/dropshot/PATCHED.md) as the server starts. Its span is
/// a `refused` request's.
pub fn render_dropshot_error(e: HttpError, request_id: &str) -> Response<Body> {
    crate::metrics::refused(revision_of(&e).name, e.status_code.as_u16());
    let span = crate::telemetry::request_span(request_id, "refused", None, Some(revision_of(&e).name), None);
    error_response(e, request_id, &span)
}

/// The revision an error is answered in: the one the version policy set
/// on it (`Api-Revision`), else the current one.
fn revision_of(e: &HttpError) -> &'static crate::api::revision::Revision {
    e.headers
        .as_ref()
        .and_then(|h| h.get(API_REVISION))
        .and_then(|v| v.to_str().ok())
        .and_then(crate::api::revision::Revision::by_name)
        .unwrap_or_else(crate::api::revision::Revision::current)
}

/// `e` as the Error object, its end recorded on the request's `span`. It
/// keeps the headers the version policy set (`Api-Revision`, `Allow`).
pub fn error_response(e: HttpError, request_id: &str, span: &tracing::Span) -> Response<Body> {
    crate::telemetry::request_ended(span, e.status_code.as_u16());
    if e.status_code.is_server_error() {
        tracing::error!(parent: span, trace_id = %request_id, error = %e.internal_message, "request failed");
    }
    let revision = revision_of(&e);
    let headers = e.headers.clone();
    let (internal, message) = match e.status_code.as_u16() {
        // the version policy's refusal says it already; the router's says "Not Found"
        404 if e.error_code.is_none() => (InternalCode::NotFound, "No operation has this path.".to_string()),
        404 => (InternalCode::NotFound, e.external_message),
        405 => (InternalCode::MethodNotAllowed, e.external_message),
        413 => (InternalCode::PayloadTooLarge, e.external_message),
        // the version policy's: unknown keys from the address, not looked up
        429 => (InternalCode::TooManyRequests, e.external_message),
        _ if e.status_code.is_client_error() => (InternalCode::BadRequest, e.external_message),
        _ => (InternalCode::InternalError, e.external_message),
    };
    let mut response = ApiError::new(e.status_code, internal, message).into_response(revision.name, request_id);
    let out = response.headers_mut();
    for (name, value) in headers.iter().flat_map(|h| h.iter()) {
        out.insert(name.clone(), value.clone());
    }
    super::headers::kept_private(out);
    response
}

/// `code` is deprecated in favour of internalCode; it carries the status name.
fn code_for(status: ErrorStatusCode) -> &'static str {
    match status.as_u16() {
        400 => "bad_request",
        401 => "unauthorized",
        403 => "forbidden",
        404 => "not_found",
        405 => "method_not_allowed",
        409 => "conflict",
        412 => "precondition_failed",
        413 => "payload_too_large",
        429 => "too_many_requests",
        503 => "service_unavailable",
        _ => "internal_server_error",
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.body.message, self.status.as_u16())
    }
}

/// dropshot converts its own failures (path extraction, response building)
/// into the endpoint's error type; they keep the Error shape.
impl From<HttpError> for ApiError {
    fn from(e: HttpError) -> Self {
        let internal = if e.status_code.is_client_error() { InternalCode::BadRequest } else { InternalCode::InternalError };
        ApiError::new(e.status_code, internal, e.external_message)
    }
}

impl Serialize for ApiError {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.body.serialize(s)
    }
}

impl JsonSchema for ApiError {
    fn schema_name() -> String {
        ErrorBody::schema_name()
    }
    fn schema_id() -> Cow<'static, str> {
        ErrorBody::schema_id()
    }
    fn json_schema(g: &mut schemars::r#gen::SchemaGenerator) -> schemars::schema::Schema {
        ErrorBody::json_schema(g)
    }
}

impl HttpResponseError for ApiError {
    fn status_code(&self) -> ErrorStatusCode {
        self.status
    }
}

/// One field of a request, as the Error object names it.
fn detail(d: Detail) -> ErrorDetail {
    ErrorDetail { code: d.code.to_string(), message: d.message, property: (!d.property.is_empty()).then_some(d.property), suggestion: None }
}

/// The one place where domain failures become HTTP.
impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        match e {
            Error::Invalid(details) => {
                ApiError::new(ErrorStatusCode::BAD_REQUEST, InternalCode::ValidationFailed, "The request has invalid fields; see details.")
                    .with_details(details)
            }
            Error::BadRequest { code, message } => ApiError::new(ErrorStatusCode::BAD_REQUEST, code, message),
            Error::Unauthorized { code, message } => ApiError::new(ErrorStatusCode::UNAUTHORIZED, code, message),
            Error::Forbidden { code, message } => ApiError::new(ErrorStatusCode::FORBIDDEN, code, message),
            Error::NotFound { code, message, property } => {
                let details = if property.is_empty() { vec![] } else { vec![Detail::new(property, code.as_str(), message.clone())] };
                ApiError::new(ErrorStatusCode::NOT_FOUND, code, message).with_details(details)
            }
            Error::Conflict { code, message, property } => {
                let detail = Detail::new(property, code.as_str(), message.clone());
                ApiError::new(ErrorStatusCode::CONFLICT, code, message).with_details(vec![detail])
            }
            Error::Precondition { code, message } => ApiError::new(ErrorStatusCode::PRECONDITION_FAILED, code, message),
            Error::Refused { code, message, details } => ApiError::new(ErrorStatusCode::CONFLICT, code, message).with_details(details),
            Error::Missing { code, message, details } => ApiError::new(ErrorStatusCode::NOT_FOUND, code, message).with_details(details),
            Error::TooMany { message, retry_after } => {
                let mut e = ApiError::new(ErrorStatusCode::TOO_MANY_REQUESTS, InternalCode::TooManyRequests, message);
                e.retry_after = Some(retry_after);
                e
            }
            Error::Database(e) => ApiError::internal(format_args!("database: {e}")),
            Error::Internal(m) => ApiError::internal(m),
        }
    }
}
