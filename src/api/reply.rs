//! The reply every generated endpoint returns: a typed body or a response
//! built already (an error, an idempotent replay), stamped with
//! `Api-Revision`.

use super::revision::API_REVISION;
use dropshot::{ApiEndpointResponse, Body, HttpCodedResponse, HttpError, HttpResponse, HttpResponseAccepted, HttpResponseCreated, HttpResponseOk};
use http::{HeaderValue, Response, StatusCode};
use schemars::JsonSchema;
use serde::Serialize;

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

    /// Another operation's reply, as this one's: how the endpoint of a
    /// variable path segment answers for the literal one beside it, which
    /// dropshot's router cannot hold (see the codegen's `Routed`).
    pub fn rerouted<U: HttpCodedResponse>(other: Reply<U>) -> Result<Self, super::error::ApiError> {
        let revision = other.revision;
        Ok(Reply::raw(revision, other.to_result()?))
    }
}

impl<T: HttpCodedResponse> HttpResponse for Reply<T> {
    fn to_result(self) -> Result<Response<Body>, HttpError> {
        let mut resp: Response<Body> = match self.inner {
            ReplyInner::Fresh(t) => t.into()?,
            ReplyInner::Raw(r) => r,
        };
        let headers = resp.headers_mut();
        if !headers.contains_key(API_REVISION) {
            headers.insert(API_REVISION, HeaderValue::from_static(self.revision));
        }
        super::headers::kept_private(headers);
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
            pub fn map_body<B: Serialize + JsonSchema + Send + Sync + 'static>(self, f: impl FnOnce(A) -> B) -> Reply<$t<B>> {
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

/// Body of the stubs that stand for an operation removed in a revision.
pub async fn endpoint_removed<C: super::revision::ApiContext>(
    rqctx: &dropshot::RequestContext<C>,
) -> Result<Reply<dropshot::HttpResponseOk<()>>, super::error::ApiError> {
    Ok(refused(rqctx, super::error::ApiError::endpoint_removed()))
}

/// `error`, answered by an endpoint before any operation's prelude ran (a
/// removed operation, an unpublished route's path it does not serve or
/// cannot read): in the request's revision, with its trace id and span.
pub fn refused<C: super::revision::ApiContext, T: HttpCodedResponse>(rqctx: &dropshot::RequestContext<C>, error: super::error::ApiError) -> Reply<T> {
    let (request, id) = (&rqctx.request, &rqctx.request_id);
    let revision = rqctx.context().revision_of(request.headers(), request.remote_addr().ip());
    let span = crate::telemetry::request_span(id, &rqctx.endpoint.operation_id, Some(request.method()), Some(revision.name), Some(request.headers()));
    crate::telemetry::request_ended(&span, error.status.as_u16());
    Reply::raw(revision.name, error.into_response(revision.name, id))
}
