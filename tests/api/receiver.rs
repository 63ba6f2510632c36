//! A webhook receiver on 127.0.0.1 for the delivery tests: a small HTTP/1.1
//! server that hands every request it gets to the test and answers as the
//! test tells it (a status, a `Retry-After`, no answer at all, or failing
//! at random).

use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// How the receiver answers a request.
#[derive(Debug, Clone)]
pub enum Reply {
    Status(u16),
    /// a status with a `Retry-After` header
    RetryAfter(u16, String),
    /// never answers (until the connection is dropped)
    Hang,
    /// 500 with this probability, else 200
    Flaky(f64),
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    /// lower-case names
    pub headers: HashMap<String, String>,
    pub body: String,
    /// the status it was answered with (None: no answer)
    pub answered: Option<u16>,
}

impl Received {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }

    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).map(String::as_str).unwrap_or_else(|| panic!("no {name} header"))
    }
}

pub struct Receiver {
    pub url: String,
    requests: mpsc::UnboundedReceiver<Received>,
    /// one-off answers, in order, before `standing`
    next: Arc<Mutex<VecDeque<Reply>>>,
    standing: Arc<Mutex<Reply>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Receiver {
    /// A receiver answering 200 until told otherwise.
    pub async fn start() -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hooks", listener.local_addr().unwrap());
        let (tx, requests) = mpsc::unbounded_channel();
        let next = Arc::new(Mutex::new(VecDeque::new()));
        let standing = Arc::new(Mutex::new(Reply::Status(200)));
        let (n, s) = (next.clone(), standing.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let (tx, n, s) = (tx.clone(), n.clone(), s.clone());
                tokio::spawn(async move {
                    let _ = serve(socket, tx, n, s).await;
                });
            }
        });
        Receiver { url, requests, next, standing, task }
    }

    /// Answers every request this way from now on.
    pub fn always(&self, reply: Reply) {
        *self.standing.lock().unwrap() = reply;
    }

    /// Answers the next request this way (then the standing answer).
    pub fn then(&self, reply: Reply) {
        self.next.lock().unwrap().push_back(reply);
    }

    /// The next request; fails the test after 20 s without one.
    pub async fn next(&mut self) -> Received {
        tokio::time::timeout(std::time::Duration::from_secs(20), self.requests.recv()).await.expect("a delivery within 20 s").expect("the receiver runs")
    }

    /// The requests received so far and not yet taken.
    pub fn taken(&mut self) -> Vec<Received> {
        let mut out = vec![];
        while let Ok(r) = self.requests.try_recv() {
            out.push(r);
        }
        out
    }
}

async fn serve(
    socket: tokio::net::TcpStream,
    tx: mpsc::UnboundedSender<Received>,
    next: Arc<Mutex<VecDeque<Reply>>>,
    standing: Arc<Mutex<Reply>>,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(socket);
    let mut line = String::new();
    // a connection closed before its request (a sender stopped by a
    // restart while connecting) is no request: nothing is recorded or
    // answered
    if reader.read_line(&mut line).await? == 0 || line.split_whitespace().nth(1).is_none() {
        return Ok(());
    }
    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
    let mut headers = HashMap::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).await? == 0 {
            // closed before its headers ended: no request either
            return Ok(());
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let length: usize = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await?;
    let reply = next.lock().unwrap().pop_front().unwrap_or_else(|| standing.lock().unwrap().clone());
    let (status, extra) = match reply {
        Reply::Status(s) => (Some(s), String::new()),
        Reply::RetryAfter(s, after) => (Some(s), format!("retry-after: {after}\r\n")),
        Reply::Hang => (None, String::new()),
        Reply::Flaky(p) => (Some(if rand::random::<f64>() < p { 500 } else { 200 }), String::new()),
    };
    let received = Received { path, headers, body: String::from_utf8_lossy(&body).into_owned(), answered: status };
    let _ = tx.send(received);
    let Some(status) = status else {
        // hold the connection open, unanswered, until the sender gives up
        tokio::time::sleep(std::time::Duration::from_secs(120)).await;
        return Ok(());
    };
    let text = format!("answered {status}");
    let answer = format!("HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n{extra}\r\n{text}", text.len());
    reader.get_mut().write_all(answer.as_bytes()).await?;
    reader.get_mut().shutdown().await
}
