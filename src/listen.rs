//! `switchboard listen`: local forwarding of an organisation's events, as
//! `stripe listen` does. It follows the event log (`GET /events`) with the
//! organisation's API key, so no public endpoint is needed, and POSTs each
//! new event to a local URL exactly as the server delivers one: the same
//! body and Standard Webhooks headers, signed with a secret of its own
//! (printed at start), retried on the server's schedule. What it has
//! forwarded, what waits for a retry and its secret are kept in a state
//! file, so a restart resumes where it stopped.
//!
//! The log is followed in the order its events were recorded (`GET
//! /events?after=`, from the position after the last event read), not by
//! their dates: an event dated a moment earlier may commit a moment later,
//! and a sandbox clock's advance records months of events dated in the
//! past; neither is skipped, and none is read twice.

use crate::clock::Clock;
use crate::domain::webhooks::{schedule, secret, signature};
use anyhow::{Context, bail};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Clone, clap::Args)]
pub struct Options {
    /// The API's base URL, e.g. http://localhost:8080/api/v2.
    #[arg(long, env = "SWITCHBOARD_API_URL")]
    pub api_url: String,
    /// The organisation's API key.
    #[arg(long, env = "SWITCHBOARD_API_KEY", hide_env_values = true)]
    pub api_key: String,
    /// Where to POST each event, e.g. http://localhost:3000/hooks.
    #[arg(long)]
    pub forward_to: String,
    /// Only these event types (comma-separated); all by default.
    #[arg(long, value_delimiter = ',')]
    pub events: Vec<String>,
    /// Where the secret and the position in the log are kept.
    #[arg(long, default_value = ".switchboard-listen.json")]
    pub state: PathBuf,
    /// How often the log is read, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    pub poll_ms: u64,
}

/// What survives a restart.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct State {
    secret: String,
    /// where in the log reading goes on: the `after` of the next read
    /// (None before the first start has read where the log ends)
    after: Option<String>,
    /// events waiting for another attempt
    retries: Vec<Retry>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Retry {
    event: Value,
    first_attempt: DateTime<Utc>,
    attempts: u32,
    next_attempt: DateTime<Utc>,
}

impl State {
    fn load(path: &PathBuf) -> anyhow::Result<State> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).with_context(|| format!("reading {}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State { secret: secret::mint(), ..State::default() }),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// Writes the state if it differs from `last` (what was written
    /// before), so a quiet log costs no disk writes.
    fn save(&self, path: &PathBuf, last: &mut Vec<u8>) -> anyhow::Result<()> {
        let bytes = serde_json::to_vec_pretty(self)?;
        if bytes == *last {
            return Ok(());
        }
        // written whole, then renamed over the old one: never half a file;
        // readable by its owner alone (it holds the signing secret and
        // events' data)
        let tmp = path.with_extension("tmp");
        let _ = std::fs::remove_file(&tmp);
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp).with_context(|| format!("writing {}", tmp.display()))?;
        file.write_all(&bytes)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
        *last = bytes;
        Ok(())
    }
}

/// The API's URL must be https, unless it is on this machine: the key goes
/// with every request.
fn check_api_url(api_url: &str) -> anyhow::Result<()> {
    let url = url::Url::parse(api_url).with_context(|| format!("--api-url {api_url}"))?;
    let local = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    match url.scheme() {
        "https" => Ok(()),
        "http" if local => Ok(()),
        _ => bail!("--api-url must be https (http only to this machine): the API key goes with every request"),
    }
}

/// Forwards events until `stop` resolves; `say` gets each line to show.
pub async fn run(opts: Options, clock: Arc<Clock>, mut say: impl FnMut(String), stop: impl std::future::Future<Output = ()>) -> anyhow::Result<()> {
    check_api_url(&opts.api_url)?;
    let first_start = !opts.state.exists();
    let mut state = State::load(&opts.state)?;
    // a redirect would carry the key (or an event) wherever it points
    let http = reqwest::Client::builder().timeout(std::time::Duration::from_secs(15)).redirect(reqwest::redirect::Policy::none()).build()?;
    if state.after.is_none() {
        // a first start forwards what happens from now on: it reads where
        // the log ends
        read_log(&http, &opts, &mut state).await?;
    }
    let mut saved = vec![];
    state.save(&opts.state, &mut saved)?;
    // the secret is shown once, when it is made; later it is in the file
    say(if first_start {
        format!("Forwarding events to {}. Your webhook signing secret is {} (kept in {}).", opts.forward_to, state.secret, opts.state.display())
    } else {
        format!("Forwarding events to {} (the webhook signing secret is kept in {}).", opts.forward_to, opts.state.display())
    });
    tokio::pin!(stop);
    loop {
        let fresh = read_log(&http, &opts, &mut state).await?;
        let now = clock.now();
        for event in fresh {
            attempt(&http, &opts, &state.secret, event, now, None, &mut state.retries, &mut say).await;
        }
        let due: Vec<Retry> = {
            let (due, later) = std::mem::take(&mut state.retries).into_iter().partition(|r| r.next_attempt <= now);
            state.retries = later;
            due
        };
        for r in due {
            attempt(&http, &opts, &state.secret, r.event, now, Some((r.first_attempt, r.attempts)), &mut state.retries, &mut say).await;
        }
        state.save(&opts.state, &mut saved)?;
        tokio::select! {
            _ = &mut stop => return Ok(()),
            _ = tokio::time::sleep(std::time::Duration::from_millis(opts.poll_ms)) => {}
        }
    }
}

/// Pages of the log read as one.
const PAGE: usize = 100;

/// The events recorded since the last read, in the order they were
/// recorded (none on a first start, which only learns where the log ends).
async fn read_log(http: &reqwest::Client, opts: &Options, state: &mut State) -> anyhow::Result<Vec<Value>> {
    let mut fresh = vec![];
    loop {
        let after = state.after.clone().unwrap_or_else(|| "end".into());
        let mut query: Vec<(&str, String)> = vec![("after", after), ("limit", PAGE.to_string())];
        query.extend(opts.events.iter().map(|t| ("type", t.clone())));
        let answer = http.get(format!("{}/events", opts.api_url.trim_end_matches('/'))).header("x-api-key", &opts.api_key).query(&query).send().await?;
        let status = answer.status();
        let page: Value = answer.json().await.unwrap_or(Value::Null);
        // the event it stood after is not in this organisation's log (its
        // database was reset, or the key is another organisation's): it
        // goes on from the log's end, as a first start does
        if status == reqwest::StatusCode::NOT_FOUND && state.after.is_some() {
            state.after = None;
            continue;
        }
        if !status.is_success() {
            bail!("reading the event log: {status} {}", page["message"].as_str().unwrap_or_default());
        }
        let items = page["items"].as_array().cloned().unwrap_or_default();
        let Some(next) = page["pagination"]["nextCursor"].as_str() else { bail!("the event log named no position to read on from") };
        state.after = Some(next.to_string());
        let full = items.len() == PAGE;
        fresh.extend(items);
        if !full {
            return Ok(fresh);
        }
    }
}

/// One forwarding attempt of `event`, shown as one line; a failure is
/// queued in `retries` on the server's schedule (`before`: the first
/// attempt and the attempts made so far).
#[allow(clippy::too_many_arguments)]
async fn attempt(
    http: &reqwest::Client,
    opts: &Options,
    secret: &str,
    event: Value,
    now: DateTime<Utc>,
    before: Option<(DateTime<Utc>, u32)>,
    retries: &mut Vec<Retry>,
    say: &mut impl FnMut(String),
) {
    let id = event["eventId"].as_str().unwrap_or_default().to_string();
    let kind = event["type"].as_str().unwrap_or_default().to_string();
    let body = event.to_string();
    let signed = signature::header(&[secret], &id, now.timestamp(), body.as_bytes()).unwrap_or_default();
    let sent = http
        .post(&opts.forward_to)
        .header("content-type", "application/json")
        .header("webhook-id", &id)
        .header("webhook-timestamp", now.timestamp().to_string())
        .header("webhook-signature", signed)
        .body(body)
        .send()
        .await;
    let (outcome, ok, retry_after) = match sent {
        Ok(answer) => {
            let retry_after = answer.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(|v| schedule::parse_retry_after(v, now));
            (format!("{}", answer.status().as_u16()), answer.status().is_success(), retry_after)
        }
        Err(e) if e.is_timeout() => ("timeout".into(), false, None),
        Err(e) if e.is_connect() => ("connection refused".into(), false, None),
        Err(e) => (e.to_string(), false, None),
    };
    let (first, attempts) = before.map_or((now, 1), |(first, n)| (first, n + 1));
    let next = if ok { None } else { schedule::next_attempt(first, attempts, now, retry_after, schedule::jitter()) };
    let tail = match (ok, next) {
        (true, _) => String::new(),
        (false, Some(at)) => format!(" (attempt {attempts}; again in {}s)", (at - now).num_seconds()),
        (false, None) => format!(" (attempt {attempts}; given up)"),
    };
    say(format!("{}  {kind:<32} {id}  -> {outcome}{tail}", now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)));
    if let Some(next_attempt) = next {
        retries.push(Retry { event, first_attempt: first, attempts, next_attempt });
    }
}
