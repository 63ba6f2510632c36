//! The permission matrix of every operation of the newer areas (payments, invoices, porting, number leases, SIMs, reports, the sandbox
//! clock; issue 42 item 3): a table of each caller's outcome as docs/ state it, checked to name every such operation of spec/, run on both databases.
//!
//! Where the rules stated in docs/ meet (a support user or a read-only key on a write that is the key alone's), the table follows the order of
//! docs/users.md: the key caps everything first (a read-only key never writes), then a support user changes nothing, then the operation's own rule.

use crate::harness::*;
use crate::sweeps::Fixtures;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// Who calls. Users act with the organisation's full key unless said otherwise; "A" is the customer every request concerns (the fixtures').
#[derive(Debug, Clone, Copy)]
enum Who {
    /// the organisation's API key alone
    Key,
    /// a read-only key alone
    ReadOnlyKey,
    /// users with that role at A
    Admin,
    Manager,
    Member,
    /// an ADMIN of customer B only: no role at A
    OtherCustomers,
    /// a support user (a MEMBER of B, flagged support)
    Support,
    /// A's ADMIN behind a read-only key
    ReadOnlyAdmin,
}

/// The columns of `TABLE`, in order.
const CALLERS: [Who; 8] = [Who::Key, Who::ReadOnlyKey, Who::Admin, Who::Manager, Who::Member, Who::OtherCustomers, Who::Support, Who::ReadOnlyAdmin];

/// What a caller gets for a request that is valid in every other way.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Outcome {
    /// a 2xx answer
    Allowed,
    /// 403 with this internalCode
    Forbidden(&'static str),
    /// 404 with this internalCode: the caller may not see the customer, so its object does not exist for them
    Missing(&'static str),
}

const OK: Outcome = Outcome::Allowed;
/// docs/users.md: a read-only key never writes
const RO: Outcome = Outcome::Forbidden("read_only_api_key");
/// a role the caller lacks at the customer, or a bearer token where the key alone may call
const ROLE: Outcome = Outcome::Forbidden("insufficient_role");
/// docs/users.md: a support user reads everything and changes nothing
const SUP: Outcome = Outcome::Forbidden("support_user_read_only");
const fn nf(code: &'static str) -> Outcome {
    Outcome::Missing(code)
}

/// One operation: its operationId, method and path (`{name}` is filled with the fixture of that name, or a new object where a write uses one
/// up), and the outcome per caller, in the order of `CALLERS`.
struct Row {
    op: &'static str,
    method: &'static str,
    path: &'static str,
    expect: [Outcome; 8],
}

const fn row(op: &'static str, method: &'static str, path: &'static str, expect: [Outcome; 8]) -> Row {
    Row { op, method, path, expect }
}

/// The matrix. Sources: docs/payments.md "Permissions and tenancy" and each operation's description (MANAGER or ADMIN of the customer, or the
/// key alone, changes; every user of it reads); docs/billing.md and docs/payments.md (mark-paid and refunds: the key alone, back-office acts no bearer token makes); docs/porting.md and the Porting
/// operations (MANAGER starts); docs/inventory.md (a lease: the key alone or a user who may order, and any user may order, a MEMBER's order
/// waiting for approval; a SIM: the users of its subscription's customer); docs/reports.md and docs/sandbox.md (the key alone: a bearer token
/// is 403 insufficient_role); docs/users.md for the rest (404 for what a user does not see, in views, filters and body references).
#[rustfmt::skip]
const TABLE: &[Row] = &[
    // columns: key alone, read-only key alone, ADMIN / MANAGER / MEMBER of A, ADMIN of B only, support user, read-only key with A's ADMIN
    row("payment_intent_list",             "GET",  "/payment-intents?customerId={customerId}",                        [OK, OK, OK,   OK,   OK,   nf("customer_not_found"),                 OK,  OK]),
    row("payment_intent_view",             "GET",  "/payment-intents/{paymentIntentId}",                              [OK, OK, OK,   OK,   OK,   nf("payment_intent_not_found"),           OK,  OK]),
    row("payment_intent_refund",           "POST", "/payment-intents/{paymentIntentId}/refunds",                      [OK, RO, ROLE, ROLE, ROLE, nf("payment_intent_not_found"),           SUP, RO]),
    row("payment_link_list",               "GET",  "/payment-links?customerId={customerId}",                          [OK, OK, OK,   OK,   OK,   nf("customer_not_found"),                 OK,  OK]),
    row("payment_link_create",             "POST", "/payment-links",                                                  [OK, RO, OK,   OK,   ROLE, nf("order_not_found"),                    SUP, RO]),
    row("payment_link_view",               "GET",  "/payment-links/{paymentLinkId}",                                  [OK, OK, OK,   OK,   OK,   nf("payment_link_not_found"),             OK,  OK]),
    row("payment_link_cancel",             "POST", "/payment-links/{paymentLinkId}/cancel",                           [OK, RO, OK,   OK,   ROLE, nf("payment_link_not_found"),             SUP, RO]),
    row("payment_profile_session_create",  "POST", "/payment-profiles/sessions",                                      [OK, RO, OK,   OK,   ROLE, nf("order_not_found"),                    SUP, RO]),
    row("payment_profile_session_view",    "GET",  "/payment-profiles/sessions/{paymentProfileSessionId}",            [OK, OK, OK,   OK,   OK,   nf("payment_profile_session_not_found"),  OK,  OK]),
    row("payment_profile_session_cancel",  "POST", "/payment-profiles/sessions/{paymentProfileSessionId}/cancel",     [OK, RO, OK,   OK,   ROLE, nf("payment_profile_session_not_found"),  SUP, RO]),
    row("payment_profile_list",            "GET",  "/payment-profiles?customerId={customerId}",                       [OK, OK, OK,   OK,   OK,   nf("customer_not_found"),                 OK,  OK]),
    row("payment_profile_view",            "GET",  "/payment-profiles/{paymentProfileId}",                            [OK, OK, OK,   OK,   OK,   nf("payment_profile_not_found"),          OK,  OK]),
    row("payment_session_create",          "POST", "/payment-sessions",                                               [OK, RO, OK,   OK,   ROLE, nf("order_not_found"),                    SUP, RO]),
    row("payment_session_view",            "GET",  "/payment-sessions/{paymentSessionId}",                            [OK, OK, OK,   OK,   OK,   nf("payment_session_not_found"),          OK,  OK]),
    row("invoice_list",                    "GET",  "/invoices?customerId={customerId}",                               [OK, OK, OK,   OK,   OK,   nf("customer_not_found"),                 OK,  OK]),
    row("invoice_view",                    "GET",  "/invoices/{invoiceId}",                                           [OK, OK, OK,   OK,   OK,   nf("invoice_not_found"),                  OK,  OK]),
    row("invoice_mark_paid",               "POST", "/invoices/{invoiceId}/mark-paid",                                 [OK, RO, ROLE, ROLE, ROLE, nf("invoice_not_found"),                  SUP, RO]),
    row("porting_in_view",                 "GET",  "/subscriptions/{subscriptionId}/in-porting",                      [OK, OK, OK,   OK,   OK,   nf("subscription_not_found"),             OK,  OK]),
    row("porting_in_start",                "POST", "/subscriptions/{subscriptionId}/in-porting",                      [OK, RO, OK,   OK,   ROLE, nf("subscription_not_found"),             SUP, RO]),
    row("number_lease",                    "POST", "/inventory/lease-numbers",                                        [OK, RO, OK,   OK,   OK,   OK,                                       SUP, RO]),
    row("inventory_sim_view",              "GET",  "/inventory/sims/{iccid}",                                         [OK, OK, OK,   OK,   OK,   nf("sim_not_found"),                      OK,  OK]),
    row("report_create",                   "POST", "/reports",                                                        [OK, RO, ROLE, ROLE, ROLE, ROLE,                                     SUP, RO]),
    row("report_list",                     "GET",  "/reports?reportKey=events",                                       [OK, OK, ROLE, ROLE, ROLE, ROLE,                                     ROLE, ROLE]),
    row("report_view",                     "GET",  "/reports/{reportRunId}",                                          [OK, OK, ROLE, ROLE, ROLE, ROLE,                                     ROLE, ROLE]),
    row("sandbox_clock_view",              "GET",  "/sandbox/clock",                                                  [OK, OK, ROLE, ROLE, ROLE, ROLE,                                     ROLE, ROLE]),
    // (last: its one allowed advance leaves the clock ADVANCING, the jobs being stopped)
    row("sandbox_clock_advance",           "POST", "/sandbox/clock/advance",                                          [OK, RO, ROLE, ROLE, ROLE, ROLE,                                     SUP, RO]),
];

/// Whether an operation tagged `tag` is of the matrix's areas.
fn in_areas(tag: &str) -> bool {
    tag.starts_with("Payment") || ["Invoices", "Porting", "Inventory", "Reports", "Sandbox"].contains(&tag)
}

#[test]
fn permission_matrix_has_a_row_for_every_operation_of_its_areas_in_spec() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("spec");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    files.sort();
    assert!(!files.is_empty(), "no documents in {}", dir.display());
    let (mut found, mut without_row, mut unlike) = (BTreeSet::new(), vec![], vec![]);
    for file in files {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let revision = doc["info"]["version"].as_str().unwrap().to_string();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap().iter().filter(|(_, op)| op.get("operationId").is_some()) {
                if !op["tags"].as_array().into_iter().flatten().any(|t| t.as_str().is_some_and(in_areas)) {
                    continue;
                }
                let (id, method) = (op["operationId"].as_str().unwrap(), method.to_uppercase());
                found.insert(id.to_string());
                match TABLE.iter().find(|r| r.op == id) {
                    None => without_row.push(format!("{revision} {method} {path} ({id})")),
                    Some(r) if (r.method, r.path.split('?').next().unwrap()) != (method.as_str(), path.as_str()) => {
                        unlike.push(format!("{revision} {id}: the document says {method} {path}, the table {} {}", r.method, r.path))
                    }
                    Some(_) => {}
                }
            }
        }
    }
    assert!(without_row.is_empty(), "operations of the matrix's areas without a row in TABLE (tests/api/permission_matrix.rs):\n{}", without_row.join("\n"));
    assert!(unlike.is_empty(), "{}", unlike.join("\n"));
    let rows: Vec<&str> = TABLE.iter().map(|r| r.op).collect();
    let unique: BTreeSet<&str> = rows.iter().copied().collect();
    assert_eq!(unique.len(), rows.len(), "an operation with two rows");
    let stale: Vec<&&str> = rows.iter().filter(|op| !found.contains(**op)).collect();
    assert!(stale.is_empty(), "rows for operations no document of these areas has: {stale:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_matrix_every_caller_of_every_operation_gets_what_the_table_says() {
    each_backend(|mut app| async move {
        // a sandbox organisation, so that its clock's operations have an answer to allow
        app.become_sandbox().await;
        let fx = Fixtures::create(&app, app.org, &app.key, "ours").await;
        let credentials = callers(&app, &fx).await;
        // nothing moves in the background from here on: a refusal is checked to change nothing
        app.stop_jobs();
        // the port-in the view reads (and the start updates: PENDING, as no job submits it)
        let r = app.call("POST", &format!("/subscriptions/{}/in-porting", fx.ids["subscriptionId"].0), Some(port_in())).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        let (mut n, mut wrong) = (0, vec![]);
        for row in TABLE {
            // a refusal changes nothing, so one request serves every refusal of a row; each allowed write has a request of its own
            let (mut refused, mut known) = (None, None);
            for (who, ((key, token), expected)) in CALLERS.iter().zip(credentials.iter().zip(row.expect)) {
                let label = format!("{} {} ({}) as {who:?}", row.method, row.path, row.op);
                let (path, body) = if expected == OK {
                    known = None;
                    request(&app, &fx, row, &mut n).await
                } else {
                    if refused.is_none() {
                        refused = Some(request(&app, &fx, row, &mut n).await);
                        known = None;
                    }
                    refused.clone().unwrap()
                };
                // (what is stored is read again only when something was made since)
                let before = match (expected, known.take()) {
                    (OK, _) => None,
                    (_, Some(known)) => Some(known),
                    (_, None) => Some(stored(&app, row).await),
                };
                let bearer = token.as_ref().map(|t| format!("Bearer {t}"));
                let headers: Vec<(&str, &str)> = bearer.iter().map(|b| ("authorization", b.as_str())).collect();
                let got = app.call_as(Some(key), row.method, &path, body, &headers).await;
                let (want, answered) = (described(expected), answer(&got));
                if want != answered {
                    wrong.push(format!("{label}: the table says {want}, the server answered {answered} {}", got.body["message"].as_str().unwrap_or("")));
                }
                if let Some(before) = before {
                    let after = stored(&app, row).await;
                    if after != before {
                        wrong.push(format!("{label}: answered {answered}, and changed what is stored"));
                    }
                    known = Some(after);
                }
            }
            if row.op == "number_lease" {
                number_pool(&app, false).await;
            }
        }
        assert!(wrong.is_empty(), "{} of {} cells disagree with the table:\n{}", wrong.len(), TABLE.len() * CALLERS.len(), wrong.join("\n"));
        app
    })
    .await;
}

fn described(o: Outcome) -> String {
    match o {
        Outcome::Allowed => "2xx".into(),
        Outcome::Forbidden(code) => format!("403 {code}"),
        Outcome::Missing(code) => format!("404 {code}"),
    }
}

fn answer(r: &Raw) -> String {
    match r.status {
        200..=299 => "2xx".into(),
        s => format!("{s} {}", r.body["internalCode"].as_str().unwrap_or("(no internalCode)")),
    }
}

/// What a refusal of `row` must leave as it was: every row stored for the organisation, and for the clock's advance the clock's state (kept
/// with the organisation, which the fingerprint leaves out).
async fn stored(app: &TestApp, row: &Row) -> (Vec<(String, String)>, Value) {
    let clock = match row.op {
        "sandbox_clock_advance" => app.call("GET", "/sandbox/clock", None).await.body,
        _ => Value::Null,
    };
    (app.org_fingerprint(app.org).await, json!([clock["status"], clock["advancedAt"]]))
}

/// Each caller's API key and bearer token, in the order of `CALLERS`.
async fn callers(app: &TestApp, fx: &Fixtures) -> Vec<(String, Option<String>)> {
    let a = fx.ids["customerId"].0.clone();
    let b = app.call("POST", "/customers", Some(json!({"customerType": "BUSINESS", "name": "B AB", "contact": {}}))).await;
    assert_eq!(b.status, 201, "{:#}", b.body);
    let b = b.body["customerId"].as_str().unwrap().to_string();
    let mut tokens = BTreeMap::new();
    for (name, customer, role) in
        [("admin", &a, "ADMIN"), ("manager", &a, "MANAGER"), ("member", &a, "MEMBER"), ("other", &b, "ADMIN"), ("support", &b, "MEMBER")]
    {
        let email = format!("{name}@matrix.example");
        let r = app.call("POST", "/users", Some(json!({"name": name, "email": email, "customerId": customer, "role": role}))).await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        if name == "support" {
            switchboard::admin::user_support(&app.store, r.body["userId"].as_str().unwrap().parse().unwrap(), true).await.unwrap();
        }
        tokens.insert(name, app.login(&email, Some(&app.key)).await);
    }
    let read_only = app.new_key(app.org, Some(BULLFINCH), true).await;
    let user = |name: &str| Some(tokens[name].clone());
    CALLERS
        .iter()
        .map(|who| match who {
            Who::Key => (app.key.clone(), None),
            Who::ReadOnlyKey => (read_only.clone(), None),
            Who::Admin => (app.key.clone(), user("admin")),
            Who::Manager => (app.key.clone(), user("manager")),
            Who::Member => (app.key.clone(), user("member")),
            Who::OtherCustomers => (app.key.clone(), user("other")),
            Who::Support => (app.key.clone(), user("support")),
            Who::ReadOnlyAdmin => (read_only.clone(), user("admin")),
        })
        .collect()
}

/// The port-in of the fixtures' subscription: a Swedish number the sandbox carrier would accept.
fn port_in() -> Value {
    json!({"msisdn": "+46709876500", "details": {"identity": "19900101-0017"}})
}

/// A request of `row` that the key alone would have answered 2xx: its path naming the fixtures, or, where the write uses its object up, a
/// new one made with the key (the `n`th), and its body.
async fn request(app: &TestApp, fx: &Fixtures, row: &Row, n: &mut usize) -> (String, Option<Value>) {
    *n += 1;
    if row.op == "number_lease" {
        number_pool(app, true).await;
    }
    let mut ids: BTreeMap<&str, String> = fx.ids.iter().map(|(name, (id, _))| (*name, id.clone())).collect();
    let setup = |order: &str| json!({"orderId": order, "paymentProvider": "PROVIDER_1", "returnUrl": "https://shop.example/card-saved"});
    let body = match row.op {
        // a minor unit: the fixtures' paid intent is refunded once per allowed caller
        "payment_intent_refund" => Some(json!({"amountMinor": 1, "reason": "permission matrix"})),
        // an order has one ACTIVE link, and a session takes its order: an order each
        "payment_link_create" => Some(json!({"orderId": order(app, fx, *n).await})),
        "payment_session_create" => Some(json!({"orderId": order(app, fx, *n).await, "paymentProfileId": fx.ids["paymentProfileId"].0})),
        "payment_link_cancel" => {
            let link = app.call("POST", "/payment-links", Some(json!({"orderId": order(app, fx, *n).await}))).await;
            assert_eq!(link.status, 201, "{:#}", link.body);
            ids.insert("paymentLinkId", link.body["paymentLinkId"].as_str().unwrap().to_string());
            None
        }
        // a setup session stands on its own: the fixtures' order takes many
        "payment_profile_session_create" => Some(setup(&fx.ids["orderId"].0)),
        "payment_profile_session_cancel" => {
            let session = app.call("POST", "/payment-profiles/sessions", Some(setup(&fx.ids["orderId"].0))).await;
            assert_eq!(session.status, 201, "{:#}", session.body);
            ids.insert("paymentProfileSessionId", session.body["paymentProfileSessionId"].as_str().unwrap().to_string());
            Some(json!({"reason": "permission matrix"}))
        }
        // an OPEN invoice each: a submitted order's lines, finalised
        "invoice_mark_paid" => {
            let order = order(app, fx, *n).await;
            let submitted = app.call("POST", &format!("/orders/{order}/submit"), None).await;
            assert_eq!(submitted.status, 200, "{:#}", submitted.body);
            ids.insert("invoiceId", crate::sweeps::fixtures::open_invoice(app, app.org, &app.key, &fx.ids["customerId"].0).await);
            Some(json!({"method": "BANK_TRANSFER"}))
        }
        // the same details again: an update of the PENDING port-in
        "porting_in_start" => Some(port_in()),
        "number_lease" => Some(json!({"types": ["CELL"], "count": 1})),
        "report_create" => Some(json!({"reportKey": "events"})),
        "sandbox_clock_advance" => {
            let clock = app.call("GET", "/sandbox/clock", None).await;
            let now: chrono::DateTime<chrono::Utc> = clock.body["now"].as_str().unwrap().parse().unwrap();
            Some(json!({"to": (now + chrono::Duration::minutes(1)).to_rfc3339()}))
        }
        _ => None,
    };
    let path = ids.iter().fold(row.path.to_string(), |path, (name, id)| path.replace(&format!("{{{name}}}"), id));
    assert!(!path.contains('{'), "{}: no fixture for a parameter of {path}", row.op);
    (path, body)
}

/// A new DRAFT order of the fixtures' customer (the `n`th request's).
async fn order(app: &TestApp, fx: &Fixtures, n: usize) -> String {
    let line = json!({"type": "SUBSCRIPTION", "productOfferingId": fx.ids["productOfferingId"].0, "subscription": {"simType": "ESIM", "msisdn": format!("+4670888{n:04}")}});
    let order = app.call("POST", "/orders", Some(json!({"customerId": fx.ids["customerId"].0, "lineItems": [line]}))).await;
    assert_eq!(order.status, 201, "{:#}", order.body);
    order.body["orderId"].as_str().unwrap().to_string()
}

/// A number pool for the lease's row alone (taken away after it): with a pool every order line would have to name a number of it, and ours
/// name their own.
async fn number_pool(app: &TestApp, wanted: bool) {
    for sql in ["DELETE FROM number_leases WHERE org_id = $1", "DELETE FROM numbers WHERE org_id = $1"] {
        sqlx::query(sql).bind(app.org.to_string()).execute(app.store.pool()).await.unwrap();
    }
    if wanted {
        crate::numbers::pool(app, "+46701900000..+46701900009", "CELL").await;
    }
}
