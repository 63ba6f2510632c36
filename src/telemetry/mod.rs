//! Logs and traces: the subscriber that writes the log (text or JSON
//! lines), the spans of requests and jobs, and their export by OTLP over
//! HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (docs/operating.md,
//! Traces and logs).

mod export;
mod ids;

pub use ids::{link_caller, request_ended, request_span, span_id_of};

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// How log lines are written (to standard error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// One readable line per event.
    #[default]
    Text,
    /// One JSON object per line: `timestamp`, `level`, `target`, `fields`,
    /// and the spans it happened in (`span`, `spans`: a request's carries
    /// its `trace_id` and `span_id`).
    Json,
}

/// What `init` set up: the exporter, when one runs, to flush on the way out.
pub struct Telemetry {
    exporter: Option<opentelemetry_sdk::trace::SdkTracerProvider>,
}

impl Telemetry {
    /// Whether spans are exported.
    pub fn exporting(&self) -> bool {
        self.exporter.is_some()
    }

    /// Sends the spans not yet sent, then stops the exporter. Blocking
    /// (the exporter's own thread sends), so it runs off the runtime's
    /// workers.
    pub async fn shutdown(self) {
        let Some(provider) = self.exporter else { return };
        let flushed = tokio::task::spawn_blocking(move || provider.shutdown()).await;
        if let Ok(Err(e)) = flushed {
            tracing::warn!(error = %e, "the trace exporter stopped with spans unsent");
        }
    }
}

/// Installs the process's subscriber: the log (filtered by `RUST_LOG`,
/// `info` unless set) in `format`, and, when `export` and the OTLP
/// endpoint is set in the environment, the spans of requests and jobs to
/// it. Called once, first thing.
pub fn init(format: LogFormat, export: bool) -> anyhow::Result<Telemetry> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    let log = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let log = match format {
        LogFormat::Text => log.boxed(),
        LogFormat::Json => log.json().with_current_span(true).with_span_list(true).boxed(),
    }
    .with_filter(filter);
    let provider = if export { export::provider()? } else { None };
    // the exporter takes our spans at `info` whatever the log's filter is
    let traces = provider.as_ref().map(|p| {
        use opentelemetry::trace::TracerProvider;
        tracing_opentelemetry::layer()
            .with_tracer(p.tracer("switchboard"))
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_tracked_inactivity(false)
            .with_filter(tracing_subscriber::filter::Targets::new().with_target("switchboard", tracing::Level::INFO))
    });
    ids::exporting(provider.is_some());
    tracing_subscriber::registry().with(log).with(traces).try_init()?;
    Ok(Telemetry { exporter: provider })
}

/// The span of one job item (a trace's root): `kind` about `subject` of
/// `org`, in its `attempt`. `request_ended`'s counterpart is `job_ended`.
pub fn job_span(kind: &str, subject: &str, org: Option<uuid::Uuid>, attempt: i64) -> tracing::Span {
    tracing::info_span!(
        parent: None,
        "job",
        otel.name = kind,
        otel.kind = "consumer",
        otel.status_code = tracing::field::Empty,
        kind,
        subject,
        org = org.map(tracing::field::display),
        attempt,
        outcome = tracing::field::Empty,
    )
}

/// Records how a job item ended on its span (`done`, `recorded`,
/// `retry`: an error status).
pub fn job_ended(span: &tracing::Span, outcome: &'static str) {
    span.record("outcome", outcome);
    if outcome == "retry" {
        span.record("otel.status_code", "ERROR");
    }
}
