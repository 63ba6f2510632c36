//! What the generated route trait relies on: revisions and the dropshot
//! version policy, the Error response, and the reply wrapper that stamps
//! `Api-Revision` on every response a handler produces.

use super::generated::{ErrorBody, REVISIONS};
use crate::error::{Detail, InternalCode};
use dropshot::{
    ApiEndpointResponse, Body, ErrorStatusCode, HttpCodedResponse, HttpError, HttpResponse,
    HttpResponseAccepted, HttpResponseCreated, HttpResponseError, HttpResponseOk, RequestContext,
};
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use schemars::JsonSchema;
use serde::Serialize;
use std::borrow::Cow;

pub const API_REVISION: &str = "api-revision";

/// One published revision of the API.
#[derive(Debug)]
pub struct Revision {
    /// `2026-08-21.auk`: the only form accepted in `Api-Revision`.
    pub name: &'static str,
    /// `2026.8.21`: how dropshot routes it.
    pub version: semver::Version,
    /// Last day of support (ISO date), when announced.
    pub supported_until: Option<&'static str>,
}

impl Revision {
    pub fn all() -> &'static [Revision] {
        &REVISIONS
    }

    pub fn current() -> &'static Revision {
        REVISIONS.last().expect("at least one revision")
    }

    pub fn by_name(name: &str) -> Option<&'static Revision> {
        REVISIONS.iter().find(|r| r.name == name)
    }

    /// Supported on `today`: no end announced, or `today` not past it.
    pub fn supported_on(&self, today: chrono::NaiveDate) -> bool {
        match self.supported_until.and_then(|d| d.parse::<chrono::NaiveDate>().ok()) {
            Some(until) => today <= until,
            None => true,
        }
    }

    /// The oldest revision still supported on `today`.
    pub fn oldest_supported(today: chrono::NaiveDate) -> &'static Revision {
        REVISIONS.iter().find(|r| r.supported_on(today)).unwrap_or_else(Revision::current)
    }

    /// This revision if still supported, else the oldest that is.
    pub fn or_oldest_supported(&'static self, today: chrono::NaiveDate) -> &'static Revision {
        if self.supported_on(today) { self } else { Revision::oldest_supported(today) }
    }

    /// The published OpenAPI document of this revision.
    pub fn document(&self) -> &'static str {
        let i = REVISIONS.iter().position(|r| r.name == self.name).expect("known revision");
        super::generated::DOCUMENTS[i]
    }
}

/// What the server context must offer the generated code.
pub trait ApiContext: Send + Sync + 'static {
    /// The revision a request is answered in (see `RevisionPolicy`).
    fn revision_of(&self, headers: &HeaderMap) -> &'static Revision;
}

// ---------------------------------------------------------------- errors

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
                trace_id: None,
                span_id: None,
            },
            retry_after: None,
        }
    }

    /// A 500 whose cause is logged, not sent.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal failure");
        ApiError::new(
            ErrorStatusCode::INTERNAL_SERVER_ERROR,
            InternalCode::InternalError,
            "The server failed to complete the request.",
        )
    }

    pub fn with_details(mut self, details: Vec<Detail>) -> Self {
        self.body.details = details.into_iter().map(Detail::into_wire).collect();
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.body.hint = Some(hint.into());
        self
    }

    pub fn endpoint_removed() -> Self {
        ApiError::new(
            ErrorStatusCode::NOT_FOUND,
            InternalCode::EndpointRemoved,
            "This operation is removed in the requested revision.",
        )
    }

    /// The full response: body, `Api-Revision` and the trace id.
    pub fn into_response(mut self, revision: &str, trace_id: &str) -> Response<Body> {
        self.body.trace_id = Some(trace_id.to_string());
        let body = serde_json::to_string(&self.body).expect("Error serializes");
        let mut builder = Response::builder()
            .status(self.status.as_status())
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(API_REVISION, revision);
        if let Some(seconds) = self.retry_after {
            builder = builder.header(http::header::RETRY_AFTER, seconds.to_string());
        }
        builder.body(body.into()).expect("valid response")
    }
}

/// `code` is deprecated in favour of internalCode; it carries the status name.
fn code_for(status: ErrorStatusCode) -> &'static str {
    match status.as_u16() {
        400 => "bad_request",
        401 => "unauthorized",
        403 => "forbidden",
        404 => "not_found",
        409 => "conflict",
        412 => "precondition_failed",
        413 => "payload_too_large",
        429 => "too_many_requests",
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
        let internal = if e.status_code.is_client_error() {
            InternalCode::BadRequest
        } else {
            InternalCode::InternalError
        };
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

/// Body of the stubs that stand for an operation removed in a revision.
pub async fn endpoint_removed<C: ApiContext>(
    rqctx: &RequestContext<C>,
) -> Result<Reply<HttpResponseOk<()>>, ApiError> {
    let revision = rqctx.context().revision_of(rqctx.request.headers());
    Ok(Reply::raw(revision.name, ApiError::endpoint_removed().into_response(revision.name, &rqctx.request_id)))
}

// ---------------------------------------------------------------- replies

/// Documented on every success response.
#[derive(Serialize, JsonSchema)]
pub struct RevisionHeaders {
    /// The revision that produced this response.
    #[serde(rename = "Api-Revision")]
    pub api_revision: String,
}

enum ReplyInner<T> {
    Fresh(T),
    /// A response built already: an error rendered by the handler prelude.
    Raw(Response<Body>),
}

/// What every generated endpoint returns: a typed body, or a response built
/// already, stamped with `Api-Revision`.
pub struct Reply<T: HttpCodedResponse> {
    inner: ReplyInner<T>,
    revision: &'static str,
}

impl<T: HttpCodedResponse> Reply<T> {
    pub fn new(revision: &'static str, body: T) -> Self {
        Reply { inner: ReplyInner::Fresh(body), revision }
    }
    pub fn raw(revision: &'static str, resp: Response<Body>) -> Self {
        Reply { inner: ReplyInner::Raw(resp), revision }
    }
}

impl<T: HttpCodedResponse> HttpResponse for Reply<T> {
    fn to_result(self) -> Result<Response<Body>, HttpError> {
        let mut resp: Response<Body> = match self.inner {
            ReplyInner::Fresh(t) => t.into()?,
            ReplyInner::Raw(r) => r,
        };
        if !resp.headers().contains_key(API_REVISION) {
            resp.headers_mut().insert(API_REVISION, HeaderValue::from_static(self.revision));
        }
        Ok(resp)
    }
    fn response_metadata() -> ApiEndpointResponse {
        dropshot::HttpResponseHeaders::<T, RevisionHeaders>::response_metadata()
    }
    fn status_code(&self) -> StatusCode {
        match &self.inner {
            ReplyInner::Fresh(_) => T::STATUS_CODE,
            ReplyInner::Raw(r) => r.status(),
        }
    }
}

macro_rules! map_body {
    ($t:ident) => {
        // (dropshot does not export `HttpResponseContent`; bound on what its
        // blanket impl needs.)
        impl<A: Serialize + JsonSchema + Send + Sync + 'static> Reply<$t<A>> {
            /// Converts the body; used by the generated revision adapters.
            pub fn map_body<B: Serialize + JsonSchema + Send + Sync + 'static>(
                self,
                f: impl FnOnce(A) -> B,
            ) -> Reply<$t<B>> {
                let inner = match self.inner {
                    ReplyInner::Fresh($t(a)) => ReplyInner::Fresh($t(f(a))),
                    ReplyInner::Raw(r) => ReplyInner::Raw(r),
                };
                Reply { inner, revision: self.revision }
            }
        }
    };
}
map_body!(HttpResponseOk);
map_body!(HttpResponseCreated);
map_body!(HttpResponseAccepted);
