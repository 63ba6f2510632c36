//! The multi-instance crash run's sandbox organisation: its lifecycle
//! moves (a customer, an order for a mobile line, its submission and
//! activation, then a cancellation dated the next day of the organisation's
//! clock) and its clock advances, all sent through the faulty fleet; and,
//! at the end, whether every cancellation that fell due ended its
//! subscription exactly once (`subscription.ended` recorded once).

use super::fleet::{Client, Faults};
use crate::api;
use crate::http::{Conn, Request, Response};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The sandbox organisation: its key, and the subscriptions whose
/// cancellation was scheduled.
pub struct Sandbox {
    pub key: String,
    pub cancelled: Mutex<Vec<String>>,
    /// chains cut short by a refusal: its status, and what and why
    pub refused: Mutex<Vec<(u16, String)>>,
}

/// `switchboard admin ARGS` on `url`, its JSON.
pub(super) fn admin(binary: &Path, url: &str, args: &[&str]) -> Result<Value> {
    let out = Command::new(binary).args(["--database-url", url, "admin"]).args(args).output()?;
    if !out.status.success() {
        bail!("admin {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}

impl Sandbox {
    /// A sandbox organisation with the demo catalog (its assignments of the
    /// demo's customers left out), a number pool and an API key.
    pub fn create(binary: &Path, url: &str, work: &Path) -> Result<Sandbox> {
        let org = admin(binary, url, &["org", "create", "--name", "Crash Sandbox", "--sandbox"])?;
        let org = org["organisationId"].as_str().context("no organisation id")?.to_string();
        let catalog = include_str!("../../../demo/catalog.yaml");
        let catalog = catalog.split("\nassignments:").next().unwrap_or(catalog);
        let file = work.join("sandbox-catalog.yaml");
        std::fs::write(&file, catalog)?;
        admin(binary, url, &["catalog", "import", "--org", &org, &file.to_string_lossy()])?;
        admin(binary, url, &["number", "import", "--org", &org, "--range", "+46709000000..+46709099999"])?;
        let key = admin(binary, url, &["key", "create", "--org", &org])?;
        let key = key["apiKey"].as_str().context("no API key")?.to_string();
        Ok(Sandbox { key, cancelled: Mutex::default(), refused: Mutex::default() })
    }

    fn request(&self, method: &'static str, path: String, key: Option<String>, body: Value) -> Request {
        let r = Request::json(method, path, body.to_string()).header("x-api-key", self.key.clone());
        match key {
            Some(k) => r.header("x-idempotency-key", k),
            None => r,
        }
    }

    /// One step: sent until an answer that is not a fault; its JSON if 2xx.
    async fn step(&self, client: &mut Client, faults: &Faults, what: &str, request: Request) -> Option<Value> {
        match client.send(&request, faults).await {
            Some(r) if r.is_success() => r.json().ok(),
            Some(r) => {
                self.refused.lock().expect("refused lock").push((r.status, format!("{what}: {}", r.text())));
                None
            }
            None => None,
        }
    }

    /// One chain of moves, numbered `n`: customer, order, submission,
    /// activation, cancellation the next day. Each step under its own
    /// idempotency key, so a retry after a fault executes it once.
    pub async fn moves(&self, client: &mut Client, faults: &Faults, n: u64) -> Option<()> {
        let k = |step: &str| Some(format!("sandbox-{n}-{step}"));
        let billing = json!({"method": "E_INVOICE", "currency": "SEK", "email": "ap@sandbox.example",
                             "address": {"street1": "Drottninggatan 5", "city": "Uppsala", "zip": "753 10", "country": "SE"}});
        let customer = json!({"customerType": "CONSUMER", "name": format!("Sandbox {n}"), "contact": {}, "billing": billing});
        let customer = self.step(client, faults, "customer", self.request("POST", "/api/v2/customers".into(), k("customer"), customer)).await?;
        let id = customer["customerId"].as_str()?.to_string();
        let catalog = self.step(client, faults, "catalog", self.request("GET", format!("/api/v2/customers/{id}/product-catalog"), None, json!(null))).await?;
        let offering = catalog["items"].as_array()?.iter().find(|o| o["name"] == "Mobile 10 GB")?["productOfferingId"].as_str()?.to_string();
        let sub = format!("crash-sub-{n}");
        let line = json!({"type": "SUBSCRIPTION", "productOfferingId": offering, "subscription": {"simType": "ESIM", "referenceId": sub}});
        let order = json!({"customerId": id, "lineItems": [line]});
        let order = self.step(client, faults, "order", self.request("POST", "/api/v2/orders".into(), k("order"), order)).await?;
        let order = order["orderId"].as_str()?.to_string();
        self.step(client, faults, "submit", self.request("POST", format!("/api/v2/orders/{order}/submit"), k("submit"), json!({}))).await?;
        self.step(client, faults, "activate", self.request("POST", format!("/api/v2/subscriptions/rid_{sub}/activate"), k("activate"), json!({}))).await?;
        let clock = self.step(client, faults, "clock", self.request("GET", "/api/v2/sandbox/clock".into(), None, json!(null))).await?;
        let tomorrow = chrono::DateTime::parse_from_rfc3339(clock["now"].as_str()?).ok()?.date_naive().succ_opt()?;
        let cancel = json!({"effectiveDate": tomorrow.to_string()});
        let cancelled =
            self.step(client, faults, "cancel", self.request("POST", format!("/api/v2/subscriptions/rid_{sub}/cancel"), k("cancel"), cancel)).await?;
        self.cancelled.lock().expect("cancelled lock").push(cancelled["subscriptionId"].as_str()?.to_string());
        Some(())
    }

    /// Moves the organisation's clock on by `hours`, under key `key`: its
    /// answer (409 `clock_advancing` while one runs).
    pub async fn advance(&self, client: &mut Client, faults: &Faults, hours: i64, key: String) -> Option<Response> {
        let clock = self.step(client, faults, "clock", self.request("GET", "/api/v2/sandbox/clock".into(), None, json!(null))).await?;
        let now = chrono::DateTime::parse_from_rfc3339(clock["now"].as_str()?).ok()?;
        let to = (now + chrono::Duration::hours(hours)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        client.send(&self.request("POST", "/api/v2/sandbox/clock/advance".into(), Some(key), json!({"to": to})), faults).await
    }

    /// Waits until the clock is READY (an advance has run all it made due).
    pub async fn ready(&self, addr: &str, within: Duration) -> Result<()> {
        let deadline = Instant::now() + within;
        loop {
            if let Ok(mut conn) = Conn::open(addr).await
                && let Ok(clock) = api::get_json(&mut conn, &self.key, "/api/v2/sandbox/clock").await
                && clock["status"] == "READY"
            {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("the sandbox clock was not READY within {within:?}");
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Cancellations that fell due and did not record `subscription.ended`
    /// exactly once: (subscription, times recorded).
    pub async fn ended_other_than_once(&self, addr: &str) -> Result<Vec<(String, usize)>> {
        let mut conn = Conn::open(addr).await?;
        let ended = api::all(&mut conn, &self.key, "/api/v2/events?type=subscription.ended").await?;
        let mut times: HashMap<String, usize> = HashMap::new();
        for e in &ended {
            if let Some(id) = e["data"]["subscriptionId"].as_str() {
                *times.entry(id.to_string()).or_default() += 1;
            }
        }
        let cancelled = self.cancelled.lock().expect("cancelled lock").clone();
        let mut wrong: Vec<(String, usize)> = cancelled.iter().map(|id| (id.clone(), times.get(id).copied().unwrap_or(0))).filter(|(_, n)| *n != 1).collect();
        // and no subscription ended twice, scheduled here or not
        wrong.extend(times.into_iter().filter(|(id, n)| *n > 1 && !cancelled.contains(id)));
        Ok(wrong)
    }
}
