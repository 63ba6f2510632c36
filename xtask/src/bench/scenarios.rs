//! The scenarios of `cargo xtask bench`: what each sends, to which server,
//! and which baseline figure it is compared with. Every request is built
//! from (connection, sequence number), so writes carry unique idempotency
//! keys and bodies, and reads pick their customer at random.

use crate::http::{Conn, Request, Response};
use crate::load::Workload;
use crate::rng::Rng;
use anyhow::{Context, Result};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A server under test and what its scenarios need of it.
pub struct Target {
    /// "baseline/SQLite", "Switchboard/SQLite", "Switchboard/PostgreSQL", ...
    pub label: String,
    /// "SQLite" or "PostgreSQL": a scenario is compared with the baseline
    /// over the same database
    pub db: String,
    pub addr: String,
    pub pid: u32,
    pub key: String,
    /// seeded customers to read and update
    pub ids: Arc<Vec<String>>,
    /// the cursor of the page after `deep_rows` rows
    pub deep_cursor: Option<String>,
    pub deep_rows: usize,
    /// a SUBSCRIPTION offering in the demo customer's catalog
    pub offering: String,
    /// numbers of the subscriptions ordered so far: each needs a fresh MSISDN
    pub msisdns: AtomicU64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    BaselineView,
    BaselineListFirst,
    BaselineListDeep,
    BaselineCreate,
    BaselineOrder,
    Health,
    CustomerView,
    ListFirst,
    ListDeep,
    CustomerCreate,
    CustomerUpdate,
    OrderSubmit,
}

impl Kind {
    /// The baseline's scenarios: the same work by the hand-written server.
    pub const BASELINE: [Kind; 5] = [Kind::BaselineView, Kind::BaselineListFirst, Kind::BaselineListDeep, Kind::BaselineCreate, Kind::BaselineOrder];

    pub fn is_baseline(self) -> bool {
        Kind::BASELINE.contains(&self)
    }

    /// The baseline scenario this one is compared with: the same work where
    /// the baseline does it, else a read with its read and a write with
    /// its idempotent write.
    pub fn compared_with(self) -> Option<Kind> {
        match self {
            k if k.is_baseline() => None,
            Kind::ListFirst => Some(Kind::BaselineListFirst),
            Kind::ListDeep => Some(Kind::BaselineListDeep),
            Kind::OrderSubmit => Some(Kind::BaselineOrder),
            Kind::CustomerCreate | Kind::CustomerUpdate => Some(Kind::BaselineCreate),
            _ => Some(Kind::BaselineView),
        }
    }

    pub fn describe(self, t: &Target) -> String {
        match self {
            Kind::BaselineView => "GET /customers/{id}".into(),
            Kind::BaselineListFirst => "GET /customers?limit=100".into(),
            Kind::BaselineListDeep => format!("GET /customers?limit=100 after row {}", t.deep_rows),
            Kind::BaselineCreate => "POST /customers (idempotent)".into(),
            Kind::BaselineOrder => "POST /orders + POST /orders/{id}/submit".into(),
            Kind::Health => "GET /health".into(),
            Kind::CustomerView => "GET /customers/{id}".into(),
            Kind::ListFirst => "GET /customers?limit=100".into(),
            Kind::ListDeep => format!("GET /customers?limit=100 after row {}", t.deep_rows),
            Kind::CustomerCreate => "POST /customers (idempotent)".into(),
            Kind::CustomerUpdate => "PUT /customers/{id}".into(),
            Kind::OrderSubmit => "POST /orders + POST /orders/{id}/submit".into(),
        }
    }
}

/// One scenario of a round: a kind of iteration against a target.
pub struct Scenario {
    pub kind: Kind,
    pub target: Arc<Target>,
}

impl Scenario {
    pub fn label(&self) -> String {
        format!("{} {}", self.target.label, self.kind.describe(&self.target))
    }
}

/// Every scenario of a round, in order: per database the baseline's five,
/// then Switchboard's seven.
pub fn all(pairs: &[(Arc<Target>, Arc<Target>)]) -> Vec<Scenario> {
    let mut all = vec![];
    for (baseline, t) in pairs {
        all.extend(Kind::BASELINE.map(|kind| Scenario { kind, target: baseline.clone() }));
        for kind in [Kind::Health, Kind::CustomerView, Kind::ListFirst, Kind::ListDeep, Kind::CustomerCreate, Kind::CustomerUpdate, Kind::OrderSubmit] {
            all.push(Scenario { kind, target: t.clone() });
        }
    }
    all
}

/// A scenario's workload in one round; `tag` makes its writes unique
/// across rounds and runs.
pub struct Run {
    pub kind: Kind,
    pub target: Arc<Target>,
    pub tag: String,
    pub seed: u64,
}

async fn expect(conn: &mut Conn, request: Request) -> Result<Response> {
    let what = format!("{} {}", request.method, request.path);
    conn.send(&request).await?.success(&what)
}

impl Run {
    fn random_id(&self, connection: usize, seq: u64) -> &str {
        let mut rng = Rng::for_pair(self.seed, connection as u64, seq);
        &self.target.ids[rng.below(self.target.ids.len() as u64) as usize]
    }

    /// The list page after the target's `deep_rows` rows.
    fn deep_page(&self, path: &str) -> String {
        let cursor = self.target.deep_cursor.as_deref().map(|c| format!("&cursor={c}")).unwrap_or_default();
        format!("{path}?limit=100{cursor}")
    }

    fn authed(&self, r: Request) -> Request {
        r.header("x-api-key", self.target.key.clone())
    }

    fn new_customer(&self, path: &str, unique: &str) -> Request {
        let body = format!(r#"{{"customerType":"CONSUMER","name":"Load {unique}","contact":{{"email":"load-{unique}@example.com"}}}}"#);
        self.authed(Request::json("POST", path, body)).header("x-idempotency-key", unique.to_string())
    }

    /// A draft order of one mobile subscription for the demo customer,
    /// submitted: the write a shop makes when someone buys. `base` is
    /// where the server's operations are (`/api/v2`, or `` for the baseline).
    async fn order(&self, conn: &mut Conn, base: &str, unique: &str) -> Result<()> {
        // Swedish mobile numbers (07x), one per subscription ever ordered here
        let msisdn = format!("+4676{:07}", self.target.msisdns.fetch_add(1, Ordering::Relaxed));
        let body = format!(
            r#"{{"customerId":"rid_acme","lineItems":[{{"type":"SUBSCRIPTION","productOfferingId":"{}","subscription":{{"simType":"ESIM","msisdn":"{msisdn}"}}}}]}}"#,
            self.target.offering
        );
        let create = self.authed(Request::json("POST", format!("{base}/orders"), body)).header("x-idempotency-key", unique.to_string());
        let order = expect(conn, create).await?.json()?;
        let id = order["orderId"].as_str().context("an order without orderId")?;
        let submit = self.authed(Request::new("POST", format!("{base}/orders/{id}/submit"))).header("x-idempotency-key", format!("{unique}-submit"));
        expect(conn, submit).await?;
        Ok(())
    }
}

impl Workload for Run {
    async fn iteration(&self, conn: &mut Conn, connection: usize, seq: u64) -> Result<()> {
        let unique = format!("{}-{connection}-{seq}", self.tag);
        let request = match self.kind {
            Kind::BaselineView => self.authed(Request::get(format!("/customers/{}", self.random_id(connection, seq)))),
            Kind::BaselineListFirst => self.authed(Request::get("/customers?limit=100")),
            Kind::BaselineListDeep => self.authed(Request::get(self.deep_page("/customers"))),
            Kind::BaselineCreate => self.new_customer("/customers", &unique),
            Kind::Health => Request::get("/api/v2/health"),
            Kind::CustomerView => self.authed(Request::get(format!("/api/v2/customers/{}", self.random_id(connection, seq)))),
            Kind::ListFirst => self.authed(Request::get("/api/v2/customers?limit=100")),
            Kind::ListDeep => self.authed(Request::get(self.deep_page("/api/v2/customers"))),
            Kind::CustomerCreate => self.new_customer("/api/v2/customers", &unique),
            Kind::CustomerUpdate => {
                let body = format!(r#"{{"name":"Renamed {unique}"}}"#);
                self.authed(Request::json("PUT", format!("/api/v2/customers/{}", self.random_id(connection, seq)), body))
            }
            Kind::OrderSubmit => return self.order(conn, "/api/v2", &unique).await,
            Kind::BaselineOrder => return self.order(conn, "", &unique).await,
        };
        expect(conn, request).await.map(drop)
    }
}
