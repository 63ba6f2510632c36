//! The instances of a multi-instance crash run and how its clients reach
//! them: `Fleet` starts, kills (SIGKILL) and restarts `switchboard serve`
//! processes, each on a port of its own over one database; `Client` keeps a
//! connection to an instance picked at random and, when no answer comes (a
//! kill) or a 5xx or `idempotency_key_locked` does, sends the same bytes to
//! another picked at random, as a client behind a load balancer would. Every 5xx is noted with the
//! time it came, to be judged against the database's outages.

use crate::http::{Conn, Request, Response};
use crate::rng::Rng;
use crate::server::{Launch, Switchboard};
use anyhow::Result;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The running instances; `None` while one is down.
pub struct Fleet<'a> {
    launches: Vec<Launch<'a>>,
    running: Vec<Option<Switchboard>>,
}

impl<'a> Fleet<'a> {
    /// Starts every launch (the first may seed the demo: it starts alone first).
    pub fn start(launches: Vec<Launch<'a>>) -> Result<Fleet<'a>> {
        let mut running = vec![];
        for l in &launches {
            running.push(Some(Switchboard::start(l)?));
        }
        Ok(Fleet { launches, running })
    }

    pub fn addrs(&self) -> Vec<String> {
        self.launches.iter().map(|l| format!("127.0.0.1:{}", l.port)).collect()
    }

    pub fn first(&self) -> Option<&Switchboard> {
        self.running.first().and_then(Option::as_ref)
    }

    pub fn len(&self) -> usize {
        self.launches.len()
    }

    /// SIGKILL instance `i`.
    pub fn kill(&mut self, i: usize) -> Result<()> {
        if let Some(mut s) = self.running[i].take() {
            s.process.kill()?;
        }
        Ok(())
    }

    /// Starts instance `i` again (a no-op if it runs), without `--demo`.
    pub fn restart(&mut self, i: usize) -> Result<()> {
        if self.running[i].is_none() {
            self.launches[i].demo = false;
            self.running[i] = Some(Switchboard::start(&self.launches[i])?);
        }
        Ok(())
    }

    /// Every instance running again.
    pub fn restart_all(&mut self) -> Result<()> {
        (0..self.len()).try_for_each(|i| self.restart(i))
    }

    /// SIGTERM to every instance.
    pub fn stop(&mut self) -> Result<()> {
        for s in self.running.iter_mut().flatten() {
            s.process.stop()?;
        }
        Ok(())
    }
}

/// 5xx answers, and when they came (a request sent before the database
/// was cut may be answered after).
#[derive(Default)]
pub struct Faults {
    pub errors: Mutex<Vec<(Instant, u16, String)>>,
}

/// How many times a request is sent before it is given up.
const TRIES: u32 = 12;

/// One client's way into the fleet: a kept-alive connection to one
/// instance at a time.
pub struct Client {
    addrs: Vec<String>,
    rng: Rng,
    conn: Option<(usize, Conn)>,
    /// the instance that failed last: the next try goes to another
    failed: Option<usize>,
}

impl Client {
    pub fn new(addrs: Vec<String>, seed: u64) -> Client {
        Client { addrs, rng: Rng::new(seed), conn: None, failed: None }
    }

    /// Sends `bytes` to one instance: its answer, or None when the
    /// connection broke or could not be opened.
    async fn once(&mut self, request: &Request) -> Option<Response> {
        if self.conn.as_ref().is_none_or(|(_, c)| c.is_closed()) {
            let mut i = self.rng.below(self.addrs.len() as u64) as usize;
            if self.failed == Some(i) && self.addrs.len() > 1 {
                i = (i + 1 + self.rng.below(self.addrs.len() as u64 - 1) as usize) % self.addrs.len();
            }
            self.conn = Some((i, Conn::open(&self.addrs[i]).await.ok()?));
        }
        let (_, conn) = self.conn.as_mut()?;
        match tokio::time::timeout(Duration::from_secs(30), conn.send(request)).await {
            Ok(Ok(answer)) => Some(answer),
            _ => {
                self.conn = None;
                None
            }
        }
    }

    /// Sends `request` until an instance answers other than 5xx or
    /// `idempotency_key_locked`, moving to another instance after each
    /// failure; the last answer (None if none came). 5xx go to `faults`.
    pub async fn send(&mut self, request: &Request, faults: &Faults) -> Option<Response> {
        let mut last = None;
        for _ in 0..TRIES {
            match self.once(request).await {
                Some(r) if r.status >= 500 => {
                    faults.errors.lock().expect("faults lock").push((Instant::now(), r.status, format!("{} {}: {}", request.method, request.path, r.text())));
                    last = Some(r);
                }
                Some(r) if r.status == 409 && r.text().contains("idempotency_key_locked") => last = Some(r),
                Some(r) => return Some(r),
                None => {}
            }
            self.failed = self.conn.take().map(|(i, _)| i).or(self.failed);
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        last
    }
}
