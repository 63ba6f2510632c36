//! The OTLP exporter of spans, when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set: over HTTP, protobuf
//! unless `OTEL_EXPORTER_OTLP_PROTOCOL` is `http/json`, in batches (the
//! `OTEL_BSP_*` settings), sent by reqwest on the server's runtime.

use super::ids::ChosenIds;
use anyhow::Context;
use bytes::Bytes;
use opentelemetry_http::{HttpClient, HttpError};
use opentelemetry_otlp::WithHttpConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use std::time::Duration;

/// The exporter's provider, or none when no endpoint is set. Built inside
/// the server's runtime (its requests are sent there).
pub(super) fn provider() -> anyhow::Result<Option<SdkTracerProvider>> {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    if !set("OTEL_EXPORTER_OTLP_ENDPOINT") && !set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        return Ok(None);
    }
    // (the exporter's own timeout, OTEL_EXPORTER_OTLP_TIMEOUT, is 10 s)
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .context("the trace exporter's HTTP client")?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(OnRuntime { client, runtime: tokio::runtime::Handle::current() })
        .build()
        .context("OTEL_EXPORTER_OTLP_ENDPOINT")?;
    let mut resource = Resource::builder();
    if !set("OTEL_SERVICE_NAME") {
        resource = resource.with_service_name("switchboard");
    }
    Ok(Some(
        SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_id_generator(ChosenIds::default())
            .with_resource(resource.build())
            .build(),
    ))
}

/// reqwest's client, its requests run on the server's runtime: the batch
/// exporter sends from a thread of its own, where reqwest has no reactor.
#[derive(Debug)]
struct OnRuntime {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

#[async_trait::async_trait]
impl HttpClient for OnRuntime {
    async fn send_bytes(&self, request: http::Request<Bytes>) -> Result<http::Response<Bytes>, HttpError> {
        let request = reqwest::Request::try_from(request.map(reqwest::Body::from))?;
        let client = self.client.clone();
        let sent = self.runtime.spawn(async move {
            let response = client.execute(request).await?;
            let mut answer = http::Response::builder().status(response.status());
            if let Some(headers) = answer.headers_mut() {
                *headers = response.headers().clone();
            }
            // a collector's answer is a few bytes (a partial success at most)
            let body = response.bytes().await?;
            Ok::<_, HttpError>(answer.body(body)?)
        });
        sent.await?
    }
}
