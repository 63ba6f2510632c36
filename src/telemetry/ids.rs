//! The ids of a request's span: its trace id is the request's id (the
//! `x-request-id` header and the Error object's `traceId`, 32 hex digits),
//! its span id the id's last 16 digits, so that a traceId an integrator
//! quotes finds the trace, and the `spanId` of an Error object its span.

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{SpanId, TraceContextExt, TraceId};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// Whether an exporter is installed (`init`): only then is a span's
/// OpenTelemetry half started, with its ids chosen.
static EXPORTING: AtomicBool = AtomicBool::new(false);

pub(super) fn exporting(on: bool) {
    EXPORTING.store(on, Ordering::Relaxed);
}

thread_local! {
    /// The ids the next span started on this thread takes (`request_span`
    /// sets them around the start of its span, which is synchronous).
    static CHOSEN: Cell<Option<(TraceId, SpanId)>> = const { Cell::new(None) };
}

/// The exporter's ids: those chosen for a request's span, random for
/// every other span.
#[derive(Debug, Default)]
pub(super) struct ChosenIds(RandomIdGenerator);

impl IdGenerator for ChosenIds {
    fn new_trace_id(&self) -> TraceId {
        CHOSEN.get().map_or_else(|| self.0.new_trace_id(), |(trace, _)| trace)
    }

    fn new_span_id(&self) -> SpanId {
        CHOSEN.get().map_or_else(|| self.0.new_span_id(), |(_, span)| span)
    }
}

/// A request id as dropshot makes it: 32 hex digits, not all zero.
fn parse(request_id: &str) -> Option<u128> {
    u128::from_str_radix(request_id, 16).ok().filter(|bits| *bits != 0 && request_id.len() == 32)
}

/// The span id of the trace `bits`: its last 64 bits (a version 4 UUID's
/// are never all zero: its variant bits).
fn span_of(bits: u128) -> SpanId {
    SpanId::from((bits as u64).max(1))
}

/// The trace and span id of a request whose id is `request_id` (an id of
/// another form, which dropshot never makes, gets random ones).
fn ids_of(request_id: &str) -> (TraceId, SpanId) {
    let bits = parse(request_id).unwrap_or_else(|| uuid::Uuid::new_v4().as_u128());
    (TraceId::from(bits), span_of(bits))
}

/// The `spanId` of the request span of `request_id`.
pub fn span_id_of(request_id: &str) -> Option<String> {
    parse(request_id).map(|bits| span_of(bits).to_string())
}

/// The span of one request, a trace's root: `operation` (its method when
/// known) in `revision` (none for a hosted page), its ids those of
/// `request_id`. Its status is recorded as it ends (`request_ended`).
pub fn request_span(request_id: &str, operation: &str, method: Option<&http::Method>, revision: Option<&str>) -> tracing::Span {
    let (trace_id, span_id) = ids_of(request_id);
    let span = tracing::info_span!(
        parent: None,
        "request",
        otel.name = operation,
        otel.kind = "server",
        otel.status_code = tracing::field::Empty,
        trace_id = request_id,
        span_id = %span_id,
        operation,
        revision,
        http.request.method = method.map(http::Method::as_str),
        http.response.status_code = tracing::field::Empty,
    );
    if EXPORTING.load(Ordering::Relaxed) && !span.is_disabled() {
        CHOSEN.set(Some((trace_id, span_id)));
        // starts the span's OpenTelemetry half now, with the chosen ids
        let _ = span.context();
        CHOSEN.set(None);
    }
    span
}

/// Links a request's span to the caller's trace when its request names one
/// (a W3C `traceparent` header): the request keeps its own trace, whose id
/// is its `traceId`, and the caller's trace shows where it went.
pub fn link_caller(span: &tracing::Span, headers: &http::HeaderMap) {
    if !EXPORTING.load(Ordering::Relaxed) || !headers.contains_key("traceparent") {
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
    // (an integer attribute: the layer sends a u64 as text)
    span.record("http.response.status_code", i64::from(status));
    if status >= 500 {
        span.record("otel.status_code", "ERROR");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_id_is_its_trace_id_and_its_last_digits_the_span_id() {
        let id = "0af7651916cd43dd8448eb211c80319c";
        let (trace, span) = ids_of(id);
        assert_eq!(trace.to_string(), id);
        assert_eq!(span.to_string(), "8448eb211c80319c");
        assert_eq!(span_id_of(id).as_deref(), Some("8448eb211c80319c"));
    }

    #[test]
    fn an_id_of_another_form_gets_random_ids() {
        let (a, _) = ids_of("not-an-id");
        let (b, _) = ids_of("not-an-id");
        assert_ne!(a, b);
        assert_ne!(a, TraceId::INVALID);
        assert_eq!(span_id_of("not-an-id"), None);
    }
}
