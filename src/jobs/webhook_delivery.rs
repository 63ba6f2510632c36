//! The webhook sender: makes each due delivery's attempt, an HTTP POST of
//! the event's envelope in the organisation's webhook revision, signed as
//! Standard Webhooks does, and records it. Deliveries are claimed on the
//! jobs table (so with several instances each attempt is made by one),
//! sent up to `IN_FLIGHT` at once and up to `PER_ORGANISATION` to one
//! organisation, so that a slow receiver holds up neither the others of
//! its organisation nor other organisations', and recorded in batches
//! (one transaction for the attempts that finished together). New
//! deliveries are claimed while attempts are in flight. Any 2xx acknowledges; any other answer, a
//! timeout or a failed connection is tried again on the schedule of
//! `domain::webhooks::schedule`, or when the receiver's `Retry-After`
//! asks. An endpoint whose every attempt failed for 5 days is disabled.
//! Delivery is at least once: an attempt whose outcome could not be
//! recorded is made again.

use super::Drain;
use crate::clock::Clock;
use crate::config::{Settings, WebhookUrls};
use crate::domain::webhooks::{address, deliveries, log, revision, schedule, signature};
use crate::error::Result;
use crate::states::deliveries::Move;
use crate::store::{After, AttemptRow, DeliveryWork, Job, JobKind, Recorded, Store, parse_delivery_subject};
use chrono::{DateTime, Duration, Utc};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use tokio::sync::Notify;
use tracing::Instrument;

/// Attempts in flight at once, and so the most deliveries one claim takes.
const IN_FLIGHT: usize = 256;
/// Attempts in flight at once to one organisation's endpoints: receivers
/// that hang take no more than this of the sender from the others. (As
/// many as one organisation needs to keep up with writes: at 16, the
/// bench's deliveries fell behind its events.)
const PER_ORGANISATION: usize = 64;
/// What an attempt keeps of the receiver's answer.
const EXCERPT_BYTES: usize = 1024;

/// The HTTP side of delivery.
pub struct Sender {
    client: reqwest::Client,
    urls: WebhookUrls,
    timeout: std::time::Duration,
}

impl Sender {
    pub fn new(settings: &Settings) -> anyhow::Result<Sender> {
        let timeout = settings.webhook_timeout;
        let client = reqwest::Client::builder()
            .timeout(timeout)
            // a redirect could lead anywhere: an answer of 3xx is a failure
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("Switchboard-Webhooks/", env!("CARGO_PKG_VERSION")));
        // through a proxy the proxy resolves receivers' names and decides
        // where they may go (the client resolves only the proxy's own
        // name, which may well be private); else the server does. The
        // environment's proxy settings (HTTP_PROXY, ...) are not webhooks'.
        let client = match &settings.webhooks.proxy {
            Some(proxy) => client.proxy(
                reqwest::Proxy::all(proxy).map_err(|e| anyhow::anyhow!("--webhooks-proxy {}: {}", crate::config::without_password(proxy), e.without_url()))?,
            ),
            None => {
                let resolving = address::Resolving { internet: settings.webhooks.internet.clone(), allow_private: settings.webhooks.allow_private };
                client.no_proxy().dns_resolver(Arc::new(resolving))
            }
        };
        Ok(Sender { client: client.build()?, urls: settings.webhooks.clone(), timeout })
    }

    /// One attempt: the answer's record, its `Retry-After` if it asked for
    /// one, and whether it acknowledged.
    async fn post(&self, url: &str, id: &str, body: String, secrets: &[&str], now: DateTime<Utc>) -> (AttemptRow, Option<Duration>, bool) {
        let mut attempt = AttemptRow { attempted_at: now, status_code: None, latency_ms: 0, response_body: None, error: None };
        let url = match address::route(url, &self.urls) {
            Ok(url) => url,
            Err(e) => {
                attempt.error = Some(format!("not sent: {e}"));
                return (attempt, None, false);
            }
        };
        let timestamp = now.timestamp();
        let signature = match signature::header(secrets, id, timestamp, body.as_bytes()) {
            Ok(s) => s,
            Err(e) => {
                attempt.error = Some(format!("not sent: the endpoint's secret is unreadable ({e})"));
                return (attempt, None, false);
            }
        };
        let started = std::time::Instant::now();
        let sent = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .header("webhook-id", id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(body)
            .send()
            .await;
        let (retry_after, ok) = match sent {
            Ok(mut answer) => {
                let status = answer.status();
                attempt.status_code = Some(status.as_u16().into());
                let retry_after = answer.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(|v| schedule::parse_retry_after(v, now));
                let mut excerpt = Vec::new();
                while excerpt.len() < EXCERPT_BYTES {
                    match answer.chunk().await {
                        Ok(Some(chunk)) => excerpt.extend_from_slice(&chunk),
                        _ => break,
                    }
                }
                excerpt.truncate(EXCERPT_BYTES);
                attempt.response_body = (!excerpt.is_empty()).then(|| String::from_utf8_lossy(&excerpt).into_owned());
                (retry_after, status.is_success())
            }
            Err(e) => {
                attempt.error = Some(self.describe(&e));
                (None, false)
            }
        };
        attempt.latency_ms = started.elapsed().as_millis().try_into().unwrap_or(i64::MAX);
        (attempt, retry_after, ok)
    }

    fn describe(&self, e: &reqwest::Error) -> String {
        if e.is_timeout() {
            return format!("timeout: no answer within {} s", self.timeout.as_secs_f64());
        }
        let mut text = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            text.push_str(": ");
            text.push_str(&s.to_string());
            source = s.source();
        }
        if e.is_connect() { format!("connection failed: {text}") } else { text }
    }
}

/// A claimed delivery, ready to send or already settled.
enum Item {
    Send(Send),
    Settled(Recorded),
}

/// An attempt made, before its delivery's new state is decided.
struct Made {
    job: Job,
    work: Box<DeliveryWork>,
    attempt: AttemptRow,
    retry_after: Option<Duration>,
    ok: bool,
}

/// The sender as a background task; `wake` is rung when deliveries are
/// queued.
pub fn drain(sender: Sender, wake: Arc<Notify>) -> Drain {
    let sender = Arc::new(sender);
    Drain { name: "webhook.delivery", poll: POLL, run: Arc::new(move |store, clock, stop| Box::pin(run(sender.clone(), store, clock, wake.clone(), stop))) }
}

/// How often the sender looks for due work without being woken.
const POLL: std::time::Duration = std::time::Duration::from_secs(5);

/// Sends every delivery due now, and those that fall due while attempts
/// are still in flight; the number of jobs run. It returns when nothing
/// is in flight and nothing is due, or, told to stop, once the attempts in
/// flight have landed and are recorded (those claimed and waiting for a
/// place are released with the instance's other claims).
async fn run(sender: Arc<Sender>, store: Store, clock: Arc<Clock>, wake: Arc<Notify>, mut stop: super::Stop) -> Result<usize> {
    // a delivery may wait here behind its organisation's others (at most
    // a claim's worth, `IN_FLIGHT / PER_ORGANISATION` rounds of attempts),
    // then take the timeout itself
    let rounds = u32::try_from(IN_FLIGHT / PER_ORGANISATION + 1).expect("a small number");
    let lease = Duration::from_std(sender.timeout * rounds).expect("a timeout in range") + Duration::seconds(60);
    let mut flight = Flight::default();
    let mut run = 0;
    let mut look = true;
    let mut dropped = false;
    loop {
        let stopping = dropped || *stop.borrow();
        if stopping {
            flight.waiting.clear();
        }
        if look && !stopping && flight.flying.len() < IN_FLIGHT {
            let room = IN_FLIGHT - flight.flying.len();
            let items = claim(&store, &clock, lease, room, &flight.busy()).await?;
            look = !items.is_empty();
            let mut settled = vec![];
            for item in items {
                match item {
                    Item::Settled(r) => settled.push(Err(r)),
                    Item::Send(send) => flight.take_off(send, &sender, &clock),
                }
            }
            if !settled.is_empty() {
                run += settled.len();
                record(&store, clock.now(), settled).await?;
            }
            continue;
        }
        if flight.flying.is_empty() {
            return Ok(run);
        }
        tokio::select! {
            landed = flight.flying.join_next_with_id() => {
                // with those that landed at the same time: one transaction
                let mut chunk = vec![];
                let mut landed = landed;
                while let Some(joined) = landed {
                    let id = match joined {
                        Ok((id, made)) => {
                            chunk.push(made);
                            id
                        }
                        // (its job is tried again when its lease ends)
                        Err(e) => {
                            tracing::error!(error = %e, "a webhook attempt panicked");
                            e.id()
                        }
                    };
                    flight.landed(id, &sender, &clock);
                    landed = flight.flying.try_join_next_with_id();
                }
                run += chunk.len();
                record(&store, clock.now(), chunk.into_iter().map(Ok).collect()).await?;
                look = true;
            }
            // work queued meanwhile, or falling due
            _ = wake.notified() => look = true,
            _ = tokio::time::sleep(POLL) => look = true,
            // (an error: the jobs were dropped without `stop`: as a stop)
            changed = stop.changed(), if !stopping => dropped = changed.is_err(),
        }
    }
}

/// A delivery ready to send.
struct Send {
    job: Job,
    work: Box<DeliveryWork>,
    body: String,
}

/// The attempts of one run in flight, and the claimed deliveries waiting
/// for a place of their organisation.
#[derive(Default)]
struct Flight {
    flying: tokio::task::JoinSet<Made>,
    /// the organisation of each attempt in flight
    of: HashMap<tokio::task::Id, uuid::Uuid>,
    per_organisation: HashMap<uuid::Uuid, usize>,
    waiting: HashMap<uuid::Uuid, VecDeque<Send>>,
}

impl Flight {
    /// The organisations with all their places taken: a claim leaves their
    /// deliveries for later.
    fn busy(&self) -> Vec<uuid::Uuid> {
        self.per_organisation.iter().filter(|(_, n)| **n >= PER_ORGANISATION).map(|(org, _)| *org).collect()
    }

    /// Sends `send` now, or when its organisation has a free place.
    fn take_off(&mut self, send: Send, sender: &Arc<Sender>, clock: &Arc<Clock>) {
        let org = send.work.org;
        let n = self.per_organisation.entry(org).or_default();
        if *n >= PER_ORGANISATION {
            self.waiting.entry(org).or_default().push_back(send);
            return;
        }
        *n += 1;
        let (sender, clock) = (sender.clone(), clock.clone());
        let span = crate::telemetry::job_span(send.job.kind.as_str(), &send.job.subject, send.job.org, send.job.attempts);
        let attempt = self.flying.spawn(
            {
                let span = span.clone();
                async move {
                    let Send { job, work, body } = send;
                    let secrets = secrets(&work, clock.now());
                    let (attempt, retry_after, ok) = sender.post(&work.endpoint.url, &work.event.id.to_string(), body, &secrets, clock.now()).await;
                    crate::telemetry::job_ended(&span, if ok { "done" } else { "retry" });
                    Made { job, work, attempt, retry_after, ok }
                }
            }
            .instrument(span),
        );
        self.of.insert(attempt.id(), org);
    }

    /// The attempt `id` has ended: the next delivery waiting of its
    /// organisation goes.
    fn landed(&mut self, id: tokio::task::Id, sender: &Arc<Sender>, clock: &Arc<Clock>) {
        let Some(org) = self.of.remove(&id) else { return };
        if let Some(n) = self.per_organisation.get_mut(&org) {
            *n -= 1;
            if *n == 0 {
                self.per_organisation.remove(&org);
            }
        }
        let next = self.waiting.get_mut(&org).and_then(VecDeque::pop_front);
        if self.waiting.get(&org).is_some_and(VecDeque::is_empty) {
            self.waiting.remove(&org);
        }
        if let Some(send) = next {
            self.take_off(send, sender, clock);
        }
    }
}

/// The secrets that sign an attempt now: the endpoint's, and the one before
/// a rotation while it still signs.
fn secrets(work: &DeliveryWork, now: DateTime<Utc>) -> Vec<&str> {
    let mut secrets = vec![work.endpoint.secret.as_str()];
    if let Some((previous, until)) = &work.endpoint.previous_secret
        && *until > now
    {
        secrets.push(previous);
    }
    secrets
}

/// Claims up to `limit` due deliveries, none of the organisations `busy`,
/// and prepares each: its body, or what it comes to without an attempt.
async fn claim(store: &Store, clock: &Arc<Clock>, lease: Duration, limit: usize, busy: &[uuid::Uuid]) -> Result<Vec<Item>> {
    let now = clock.now();
    let limit = i64::try_from(limit).expect("a small number");
    let jobs = store.claim_jobs_except(JobKind::WebhookDelivery, now, now + lease, limit, busy).await?;
    let keys: Vec<(uuid::Uuid, uuid::Uuid)> = jobs.iter().filter_map(|j| parse_delivery_subject(&j.subject).ok()).collect();
    let mut work: HashMap<(uuid::Uuid, uuid::Uuid), DeliveryWork> =
        store.delivery_work(&keys).await?.into_iter().map(|w| ((w.endpoint.id, w.event.id), w)).collect();
    let mut revisions = HashMap::new();
    let mut items = Vec::with_capacity(jobs.len());
    for job in jobs {
        let found = parse_delivery_subject(&job.subject).ok().and_then(|key| work.remove(&key));
        let item = match found {
            Some(w) if !deliveries::attempted(w.status) => Item::Settled(Recorded::Nothing { job }),
            None => Item::Settled(Recorded::Nothing { job }),
            Some(w) if !w.endpoint.enabled() => Item::Settled(Recorded::Hold { job, endpoint: w.endpoint.id, event: w.event.id }),
            Some(w) => {
                let revision = match revisions.get(&w.org) {
                    Some(r) => *r,
                    None => *revisions.entry(w.org).or_insert(revision::of(store, w.org, now.date_naive()).await?),
                };
                let body =
                    log::envelope(w.event.clone(), revision).and_then(|e| serde_json::to_string(&e).map_err(|e| crate::error::Error::Internal(e.to_string())));
                match body {
                    Ok(body) => Item::Send(Send { job, work: Box::new(w), body }),
                    Err(e) => {
                        // the event cannot be shown: kept, for the operator
                        // to see in the job's last error
                        tracing::error!(event = %w.event.id, error = %e, "a webhook event could not be rendered");
                        store.retry_job(&job, &e.to_string(), now + Duration::hours(1)).await?;
                        continue;
                    }
                }
            }
        };
        items.push(item);
    }
    Ok(items)
}

/// Decides each attempt's outcome and records the chunk in one
/// transaction.
async fn record(store: &Store, now: DateTime<Utc>, chunk: Vec<std::result::Result<Made, Recorded>>) -> Result<()> {
    let mut recorded = Vec::with_capacity(chunk.len());
    // endpoint -> whether every attempt to it here failed
    let mut failing: HashMap<uuid::Uuid, bool> = HashMap::new();
    let mut failing_since = HashMap::new();
    for item in chunk {
        let made = match item {
            Ok(made) => made,
            Err(settled) => {
                recorded.push(settled);
                continue;
            }
        };
        let endpoint = made.work.endpoint.id;
        let failed = failing.entry(endpoint).or_insert(true);
        *failed &= !made.ok;
        failing_since.insert(endpoint, made.work.endpoint.failing_since.unwrap_or(made.attempt.attempted_at));
        let (moved, retry_at) = if made.ok {
            (Move::Acknowledged, None)
        } else {
            let failed_in_round = u32::try_from(made.work.round_attempts + 1).unwrap_or(u32::MAX);
            match schedule::next_attempt(made.work.round_started_at, failed_in_round, now, made.retry_after, schedule::jitter()) {
                Some(at) => (Move::TriedAgain, Some(at)),
                None => (Move::GivenUp, None),
            }
        };
        let outcome = match moved {
            Move::Acknowledged => "acknowledged",
            Move::TriedAgain => "retried",
            Move::GivenUp | Move::SentAgain => "failed",
        };
        // (an attempt never sent, its URL refused, took no receiver's time)
        let sent = made.attempt.status_code.is_some() || made.attempt.error.as_deref().is_none_or(|e| !e.starts_with("not sent"));
        crate::metrics::delivery(outcome, sent.then(|| made.attempt.latency_ms as f64 / 1000.0));
        let after = After { status: deliveries::after_attempt(moved)?, retry_at };
        recorded.push(Recorded::Attempt { job: made.job, endpoint, event: made.work.event.id, attempt: made.attempt, after });
    }
    // the endpoint's move GiveUp (see `endpoints::Status::after`): only
    // an enabled endpoint is disabled, and the store checks that as it
    // writes
    let give_up: Vec<uuid::Uuid> = failing
        .iter()
        .filter(|(endpoint, failed)| **failed && failing_since.get(*endpoint).is_some_and(|since| now - *since >= schedule::FAILING_LIMIT))
        .map(|(endpoint, _)| *endpoint)
        .collect();
    for endpoint in &give_up {
        tracing::warn!(%endpoint, "webhook endpoint disabled: every attempt failed for 5 days");
    }
    store.record_deliveries(&recorded, &failing, &give_up, now).await
}
