//! The ids of a request's span: its trace id is the request's id (the
//! `x-request-id` header and the Error object's `traceId`, 32 hex digits),
//! its span id the id's last 16 digits, so that a traceId an integrator
//! quotes finds the trace, and the `spanId` of an Error object its span.

use opentelemetry::trace::{SpanId, TraceId};
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// Whether an exporter is installed (`init`): only then is a span's
/// OpenTelemetry half started as it is made.
static EXPORTING: AtomicBool = AtomicBool::new(false);

pub(super) fn set_exporting(on: bool) {
    EXPORTING.store(on, Ordering::Relaxed);
}

pub(super) fn exporting() -> bool {
    EXPORTING.load(Ordering::Relaxed)
}

/// A request's id, as dropshot is told to make them (`server::start`):
/// 128 random bits as 32 hex digits, the form of a W3C trace id. Random
/// through and through: a trace-id-ratio sampler reads the low 64 bits
/// (a UUID's variant bits are there, which would skew it).
pub fn new_request_id() -> String {
    let bits = loop {
        let bits: u128 = rand::random();
        // (an all-zero trace id or span id is invalid)
        if bits as u64 != 0 && bits >> 64 != 0 {
            break bits;
        }
    };
    format!("{bits:032x}")
}

thread_local! {
    /// The ids the span started on this thread takes (`start_with` sets
    /// them around the start, which is synchronous).
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

/// Clears the chosen ids however the start ends (a panic included), so
/// that no other span of the thread takes them.
struct Chosen;

impl Drop for Chosen {
    fn drop(&mut self) {
        CHOSEN.set(None);
    }
}

/// Starts `span`'s OpenTelemetry half now, with the ids of `request_id`
/// (the layer starts a span lazily, as it is first entered).
pub(super) fn start_with(span: &tracing::Span, request_id: &str) {
    let bits = parse(request_id).unwrap_or_else(|| rand::random::<u128>() | 1 | 1 << 64);
    CHOSEN.set(Some((TraceId::from(bits), span_of(bits))));
    let _chosen = Chosen;
    let _ = span.context();
}

/// A request id as `new_request_id` makes it: 32 hex digits, neither half
/// all zero.
fn parse(request_id: &str) -> Option<u128> {
    let bits = u128::from_str_radix(request_id, 16).ok().filter(|_| request_id.len() == 32)?;
    (bits as u64 != 0 && bits >> 64 != 0).then_some(bits)
}

/// The span id of the trace `bits`: its last 64 bits.
fn span_of(bits: u128) -> SpanId {
    SpanId::from(bits as u64)
}

/// The `spanId` of the request span of `request_id`.
pub fn span_id_of(request_id: &str) -> Option<String> {
    parse(request_id).map(|bits| span_of(bits).to_string())
}

/// The trace id of a span the exporter started (a job's), to be written
/// on its log lines; none when nothing is exported.
pub(super) fn trace_id_of(span: &tracing::Span) -> Option<String> {
    use opentelemetry::trace::TraceContextExt;
    let context = span.context();
    let id = context.span().span_context().trace_id();
    (id != TraceId::INVALID).then(|| id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_id_is_its_trace_id_and_its_last_digits_the_span_id() {
        let id = "0af7651916cd43dd8448eb211c80319c";
        assert_eq!(parse(id).map(TraceId::from).map(|t| t.to_string()).as_deref(), Some(id));
        assert_eq!(span_id_of(id).as_deref(), Some("8448eb211c80319c"));
    }

    #[test]
    fn request_ids_are_random_through_and_through() {
        let ids: Vec<String> = (0..64).map(|_| new_request_id()).collect();
        assert!(ids.iter().all(|id| id.len() == 32 && parse(id).is_some()), "{ids:?}");
        // (a UUID's variant bits would make the 17th digit one of 8, 9, a, b)
        let seventeenth: std::collections::HashSet<char> = ids.iter().filter_map(|id| id.chars().nth(16)).collect();
        assert!(seventeenth.len() > 4, "{seventeenth:?}");
    }

    #[test]
    fn an_id_of_another_form_has_no_span_id() {
        assert_eq!(span_id_of("not-an-id"), None);
        assert_eq!(span_id_of("00000000000000000000000000000000"), None);
        assert_eq!(span_id_of("0af7651916cd43dd0000000000000000"), None);
    }
}
