//! Logs and traces: the subscriber that writes the log (text or JSON
//! lines), the spans of requests and jobs, and their export by OTLP over
//! HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (docs/operating.md,
//! Traces and logs).

mod export;
mod ids;
mod spans;

pub use ids::{new_request_id, span_id_of};
pub use spans::{job_ended, job_span, request_ended, request_span};

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
    /// and the span it happened in (`span`: a request's carries its
    /// `trace_id` and `span_id`).
    Json,
}

/// What `init` set up: the exporter, when one runs, to flush on the way out.
pub struct Telemetry {
    exporter: Option<export::Exporter>,
}

impl Telemetry {
    /// Sends the spans not yet sent, then stops the exporter.
    pub async fn shutdown(self) {
        if let Some(exporter) = self.exporter {
            exporter.shutdown().await;
        }
    }
}

/// Installs the process's subscriber: the log (filtered by `RUST_LOG`,
/// `info` unless set) in `format`, and, when `export` and the OTLP
/// endpoint is set in the environment, Switchboard's spans at `info`
/// (whatever `RUST_LOG` says) to it. Called once, first thing, inside the
/// runtime.
pub fn init(format: LogFormat, export: bool) -> anyhow::Result<Telemetry> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    let log = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    // (a request's and a job's spans are roots: the list of spans an event
    // is in would only repeat `span`)
    let log = match format {
        LogFormat::Text => log.boxed(),
        LogFormat::Json => log.json().with_current_span(true).with_span_list(false).boxed(),
    }
    .with_filter(filter);
    let exporter = if export { export::Exporter::from_environment()? } else { None };
    let traces = exporter.as_ref().map(|e| {
        tracing_opentelemetry::layer()
            .with_tracer(e.tracer())
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_tracked_inactivity(false)
            .with_filter(tracing_subscriber::filter::Targets::new().with_target("switchboard", tracing::Level::INFO))
    });
    ids::set_exporting(exporter.is_some());
    tracing_subscriber::registry().with(log).with(traces).try_init()?;
    Ok(Telemetry { exporter })
}
