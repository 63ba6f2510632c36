//! An OTLP/HTTP receiver of spans on loopback, as a test's exporter: it
//! keeps every span the server sends to `/v1/traces` (protobuf, the
//! default, or JSON) and answers 200.

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// One export as received: its content type and its spans in OTLP's JSON
/// form, or what was wrong with it.
type Export = Result<(String, Value), String>;

pub struct Collector {
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` for the server
    pub url: String,
    exports: mpsc::UnboundedReceiver<Export>,
}

impl Collector {
    pub async fn start() -> Collector {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (sent, exports) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(receive(stream, sent.clone()));
            }
        });
        Collector { url, exports }
    }

    /// Every span received so far, with its resource, and the content
    /// types the exports came in (each export is kept before it is
    /// answered: once the server has exited, all it sent is here).
    pub fn spans(&mut self) -> (Vec<Value>, Vec<String>) {
        let (mut spans, mut types) = (vec![], vec![]);
        while let Ok(export) = self.exports.try_recv() {
            let (content_type, body) = export.unwrap_or_else(|e| panic!("a bad export: {e}"));
            types.push(content_type);
            for resource in body["resourceSpans"].as_array().into_iter().flatten() {
                for scope in resource["scopeSpans"].as_array().into_iter().flatten() {
                    for span in scope["spans"].as_array().into_iter().flatten() {
                        let mut span = span.clone();
                        span["resource"] = resource["resource"].clone();
                        spans.push(span);
                    }
                }
            }
        }
        (spans, types)
    }
}

/// The value of a span's attribute `key`, as text whatever its type.
pub fn attribute(span: &Value, key: &str) -> Option<String> {
    let found = span["attributes"].as_array()?.iter().find(|a| a["key"] == key)?;
    let value = found["value"].as_object()?.values().next()?;
    Some(value.as_str().map_or_else(|| value.to_string(), str::to_string))
}

/// An export's body in OTLP's JSON form.
fn decoded(content_type: &str, body: &[u8]) -> Result<Value, String> {
    match content_type {
        "application/x-protobuf" => {
            let export = ExportTraceServiceRequest::decode(body).map_err(|e| e.to_string())?;
            serde_json::to_value(export).map_err(|e| e.to_string())
        }
        "application/json" => serde_json::from_slice(body).map_err(|e| e.to_string()),
        other => Err(format!("content type {other:?}")),
    }
}

/// One connection: requests read one after another (keep-alive), each
/// export kept, each answered 200 with an empty export response.
async fn receive(stream: tokio::net::TcpStream, sent: mpsc::UnboundedSender<Export>) {
    let mut stream = BufReader::new(stream);
    loop {
        let (mut length, mut content_type, mut chunked) = (0, String::new(), false);
        let mut line = String::new();
        if stream.read_line(&mut line).await.unwrap_or(0) == 0 {
            return;
        }
        let path = line.split(' ').nth(1).unwrap_or_default().to_string();
        loop {
            line.clear();
            stream.read_line(&mut line).await.unwrap();
            let Some((name, value)) = line.trim_end().split_once(':') else { break };
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap(),
                "content-type" => content_type = value.trim().to_string(),
                "transfer-encoding" => chunked = true,
                _ => {}
            }
        }
        let export = if chunked || path != "/v1/traces" {
            Err(format!("POST {path}, chunked: {chunked}"))
        } else {
            let mut body = vec![0; length];
            stream.read_exact(&mut body).await.unwrap();
            decoded(&content_type, &body).map(|spans| (content_type.clone(), spans))
        };
        let bad = export.is_err();
        sent.send(export).unwrap();
        if bad {
            return;
        }
        let (content_type, body): (&str, Vec<u8>) = match content_type.as_str() {
            "application/json" => ("application/json", b"{}".to_vec()),
            _ => ("application/x-protobuf", vec![]),
        };
        let head = format!("HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n", body.len());
        stream.get_mut().write_all(head.as_bytes()).await.unwrap();
        stream.get_mut().write_all(&body).await.unwrap();
    }
}
