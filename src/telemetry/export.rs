//! The OTLP exporter of spans, when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set: over HTTP, protobuf
//! unless the protocol variable says `http/json`, in batches (the
//! `OTEL_BSP_*` settings), sent by reqwest on the server's runtime.

use super::ids::ChosenIds;
use anyhow::{Context, bail};
use bytes::Bytes;
use opentelemetry::trace::TracerProvider;
use opentelemetry_http::{HttpClient, HttpError};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::resource::{EnvResourceDetector, TelemetryResourceDetector};
use opentelemetry_sdk::trace::SdkTracerProvider;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub(super) struct Exporter {
    provider: SdkTracerProvider,
    /// how long one export may take (`OTEL_EXPORTER_OTLP_TIMEOUT`)
    timeout: Duration,
}

/// A variable of the environment, when set and not empty.
fn variable(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The traces' own variable, else the general one.
fn setting(name: &str) -> Option<String> {
    variable(&format!("OTEL_EXPORTER_OTLP_TRACES_{name}")).or_else(|| variable(&format!("OTEL_EXPORTER_OTLP_{name}")))
}

impl Exporter {
    /// The exporter the environment asks for, or none when no endpoint is
    /// set; a setting it cannot honour stops the start.
    pub(super) fn from_environment() -> anyhow::Result<Option<Exporter>> {
        if setting("ENDPOINT").is_none() {
            return Ok(None);
        }
        let protocol = match setting("PROTOCOL").as_deref().map(str::trim) {
            None | Some("http/protobuf") => Protocol::HttpBinary,
            Some("http/json") => Protocol::HttpJson,
            Some(other) => bail!("OTEL_EXPORTER_OTLP_PROTOCOL: {other:?} is not served; http/protobuf or http/json"),
        };
        let timeout = match setting("TIMEOUT") {
            None => Duration::from_secs(10),
            Some(ms) => {
                Duration::from_millis(ms.trim().parse().with_context(|| format!("OTEL_EXPORTER_OTLP_TIMEOUT: {ms:?} is not a number of milliseconds"))?)
            }
        };
        let runtime = tokio::runtime::Handle::try_current().context("the trace exporter needs the server's runtime")?;
        let client =
            reqwest::Client::builder().timeout(timeout).redirect(reqwest::redirect::Policy::none()).build().context("the trace exporter's HTTP client")?;
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(protocol)
            .with_timeout(timeout)
            .with_http_client(OnRuntime { client, runtime })
            .build()
            .context("the trace exporter")?;
        // service.name: OTEL_SERVICE_NAME, else OTEL_RESOURCE_ATTRIBUTES's, else ours
        let mut resource = Resource::builder_empty()
            .with_service_name("switchboard")
            .with_detectors(&[Box::new(TelemetryResourceDetector), Box::new(EnvResourceDetector::new())]);
        if let Some(name) = variable("OTEL_SERVICE_NAME") {
            resource = resource.with_service_name(name);
        }
        let provider =
            SdkTracerProvider::builder().with_batch_exporter(exporter).with_id_generator(ChosenIds::default()).with_resource(resource.build()).build();
        Ok(Some(Exporter { provider, timeout }))
    }

    pub(super) fn tracer(&self) -> opentelemetry_sdk::trace::SdkTracer {
        self.provider.tracer("switchboard")
    }

    /// Sends the spans not yet sent (one export's time at most), then
    /// stops. Blocking (the batches' own thread sends), so off the
    /// runtime's workers, whose runtime carries the export.
    pub(super) async fn shutdown(self) {
        let Exporter { provider, timeout } = self;
        let flushed = tokio::task::spawn_blocking(move || provider.shutdown_with_timeout(timeout + Duration::from_secs(1))).await;
        if let Ok(Err(e)) = flushed {
            tracing::warn!(error = %e, "the trace exporter stopped with spans unsent");
        }
    }
}

/// reqwest's client (as opentelemetry-http drives it, answers capped at
/// 4 MiB), its requests run on the server's runtime: the batches are sent
/// from a thread of their own, where reqwest has no reactor.
#[derive(Debug)]
struct OnRuntime {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

#[async_trait::async_trait]
impl HttpClient for OnRuntime {
    async fn send_bytes(&self, request: http::Request<Bytes>) -> Result<http::Response<Bytes>, HttpError> {
        let client = self.client.clone();
        let sent = self.runtime.spawn(async move { client.send_bytes(request).await }).await?;
        match &sent {
            Ok(answer) if answer.status().is_success() => {}
            Ok(answer) => unsent(&format!("the collector answered {}", answer.status())),
            Err(e) => unsent(&e.to_string()),
        }
        sent
    }
}

/// Says that spans were not sent, at most once a minute (the SDK says
/// nothing; a collector that is down would otherwise be found only by the
/// gap in the traces). Outside any span: nothing of it is exported.
fn unsent(why: &str) {
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let last = LAST.load(Ordering::Relaxed);
    if now >= last + 60 && LAST.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
        tracing::warn!(error = why, "spans not exported (said at most once a minute)");
    }
}
