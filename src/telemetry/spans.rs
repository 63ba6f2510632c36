//! The spans Switchboard makes, each the root of its trace: one per
//! request (an operation's, a hosted page's, or one dropshot refused
//! itself) and one per job item; how each ended is recorded on it.

use super::ids;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The span of one request: `operation` (an operationId, a hosted page's
/// handler, or `refused`) with its method when known, in `revision`
/// (none for a hosted page). Its ids are those of `request_id`; a caller's
/// `traceparent` among `headers` becomes a link.
pub fn request_span(
    request_id: &str,
    operation: &str,
    method: Option<&http::Method>,
    revision: Option<&str>,
    headers: Option<&http::HeaderMap>,
) -> tracing::Span {
    let span = tracing::info_span!(
        parent: None,
        "request",
        otel.name = operation,
        otel.kind = "server",
        otel.status_code = Empty,
        trace_id = request_id,
        span_id = ids::span_id_of(request_id).as_deref(),
        operation,
        revision,
        http.request.method = method.map(http::Method::as_str),
        http.response.status_code = Empty,
    );
    if ids::exporting() && !span.is_disabled() {
        ids::start_with(&span, request_id);
        if let Some(headers) = headers {
            link_caller(&span, headers);
        }
    }
    span
}

/// Links a request's span to the caller's trace when its request names one
/// (a W3C `traceparent` header): the request keeps its own trace, whose id
/// is its `traceId`, and the caller's trace shows where it went.
fn link_caller(span: &tracing::Span, headers: &http::HeaderMap) {
    if !headers.contains_key("traceparent") {
        return;
    }
    let caller = TraceContextPropagator::new().extract(&opentelemetry_http::HeaderExtractor(headers));
    let caller = caller.span().span_context().clone();
    if caller.is_valid() {
        span.add_link(caller);
    }
}

/// Records how a request ended on its span: its status, and an error
/// status for a 5xx (the server failed, not the caller).
pub fn request_ended(span: &tracing::Span, status: u16) {
    // (an integer attribute: the layer would send a u64 as text)
    span.record("http.response.status_code", i64::from(status));
    if status >= 500 {
        span.record("otel.status_code", "ERROR");
    }
}

/// The span of one job item: `kind` about `subject` of `org`, in its
/// `attempt`; its trace id is written on its log lines when exported.
pub fn job_span(kind: &str, subject: &str, org: Option<uuid::Uuid>, attempt: i64) -> tracing::Span {
    let span = tracing::info_span!(
        parent: None,
        "job",
        otel.name = kind,
        otel.kind = "consumer",
        otel.status_code = Empty,
        trace_id = Empty,
        kind,
        subject,
        org = org.map(tracing::field::display),
        attempt,
        outcome = Empty,
    );
    if ids::exporting()
        && !span.is_disabled()
        && let Some(trace) = ids::trace_id_of(&span)
    {
        span.record("trace_id", trace.as_str());
    }
    span
}

/// Records how a job item ended on its span (`done`, `recorded`,
/// `retry`: an error status).
pub fn job_ended(span: &tracing::Span, outcome: &'static str) {
    span.record("outcome", outcome);
    if outcome == "retry" {
        span.record("otel.status_code", "ERROR");
    }
}
