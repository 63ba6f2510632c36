//! The multi-instance crash run's webhook receiver: one loopback server for
//! every endpoint (one path each) that refuses a share of attempts (503
//! with `Retry-After: 1`, as a receiver under load asks) and keeps, per
//! path, which `webhook-id`s it acknowledged and how often, and every
//! attempt whose signature does not verify with the endpoint's secret.

use crate::http::{Incoming, read_incoming};
use crate::rng::Rng;
use anyhow::Result;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncWriteExt, BufReader};

/// What the receiver saw.
#[derive(Default)]
pub struct Seen {
    /// path -> webhook-id -> times acknowledged
    pub acknowledged: HashMap<String, HashMap<String, u32>>,
    pub attempts: u64,
    pub refused: u64,
    /// attempts whose signature did not verify (path, webhook-id)
    pub bad_signatures: Vec<(String, String)>,
}

pub struct Receiver {
    pub base: String,
    pub seen: Arc<Mutex<Seen>>,
    /// path -> the endpoint's signing secret
    secrets: Arc<Mutex<HashMap<String, String>>>,
}

impl Receiver {
    /// Listens on a free loopback port, refusing `refuse` of the attempts
    /// (0.3: 30%), drawn from `seed`.
    pub async fn start(refuse: f64, seed: u64) -> Result<Receiver> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let seen = Arc::new(Mutex::new(Seen::default()));
        let secrets: Arc<Mutex<HashMap<String, String>>> = Arc::default();
        let rng = Arc::new(Mutex::new(Rng::new(seed)));
        let (s, k) = (seen.clone(), secrets.clone());
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (seen, secrets, rng) = (s.clone(), k.clone(), rng.clone());
                tokio::spawn(async move {
                    let mut reader = BufReader::new(socket);
                    while let Ok(Some(request)) = read_incoming(&mut reader).await {
                        let accept = rng.lock().expect("rng lock").between(0.0, 1.0) >= refuse;
                        let secret = secrets.lock().expect("secrets lock").get(&request.path).cloned();
                        record(&mut seen.lock().expect("seen lock"), &request, secret.as_deref(), accept);
                        let answer: &[u8] = if accept {
                            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
                        } else {
                            b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\ncontent-length: 4\r\n\r\nbusy"
                        };
                        if reader.get_mut().write_all(answer).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
        Ok(Receiver { base, seen, secrets })
    }

    /// Checks the signatures of attempts at `path` with `secret` from now.
    pub fn expect(&self, path: &str, secret: &str) {
        self.secrets.lock().expect("secrets lock").insert(path.to_string(), secret.to_string());
    }
}

fn record(seen: &mut Seen, request: &Incoming, secret: Option<&str>, accepted: bool) {
    seen.attempts += 1;
    let id = request.header("webhook-id").to_string();
    if !secret.is_some_and(|s| signed(s, request)) {
        seen.bad_signatures.push((request.path.clone(), id.clone()));
    }
    if accepted {
        *seen.acknowledged.entry(request.path.clone()).or_default().entry(id).or_default() += 1;
    } else {
        seen.refused += 1;
    }
}

/// Whether one of the attempt's signatures is the Standard Webhooks one
/// of `secret` (`whsec_` and the key in base64).
fn signed(secret: &str, r: &Incoming) -> bool {
    let Some(key) = secret.strip_prefix("whsec_").and_then(|k| STANDARD.decode(k).ok()) else { return false };
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&key).expect("HMAC takes any key length");
    mac.update(format!("{}.{}.", r.header("webhook-id"), r.header("webhook-timestamp")).as_bytes());
    mac.update(&r.body);
    let expected = format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()));
    r.header("webhook-signature").split(' ').any(|s| s == expected)
}
