//! Invoices on both databases, in a sandbox organisation whose clock is
//! advanced, never waited for: a year of monthly renewals billed for an
//! autopay, an e-invoice and a paper customer (numbers without gaps,
//! totals the sums of lines, taxes by the catalog's rules, delivery by
//! billing method); what mark-paid refuses.

use crate::harness::*;
use crate::orders::offering;
use crate::payments::{link, pay_card};
use serde_json::{Value, json};

/// A business customer `reference` on the business catalog, billed as
/// `billing` says, with a contact address.
pub async fn customer(app: &TestApp, reference: &str, billing: Value) -> String {
    let r = app
        .call(
            "POST",
            "/customers",
            Some(json!({
                "customerType": "BUSINESS", "name": format!("{reference} AB"), "referenceId": reference,
                "contact": {"email": format!("finance@{reference}.example")}, "billing": billing
            })),
        )
        .await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    app.import_catalog(app.org, &format!("assignments: [{{customer: rid_{reference}, catalog: business}}]")).await;
    r.body["customerId"].as_str().unwrap().to_string()
}

pub fn swedish(method: &str, reference: &str) -> Value {
    json!({"method": method, "currency": "SEK", "email": format!("invoices@{reference}.example"),
           "address": {"street1": "Storgatan 1", "city": "Stockholm", "zip": "111 22", "country": "SE"}})
}

/// Activates subscription `id` now.
pub async fn activate(app: &TestApp, id: &str) {
    let r = app.call("POST", &format!("/subscriptions/{id}/activate"), Some(json!({}))).await;
    assert_eq!(r.status, 200, "{:#}", r.body);
}

/// Buys Mobile 10 GB for `reference` directly (an order submitted without
/// a payment: its initial invoice is billed) and activates it; its id.
pub async fn bought(app: &TestApp, reference: &str, msisdn: &str) -> String {
    let r = app
        .call(
            "POST",
            "/subscriptions",
            Some(json!({"customerId": format!("rid_{reference}"), "productOfferingId": offering(app, "mobile-10gb"),
                                                    "subscription": {"simType": "ESIM", "msisdn": msisdn}})),
        )
        .await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    let id = r.body["subscriptionId"].as_str().unwrap().to_string();
    activate(app, &id).await;
    id
}

/// Buys Mobile 10 GB for `reference` through a payment link paid with
/// `card`, saving it as the default with autopay consent; the
/// subscription, activated.
pub async fn bought_with_autopay(app: &TestApp, reference: &str, msisdn: &str, card: &str) -> String {
    let r = app
        .call("POST", "/orders", Some(json!({"customerId": format!("rid_{reference}"),
            "lineItems": [{"type": "SUBSCRIPTION", "productOfferingId": offering(app, "mobile-10gb"), "subscription": {"simType": "ESIM", "msisdn": msisdn}}]})))
        .await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    let l = link(app, json!({"orderId": r.body["orderId"], "savePaymentProfile": true, "setAsDefaultPaymentProfile": true, "grantAutopayConsent": true})).await;
    let (status, _, html) = pay_card(l["hostedUrl"].as_str().unwrap(), card).await;
    assert!(status == 200 && html.contains("complete"), "{html}");
    let order = app.call("GET", &format!("/orders/{}", r.body["orderId"].as_str().unwrap()), None).await.body;
    let id = order["lineItems"][0]["createdSubscriptionId"].as_str().unwrap().to_string();
    activate(app, &id).await;
    id
}

/// Advances the sandbox clock to `to` and runs what falls due (the
/// workers are stopped).
pub async fn advance(app: &TestApp, to: &str) {
    let body = serde_json::from_value(json!({"to": to})).unwrap();
    let key = uuid::Uuid::new_v4().to_string().parse().unwrap();
    app.bullfinch().sandbox_clock_advance(Some(&key), &body).await.unwrap();
    app.run_jobs().await;
    let shown = json_of(&app.bullfinch().sandbox_clock_view().await.unwrap().into_inner());
    assert_eq!(shown["status"], "READY", "{shown:#}");
}

/// Every invoice of `customer`, through the generated client, oldest first.
pub async fn invoices_of(app: &TestApp, customer: &str) -> Vec<Value> {
    let customers = vec![customer.parse().unwrap()];
    let page = app.bullfinch().invoice_list(None, Some(&customers), std::num::NonZeroU32::new(100), None).await.unwrap().into_inner();
    assert!(page.pagination.next_cursor.is_none());
    page.items.iter().map(json_of).collect()
}

pub async fn invoice(app: &TestApp, id: &Value) -> Value {
    json_of(&app.bullfinch().invoice_view(&id.as_str().unwrap().parse().unwrap()).await.unwrap().into_inner())
}

pub async fn mark_paid(app: &TestApp, id: &Value, body: Value) -> Value {
    let req = serde_json::from_value(body).unwrap();
    let key = uuid::Uuid::new_v4().to_string().parse().unwrap();
    json_of(&app.bullfinch().invoice_mark_paid(&id.as_str().unwrap().parse().unwrap(), Some(&key), &req).await.unwrap().into_inner())
}

fn minor(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// Every line's taxes are 25% of what it costs after discounts, rounded
/// half up, and the invoice's totals are the sums of its lines'.
pub fn assert_summed(i: &Value) {
    let lines = i["lines"].as_array().unwrap();
    let (mut sub, mut disc, mut tax, mut total) = (0, 0, 0, 0);
    for l in lines {
        let d: i64 = l["discounts"].as_array().unwrap().iter().map(|d| minor(&d["amountMinor"])).sum();
        let t: i64 = l["taxes"].as_array().unwrap().iter().map(|t| minor(&t["amountMinor"])).sum();
        let base = minor(&l["amountMinor"]) - d;
        assert_eq!(t, (base * 2500 * 2 + 10_000) / 20_000, "VAT 25% of {base}, rounded half up: {l:#}");
        assert_eq!(minor(&l["totalMinor"]), base + t, "{l:#}");
        (sub, disc, tax, total) = (sub + minor(&l["amountMinor"]), disc + d, tax + t, total + base + t);
    }
    assert_eq!(
        (minor(&i["subtotalMinor"]), minor(&i["totalDiscountsMinor"]), minor(&i["taxAmountMinor"]), minor(&i["totalMinor"])),
        (sub, disc, tax, total),
        "{i:#}"
    );
}

/// What cycle `n` (0 the first) of Mobile 10 GB costs with VAT: 100.00 off
/// for the first three months.
fn cycle_total(n: usize) -> i64 {
    if n < 3 { 24875 } else { 37375 }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_year_of_renewals_is_invoiced_for_every_billing_method() {
    each_backend(|mut app| async move {
        app.become_sandbox().await;
        app.stop_jobs();
        app.demo_catalog(app.org).await;
        let start = json_of(&app.bullfinch().sandbox_clock_view().await.unwrap().into_inner());
        assert_eq!(&start["now"].as_str().unwrap()[..10], "2026-11-02");
        let auto = customer(
            &app,
            "autopay",
            json!({"method": "EMAIL_INVOICE", "currency": "SEK", "email": "ap@autopay.example",
                                                    "address": {"street1": "Storgatan 1", "city": "Stockholm", "zip": "111 22", "country": "SE"}}),
        )
        .await;
        let einv = customer(&app, "einvoice", swedish("E_INVOICE", "einvoice")).await;
        let paper = customer(&app, "paper", swedish("PAPER_INVOICE", "paper")).await;
        let auto_sub = bought_with_autopay(&app, "autopay", "+46702000001", "4242424242424242").await;
        let einv_sub = bought(&app, "einvoice", "+46702000002").await;
        bought(&app, "paper", "+46702000003").await;

        // today's lines are a DRAFT until the day ends
        let drafts = invoices_of(&app, &einv).await;
        assert_eq!(drafts.len(), 1);
        assert_eq!((&drafts[0]["status"], drafts[0].get("number"), &drafts[0]["billingDate"]), (&json!("DRAFT"), None, &json!("2026-11-02")));
        assert_eq!((&drafts[0]["lines"][0]["type"], minor(&drafts[0]["totalMinor"])), (&json!("ORDER"), 24875));
        assert!(invoices_of(&app, &auto).await.is_empty(), "an order paid through its link is no invoice's");

        for month in 0..=12u32 {
            let renewal = chrono::NaiveDate::from_ymd_opt(2026, 11, 2).unwrap().checked_add_months(chrono::Months::new(month)).unwrap();
            advance(&app, &format!("{}T06:00:00Z", renewal.succ_opt().unwrap())).await;
            for c in [&einv, &paper] {
                let open: Vec<Value> = invoices_of(&app, c).await.into_iter().filter(|i| i["status"] == "OPEN").collect();
                assert_eq!(open.len(), 1, "one invoice a billing day: {open:#?}");
                let paid = mark_paid(&app, &open[0]["invoiceId"], json!({"reference": format!("OCR-{month}")})).await;
                assert_eq!((&paid["status"], &paid["paymentMethod"]), (&json!("PAID"), &json!("BANK_TRANSFER")));
            }
        }

        // every invoice: numbered without gaps across the organisation, its
        // totals the sums of its lines, each cycle priced by the catalog
        let (auto_inv, einv_inv, paper_inv) = (invoices_of(&app, &auto).await, invoices_of(&app, &einv).await, invoices_of(&app, &paper).await);
        assert_eq!((auto_inv.len(), einv_inv.len(), paper_inv.len()), (12, 13, 13));
        let mut numbers: Vec<String> =
            [&auto_inv, &einv_inv, &paper_inv].iter().flat_map(|v| v.iter()).map(|i| i["number"].as_str().unwrap().to_string()).collect();
        numbers.sort();
        let expected: Vec<String> = (1..=38).map(|n| format!("INV-{n:06}")).collect();
        assert_eq!(numbers, expected);
        for (n, i) in einv_inv.iter().enumerate() {
            assert_summed(i);
            assert_eq!(minor(&i["totalMinor"]), cycle_total(n), "cycle {n}: {i:#}");
            assert_eq!((&i["status"], &i["billingMethod"], &i["autoPay"]), (&json!("PAID"), &json!("E_INVOICE"), &json!(false)));
            assert_eq!(&i["finalizedAt"].as_str().unwrap()[11..19], "23:59:59", "finalised at the end of its billing day");
            if n > 0 {
                let line = &i["lines"][0];
                assert_eq!(
                    (&line["type"], &line["subscriptionId"], &line["periodStart"]),
                    (&json!("SUBSCRIPTION_RENEWAL"), &json!(einv_sub), &i["billingDate"])
                );
            }
        }
        for (n, i) in auto_inv.iter().enumerate() {
            assert_summed(i);
            // the order paid cycle 0: renewals bill cycles 1..=12
            assert_eq!(minor(&i["totalMinor"]), cycle_total(n + 1));
            assert_eq!((&i["status"], &i["paymentMethod"], &i["lines"][0]["subscriptionId"]), (&json!("PAID"), &json!("AUTOPAY"), &json!(auto_sub)));
            let intent = json_of(&app.bullfinch().payment_intent_view(&i["paymentIntentId"].as_str().unwrap().parse().unwrap()).await.unwrap().into_inner());
            assert_eq!((&intent["status"], &intent["invoiceId"], &intent["amountMinor"]), (&json!("SUCCEEDED"), &i["invoiceId"], &i["totalMinor"]));
        }

        // delivery: the e-mail customer's invoices by mail, the e-invoice
        // customer's as a document, the paper customer's listed to print
        let mails = app.store.mails(Some("ap@autopay.example")).await.unwrap();
        assert_eq!(mails.len(), 12, "{mails:#?}");
        assert!(mails.iter().all(|m| m.subject.starts_with("Invoice INV-") && m.body.contains("charged to your saved payment method")));
        let doc = einv_inv[5]["documentUrl"].as_str().unwrap();
        let r = reqwest::get(doc).await.unwrap();
        assert_eq!(r.status(), 200, "{doc}");
        assert_eq!(r.headers()["content-type"], "application/xml; charset=utf-8");
        let xml = r.text().await.unwrap();
        for part in [
            &format!("<cbc:ID>{}</cbc:ID>", einv_inv[5]["number"].as_str().unwrap()),
            "<cbc:DocumentCurrencyCode>SEK</cbc:DocumentCurrencyCode>",
            "<cbc:PayableAmount currencyID=\"SEK\">0.00</cbc:PayableAmount>",
            "<cbc:Percent>25</cbc:Percent>",
            "einvoice AB",
            "poacc:billing:3.0",
        ] {
            assert!(xml.contains(part), "{part} in {xml}");
        }
        let paper_list = app.store.paper_invoices(app.org).await.unwrap();
        assert_eq!(paper_list.len(), 13);
        assert!(paper_list.iter().all(|i| i.customer_id.to_string() == paper));

        // the events: each invoice finalised and paid once
        let events = app.store.event_types(app.org).await.unwrap();
        let count = |t: &str| events.iter().filter(|(e, _)| e == t).count();
        assert_eq!((count("invoice.finalized"), count("invoice.paid"), count("invoice.payment_failed")), (38, 38, 0));
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mark_paid_takes_only_an_open_invoice() {
    each_backend(|mut app| async move {
        app.become_sandbox().await;
        app.stop_jobs();
        app.demo_catalog(app.org).await;
        let c = customer(&app, "acme", swedish("PAPER_INVOICE", "acme")).await;
        bought(&app, "acme", "+46702000011").await;
        let draft = invoices_of(&app, &c).await.remove(0);
        let path = format!("/invoices/{}/mark-paid", draft["invoiceId"].as_str().unwrap());
        app.call("POST", &path, Some(json!({}))).await.assert_error(409, "invoice_state_conflict");
        advance(&app, "2026-11-03T01:00:00Z").await;
        let open = invoice(&app, &draft["invoiceId"]).await;
        assert_eq!((&open["status"], &open["number"], &open["dueAt"]), (&json!("OPEN"), &json!("INV-000001"), &json!("2026-11-16T23:59:59Z")));

        // refusals change nothing
        app.call("POST", &path, Some(json!({"paidAt": "2026-11-04T00:00:00Z"}))).await.assert_error(400, "validation_failed");
        app.call("POST", &path, Some(json!({"method": "CHEQUE"}))).await.assert_error(400, "validation_failed");
        app.call("POST", &path, Some(json!({"reference": "x".repeat(256)}))).await.assert_error(400, "validation_failed");
        app.call("GET", "/invoices/9b1d2c3e-4f5a-4b6c-8d7e-1f2a3b4c5d6e", None).await.assert_error(404, "invoice_not_found");
        let (_, other) = app.other_org().await;
        app.call_as(Some(&other), "POST", &path, Some(json!({})), &[]).await.assert_error(404, "invoice_not_found");
        app.call_as(Some(&other), "GET", &format!("/invoices/{}", draft["invoiceId"].as_str().unwrap()), None, &[])
            .await
            .assert_error(404, "invoice_not_found");
        let theirs = app.call_as(Some(&other), "GET", "/invoices", None, &[]).await;
        assert_eq!(theirs.body["items"], json!([]), "another organisation lists none of these");
        assert_eq!(invoice(&app, &draft["invoiceId"]).await, open);

        // a MEMBER of the customer reads it but may not mark it paid
        let r = app.call("POST", "/users", Some(json!({"name": "M", "email": "m@acme.example", "customerId": "rid_acme", "role": "MEMBER"}))).await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        let member = format!("Bearer {}", app.login("m@acme.example", Some(&app.key)).await);
        let bearer = [("Authorization", member.as_str())];
        let read = app.call_as(Some(&app.key), "GET", &format!("/invoices/{}", draft["invoiceId"].as_str().unwrap()), None, &bearer).await;
        assert_eq!(read.status, 200, "{:#}", read.body);
        app.call_as(Some(&app.key), "POST", &path, Some(json!({})), &bearer).await.assert_error(403, "insufficient_role");

        // paid before now, by cash, once; replayed with its key; then 409
        let paid = mark_paid(&app, &draft["invoiceId"], json!({"paidAt": "2026-11-02T15:00:00Z", "method": "CASH", "reference": "Receipt 7"})).await;
        assert_eq!(
            (&paid["status"], &paid["paidAt"], &paid["paymentMethod"], &paid["paymentReference"]),
            (&json!("PAID"), &json!("2026-11-02T15:00:00Z"), &json!("CASH"), &json!("Receipt 7"))
        );
        let r = app.call("POST", &path, Some(json!({}))).await;
        r.assert_error(409, "invoice_state_conflict");
        assert!(r.body["message"].as_str().unwrap().contains("PAID"), "{:#}", r.body);
        // the older revision reads it alike (invoices are new in both)
        let auk = app.auk_with(&app.new_key(app.org, Some(AUK), false).await);
        let seen = json_of(&auk.invoice_view(&draft["invoiceId"].as_str().unwrap().parse().unwrap()).await.unwrap().into_inner());
        assert_eq!(seen, paid);
        let events = app.store.event_types(app.org).await.unwrap();
        assert_eq!(events.iter().filter(|(t, _)| t == "invoice.paid").count(), 1);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invoices_finalised_at_once_take_every_number_once() {
    each_backend(|mut app| async move {
        app.become_sandbox().await;
        app.stop_jobs();
        app.demo_catalog(app.org).await;
        let mut drafts = vec![];
        for n in 0..8 {
            let reference = format!("race{n}");
            let c = customer(&app, &reference, swedish("PAPER_INVOICE", &reference)).await;
            bought(&app, &reference, &format!("+4670200100{n}")).await;
            drafts.push(invoices_of(&app, &c).await.remove(0)["invoiceId"].as_str().unwrap().parse::<uuid::Uuid>().unwrap());
        }
        // each finalised twice, all at once, as two instances' jobs would
        let ended = chrono::DateTime::parse_from_rfc3339("2026-11-03T00:00:00Z").unwrap().to_utc();
        let public = app.base.trim_end_matches("/api/v2").to_string();
        let runs = drafts.iter().chain(drafts.iter()).map(|id| {
            let (store, network, public, org, id) = (app.store.clone(), app.running_network(), public.clone(), app.org, *id);
            tokio::spawn(async move { switchboard::domain::invoices::due::run(&store, network.as_ref(), &public, org, id, ended).await })
        });
        for run in futures::future::join_all(runs).await {
            // a run that lost its race to a version is tried again by its job
            if let Err(e) = run.unwrap() {
                assert!(e.is_concurrent_conflict(), "{e}");
            }
        }
        let mut numbers = vec![];
        for id in &drafts {
            let i = invoice(&app, &json!(id.to_string())).await;
            assert_eq!(i["status"], "OPEN", "{i:#}");
            numbers.push(i["number"].as_str().unwrap().to_string());
        }
        numbers.sort();
        assert_eq!(numbers, (1..=8).map(|n| format!("INV-{n:06}")).collect::<Vec<_>>());
        let events = app.store.event_types(app.org).await.unwrap();
        assert_eq!(events.iter().filter(|(t, _)| t == "invoice.finalized").count(), 8, "each finalised once");
        app
    })
    .await;
}
