//! The one HTTP/1.1 client of the xtask's load and crash tools: a kept-alive
//! TCP connection that writes a request's bytes and reads the whole answer
//! (status line, headers, a content-length or chunked body). Raw TCP keeps
//! the client's own cost small and visible, and lets the crash test resend
//! a request byte for byte. And the server side of the webhook receivers
//! (`read_incoming`): a request with a content-length body.

use anyhow::{Context, Result, bail};
use std::fmt::Write as _;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// A request to encode; `host` is added when it is encoded.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: &'static str,
    pub path: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Option<String>,
}

impl Request {
    /// A request without a body.
    pub fn new(method: &'static str, path: impl Into<String>) -> Request {
        Request { method, path: path.into(), headers: vec![], body: None }
    }

    pub fn get(path: impl Into<String>) -> Request {
        Request::new("GET", path)
    }

    /// A request with a JSON body.
    pub fn json(method: &'static str, path: impl Into<String>, body: impl Into<String>) -> Request {
        Request { method, path: path.into(), headers: vec![], body: Some(body.into()) }
    }

    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Request {
        self.headers.push((name, value.into()));
        self
    }

    /// The bytes on the wire, for a server at `host`.
    pub fn encode(&self, host: &str) -> Vec<u8> {
        let mut head = format!("{} {} HTTP/1.1\r\nhost: {host}\r\n", self.method, self.path);
        for (name, value) in &self.headers {
            let _ = write!(head, "{name}: {value}\r\n");
        }
        let body = self.body.as_deref().unwrap_or("");
        if self.body.is_some() {
            head.push_str("content-type: application/json\r\n");
        }
        if self.body.is_some() || self.method != "GET" {
            let _ = write!(head, "content-length: {}\r\n", body.len());
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body.as_bytes());
        bytes
    }
}

/// An answer, read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// names in lowercase
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> Result<serde_json::Value> {
        serde_json::from_slice(&self.body).with_context(|| format!("answer {} is not JSON: {}", self.status, self.text()))
    }

    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The answer, or an error naming the request, the status and the body.
    pub fn success(self, what: &str) -> Result<Response> {
        if !self.is_success() {
            bail!("{what} answered {}: {}", self.status, self.text());
        }
        Ok(self)
    }
}

/// One kept-alive connection.
pub struct Conn {
    reader: BufReader<TcpStream>,
    host: String,
    /// the server said `connection: close`: open a new one for the next request
    closed: bool,
}

impl Conn {
    pub async fn open(addr: &str) -> Result<Conn> {
        let stream = TcpStream::connect(addr).await.with_context(|| format!("connecting to {addr}"))?;
        stream.set_nodelay(true)?;
        Ok(Conn { reader: BufReader::new(stream), host: addr.to_string(), closed: false })
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    pub fn is_closed(&self) -> bool {
        self.closed
    }

    pub async fn send(&mut self, request: &Request) -> Result<Response> {
        let bytes = request.encode(&self.host);
        self.send_bytes(&bytes).await
    }

    /// Writes an encoded request and reads its answer.
    pub async fn send_bytes(&mut self, request: &[u8]) -> Result<Response> {
        if self.closed {
            bail!("the server closed this connection");
        }
        self.reader.get_mut().write_all(request).await?;
        let status_line = self.line().await?;
        let status = status_line.split_whitespace().nth(1).and_then(|s| s.parse().ok()).with_context(|| format!("not an HTTP status line: {status_line:?}"))?;
        let mut headers = vec![];
        loop {
            let line = self.line().await?;
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
            }
        }
        let value = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
        let body = if value("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
            self.chunked().await?
        } else {
            let length: usize = value("content-length").map(str::parse).transpose()?.unwrap_or(0);
            let mut body = vec![0; length];
            self.reader.read_exact(&mut body).await?;
            body
        };
        self.closed = value("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
        Ok(Response { status, headers, body })
    }

    /// One header line without its CRLF; end of stream is an error.
    async fn line(&mut self) -> Result<String> {
        let mut line = Vec::new();
        if self.reader.read_until(b'\n', &mut line).await? == 0 {
            bail!("the server closed the connection");
        }
        while line.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
            line.pop();
        }
        Ok(String::from_utf8_lossy(&line).into_owned())
    }

    async fn chunked(&mut self) -> Result<Vec<u8>> {
        let mut body = vec![];
        loop {
            let size = self.line().await?;
            let size = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16).with_context(|| format!("chunk size {size:?}"))?;
            if size == 0 {
                // trailers, then the empty line
                while !self.line().await?.is_empty() {}
                return Ok(body);
            }
            let start = body.len();
            body.resize(start + size, 0);
            self.reader.read_exact(&mut body[start..]).await?;
            self.line().await?;
        }
    }
}

/// A request a receiver read.
pub struct Incoming {
    pub path: String,
    /// names in lowercase
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Incoming {
    pub fn header(&self, name: &str) -> &str {
        self.headers.iter().find(|(n, _)| n == name).map_or("", |(_, v)| v.as_str())
    }
}

/// The next request on a kept-alive connection; None when the client hung up.
pub async fn read_incoming<R: tokio::io::AsyncBufRead + Unpin>(reader: &mut R) -> Result<Option<Incoming>> {
    let mut line = String::new();
    if reader.read_line(&mut line).await? == 0 {
        return Ok(None);
    }
    let path = line.split_whitespace().nth(1).unwrap_or_default().to_string();
    let mut headers = vec![];
    loop {
        line.clear();
        reader.read_line(&mut line).await?;
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((name, value)) = l.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    let length: usize = headers.iter().find(|(n, _)| n == "content-length").map(|(_, v)| v.parse()).transpose()?.unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await?;
    Ok(Some(Incoming { path, headers, body }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[test]
    fn a_request_is_encoded_with_host_length_and_json_type() {
        let r = Request::json("POST", "/x", "{}").header("x-api-key", "k");
        let text = String::from_utf8(r.encode("h:1")).unwrap();
        assert_eq!(text, "POST /x HTTP/1.1\r\nhost: h:1\r\nx-api-key: k\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}");
        let bare = String::from_utf8(Request::new("POST", "/y").encode("h")).unwrap();
        assert!(bare.ends_with("content-length: 0\r\n\r\n"), "{bare}");
    }

    #[tokio::test]
    async fn answers_are_read_whole_by_length_or_in_chunks_on_one_connection() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            s.write_all(b"HTTP/1.1 201 Created\r\nContent-Length: 5\r\nIdempotent-Replayed: true\r\n\r\nhello").await.unwrap();
            s.write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n").await.unwrap();
            // read the requests until the client hangs up: closing with
            // unread bytes would reset the connection
            tokio::io::copy(&mut s, &mut tokio::io::sink()).await.unwrap();
        });
        let mut conn = Conn::open(&addr).await.unwrap();
        let first = conn.send(&Request::get("/a")).await.unwrap();
        assert_eq!((first.status, first.text(), first.header("idempotent-replayed")), (201, "hello".into(), Some("true")));
        let second = conn.send(&Request::get("/b")).await.unwrap();
        assert_eq!((second.status, second.text()), (200, "abcde".into()));
    }
}
