//! An OTLP/HTTP receiver of spans on loopback, as a test's exporter: it
//! keeps every span the server sends to `/v1/traces` (OTLP's JSON form,
//! `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) and answers 200.

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

pub struct Collector {
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` for the server
    pub url: String,
    bodies: mpsc::UnboundedReceiver<Value>,
}

impl Collector {
    pub async fn start() -> Collector {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (sent, bodies) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(receive(stream, sent.clone()));
            }
        });
        Collector { url, bodies }
    }

    /// Every span received so far (each export is kept before it is
    /// answered: once the server has exited, all it sent is here).
    pub fn spans(&mut self) -> Vec<Value> {
        let mut spans = vec![];
        while let Ok(body) = self.bodies.try_recv() {
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
        spans
    }
}

/// The value of a span's attribute `key`, as text whatever its type.
pub fn attribute(span: &Value, key: &str) -> Option<String> {
    let found = span["attributes"].as_array()?.iter().find(|a| a["key"] == key)?;
    let value = found["value"].as_object()?.values().next()?;
    Some(value.as_str().map_or_else(|| value.to_string(), str::to_string))
}

/// One connection: requests read one after another (keep-alive), each
/// body kept, each answered 200 with an empty export response.
async fn receive(stream: tokio::net::TcpStream, sent: mpsc::UnboundedSender<Value>) {
    let mut stream = BufReader::new(stream);
    loop {
        let mut length = 0;
        let mut line = String::new();
        if stream.read_line(&mut line).await.unwrap_or(0) == 0 {
            return;
        }
        loop {
            line.clear();
            stream.read_line(&mut line).await.unwrap();
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap();
                }
            }
        }
        let mut body = vec![0; length];
        stream.read_exact(&mut body).await.unwrap();
        sent.send(serde_json::from_slice(&body).expect("an OTLP JSON export")).unwrap();
        let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
        stream.get_mut().write_all(answer.as_bytes()).await.unwrap();
    }
}
