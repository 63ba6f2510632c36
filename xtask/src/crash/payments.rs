//! The crash test's payments: a third of the keys pay a new order of the
//! demo's Maria through a payment session, from her saved card, charged
//! off-session by the session's job. Besides each key executing once, every
//! session must end SUCCEEDED with exactly one charge: a kill between the
//! provider's charge and its commit is resolved by asking the provider
//! with the same attempt id, never by charging again.

use crate::api;
use crate::http::{Conn, Request};
use anyhow::{Context, Result};
use serde_json::Value;
use std::time::{Duration, Instant};

/// How long the sessions a kill left PROCESSING may take to settle after
/// the last restart: a job the killed process held is taken over when its
/// one-minute lease runs out.
const SETTLE_WITHIN: Duration = Duration::from_secs(150);
/// How long the wait goes on past `SETTLE_WITHIN` once no session settled.
const SETTLE_STALLED: Duration = Duration::from_secs(60);

/// Who pays, and for what.
pub struct Payer {
    customer: String,
    profile: String,
    offering: String,
}

impl Payer {
    /// The demo's Maria, her default payment profile (the demo paid a link
    /// with it) and the offering of her plan.
    pub async fn demo(conn: &mut Conn, key: &str) -> Result<Payer> {
        let maria = api::get_json(conn, key, "/api/v2/customers/rid_maria").await?;
        let profile = maria["billing"]["defaultPaymentProfileId"].as_str().context("the demo's Maria has no default payment profile")?;
        let catalog = api::get_json(conn, key, "/api/v2/customers/rid_maria/product-catalog").await?;
        let offering = catalog["items"].as_array().into_iter().flatten().find(|o| o["name"] == "Mobile 10 GB").and_then(|o| o["productOfferingId"].as_str());
        Ok(Payer {
            customer: maria["customerId"].as_str().context("a customer without an id")?.to_string(),
            profile: profile.to_string(),
            offering: offering.context("no Mobile 10 GB in Maria's catalog")?.to_string(),
        })
    }

    /// The order a key's session pays, made first (without a key of its
    /// own: an order a kill cut off is only never paid); None then. Its
    /// line leaves the number out: the demo's pool gives one.
    pub async fn order(&self, conn: &mut Conn, key: &str) -> Option<String> {
        let answer = conn.send(&self.order_request(key)).await.ok()?;
        answer.json().ok()?["orderId"].as_str().map(str::to_string)
    }

    /// The request of `order`.
    pub fn order_request(&self, key: &str) -> Request {
        let body = format!(
            r#"{{"customerId":"{}","lineItems":[{{"type":"SUBSCRIPTION","productOfferingId":"{}","subscription":{{"simType":"ESIM"}}}}]}}"#,
            self.customer, self.offering
        );
        Request::json("POST", "/api/v2/orders", body).header("x-api-key", key.to_string())
    }

    /// The body of key `crash_key`'s session for `order`.
    pub fn session(&self, order: &str, crash_key: &str) -> String {
        format!(r#"{{"orderId":"{order}","paymentProfileId":"{}","metadata":{{"crashKey":"{crash_key}"}}}}"#, self.profile)
    }

    /// Every session of the run (by the intents of Maria), once none is
    /// PROCESSING any more, and what is wrong with any: not SUCCEEDED, or
    /// charged other than once.
    pub async fn settled(&self, addr: &str, key: &str, connections: usize) -> Result<(Vec<Value>, Vec<String>)> {
        // (a long run leaves a backlog of charges the instances work
        // through one at a time each: the wait goes on while it shrinks)
        let mut deadline = Instant::now() + SETTLE_WITHIN;
        let mut fewest = usize::MAX;
        let intents = loop {
            // (the list says each intent's status: PROCESSING while its
            // session's charge is)
            let listed = api::all(&mut Conn::open(addr).await?, key, "/api/v2/payment-intents").await?;
            let maria: Vec<Value> = listed.into_iter().filter(|i| i["customerId"] == self.customer.as_str()).collect();
            let processing = maria.iter().filter(|i| i["status"] == "PROCESSING").count();
            if processing < fewest {
                fewest = processing;
                deadline = deadline.max(Instant::now() + SETTLE_STALLED);
            }
            if processing == 0 || Instant::now() > deadline {
                break maria;
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
        };
        let paths = intents.iter().filter_map(|i| i["paymentIntentId"].as_str().map(|id| format!("/api/v2/payment-intents/{id}"))).collect();
        let intents = api::get_many(addr, key, paths, connections).await?;
        let with_sessions: Vec<&Value> = intents.iter().filter(|i| i["paymentSessionId"].is_string()).collect();
        let paths = with_sessions.iter().map(|i| format!("/api/v2/payment-sessions/{}", i["paymentSessionId"].as_str().unwrap_or_default())).collect();
        let sessions = api::get_many(addr, key, paths, connections).await?;
        let mut problems = vec![];
        for (s, i) in sessions.iter().zip(&with_sessions) {
            let charges = i["charges"].as_array().map_or(0, Vec::len);
            if s["status"] != "SUCCEEDED" || charges != 1 {
                problems.push(format!("session {} ({}): {}, {charges} charge(s)", s["paymentSessionId"], s["metadata"]["crashKey"], s["status"]));
            }
        }
        Ok((sessions, problems))
    }
}
