//! Usage, on both databases and both revisions: records from the sandbox
//! network's feed count once each, in month-long periods from the billing
//! day, against the offering's allowances and then the packages of active
//! add-ons (calling credit for calls abroad: `balanceMinor`, and `balance`
//! on auk only); 80% and 100% of an included allowance each record
//! `subscription.quotaNotification` once per period; the list filters by
//! customer and pages; the operator command records usage too. How far
//! the feed has been read is kept in the database, for every instance.

use crate::harness::*;
use crate::orders::{offering, setup};
use serde_json::{Value, json};
use switchboard::network::SimUsage;
use switchboard::store::{UsageKind, UsageRecord};

const AUK: &str = "2026-08-21.auk";

/// Bought for Acme and activated now: the subscription.
pub async fn active(app: &TestApp, offering_key: &str, msisdn: &str) -> Value {
    let r = app
        .call(
            "POST",
            "/subscriptions",
            Some(json!({"customerId": "rid_acme", "productOfferingId": offering(app, offering_key),
                                                      "subscription": {"simType": "ESIM", "msisdn": msisdn}})),
        )
        .await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    let id = r.body["subscriptionId"].as_str().unwrap();
    let r = app.call("POST", &format!("/subscriptions/{id}/activate"), Some(json!({}))).await;
    assert_eq!(r.status, 200, "{:#}", r.body);
    r.body
}

/// Reports usage of `s` on the network's feed and lets the job record it.
pub async fn report(app: &TestApp, s: &Value, id: &str, kind: UsageKind, quantity: i64, extra: (i64, Option<&str>)) {
    let record =
        UsageRecord { record_id: id.into(), kind, quantity, charge_minor: extra.0, country: extra.1.map(str::to_string), occurred_at: app.clock.now() };
    app.network().report(SimUsage { iccid: s["iccid"].as_str().unwrap().into(), msisdn: s["msisdn"].as_str().unwrap().into(), record });
    app.run_jobs().await;
}

pub async fn usage(app: &TestApp, s: &Value, date: Option<&str>) -> Value {
    let id = s["subscriptionId"].as_str().unwrap().parse().unwrap();
    let date = date.map(|d| d.parse().unwrap());
    json_of(&app.bullfinch().subscription_usage_view(&id, date.as_ref()).await.unwrap().into_inner())
}

fn quota_events(events: &[(String, Value)]) -> Vec<(String, i64)> {
    events
        .iter()
        .filter(|(t, _)| t == "subscription.quotaNotification")
        .map(|(_, d)| (d["allowance"].as_str().unwrap().to_string(), d["thresholdPercent"].as_i64().unwrap()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_counts_once_against_the_allowances_and_tells_at_80_and_100_percent() {
    each_backend(|app| async move {
        setup(&app).await;
        at(&app, "2030-01-31T09:00:00Z");
        let s = active(&app, "mobile-10gb", "+46701230001").await;
        let fresh = usage(&app, &s, None).await;
        assert_eq!((fresh["periodStart"].as_str(), fresh["periodEnd"].as_str()), (Some("2030-01-31"), Some("2030-02-28")));
        assert_eq!(fresh["data"], json!({"unit": "MB", "used": 0.0, "included": 10240.0, "remaining": 10240.0}));
        assert!(fresh.get("updatedAt").is_none());

        // 8000 MB: under 80%; then 300 MB more: 81%, one notification
        report(&app, &s, "r1", UsageKind::Data, 8000 * 1024, (0, None)).await;
        report(&app, &s, "r2", UsageKind::Voice, 600, (0, None)).await;
        report(&app, &s, "r3", UsageKind::Sms, 3, (0, None)).await;
        assert!(quota_events(&app.store.event_types(app.org).await.unwrap()).is_empty());
        report(&app, &s, "r4", UsageKind::Data, 300 * 1024, (0, None)).await;
        let u = usage(&app, &s, None).await;
        assert_eq!(u["data"], json!({"unit": "MB", "used": 8300.0, "included": 10240.0, "remaining": 1940.0}));
        assert_eq!(u["voice"], json!({"unit": "SECONDS", "used": 600.0, "included": 360000.0, "remaining": 359400.0}));
        assert_eq!(u["sms"], json!({"unit": "SMS", "used": 3.0, "included": 3000.0, "remaining": 2997.0}));
        let events = app.store.event_types(app.org).await.unwrap();
        assert_eq!(quota_events(&events), [("DATA".to_string(), 80)]);
        // the payload: the subscription as read, and the usage as read
        let (_, data) = events.iter().rev().find(|(t, _)| t == "subscription.quotaNotification").unwrap();
        assert_eq!(data["usage"], u);
        assert_eq!(data["subscription"], app.call("GET", &format!("/subscriptions/{}", s["subscriptionId"].as_str().unwrap()), None).await.body);

        // the same record again changes nothing; crossing 100% tells once more
        report(&app, &s, "r4", UsageKind::Data, 300 * 1024, (0, None)).await;
        assert_eq!(usage(&app, &s, None).await["data"]["used"], 8300.0);
        report(&app, &s, "r5", UsageKind::Data, 3000 * 1024, (0, None)).await;
        report(&app, &s, "r6", UsageKind::Data, 10, (0, None)).await;
        let u = usage(&app, &s, None).await;
        assert_eq!((u["data"]["used"].as_f64(), u["data"]["remaining"].as_f64()), (Some(11300.01), Some(0.0)));
        let events = app.store.event_types(app.org).await.unwrap();
        assert_eq!(quota_events(&events), [("DATA".to_string(), 80), ("DATA".to_string(), 100)]);

        // a new period (28 Feb: 31 January's day in February) starts from zero
        // and tells again; the old one still reads by date
        at(&app, "2030-02-28T00:00:01Z");
        report(&app, &s, "r7", UsageKind::Data, 9000 * 1024, (0, None)).await;
        let feb = usage(&app, &s, None).await;
        assert_eq!(
            (feb["periodStart"].as_str(), feb["periodEnd"].as_str(), feb["data"]["used"].as_f64()),
            (Some("2030-02-28"), Some("2030-03-31"), Some(9000.0))
        );
        assert_eq!(usage(&app, &s, Some("2030-02-27")).await["data"]["used"], 11300.01);
        assert_eq!(quota_events(&app.store.event_types(app.org).await.unwrap()).len(), 3);

        // unknown SIMs are skipped; a bad date is a 400; another organisation's key sees nothing
        app.network().report(SimUsage {
            iccid: "8946000000000000000".into(),
            msisdn: "+46709999999".into(),
            record: UsageRecord { record_id: "x".into(), kind: UsageKind::Sms, quantity: 1, charge_minor: 0, country: None, occurred_at: app.clock.now() },
        });
        app.run_jobs().await;
        let id = s["subscriptionId"].as_str().unwrap();
        app.call("GET", &format!("/subscriptions/{id}/usage?date=2030-02-30"), None).await.assert_error(400, "validation_failed");
        let (_, other) = app.other_org().await;
        app.call_as(Some(&other), "GET", &format!("/subscriptions/{id}/usage"), None, &[]).await.assert_error(404, "subscription_not_found");
        app
    })
    .await;
}

const CALLING_CREDIT: &str = "products:
  - {key: intl-calls, internalName: INTL_CALLS, type: SUBSCRIPTION_ADDON, category: PRODUCT_CATEGORY_ABROAD, features: {countries: [USA, GBR]}}
offerings:
  - {key: intl-calls-100, name: International calls 100 kr, product: intl-calls, group: mobile-addons,
     price: {netPriceMinor: 10000, currency: SEK, priceType: ONE_TIME}}
catalogs:
  - {key: business, name: Business, offerings: [mobile-10gb, mobile-unlimited, data-sim-20gb, broadband-100, iot-basic, travel-esim, travel-eu-5gb,
                extra-data-5gb, abroad-usa, pbx-user, pbx-queue, device-management, sim-card, intl-calls-100]}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn packages_take_what_the_allowance_cannot_and_credit_pays_calls_abroad() {
    each_backend(|app| async move {
        setup(&app).await;
        app.import_catalog(app.org, CALLING_CREDIT).await;
        // (now: auk, retired on 2026-12-01, still answers)
        let s = active(&app, "mobile-10gb", "+46701230002").await;
        let sid = s["subscriptionId"].as_str().unwrap();
        let r = app
            .call(
                "POST",
                "/orders",
                Some(json!({"customerId": "rid_acme", "lineItems": [
                {"type": "SUBSCRIPTION_ADDON", "productOfferingId": offering(&app, "extra-data-5gb"), "subscriptionId": sid},
                {"type": "SUBSCRIPTION_ADDON", "productOfferingId": offering(&app, "intl-calls-100"), "subscriptionId": sid}]})),
            )
            .await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        let order = r.body["orderId"].as_str().unwrap();
        let done = app.call("POST", &format!("/orders/{order}/submit"), Some(json!({}))).await;
        assert_eq!(done.status, 200, "{:#}", done.body);
        // INSTANT add-ons of an ACTIVATED subscription are ACTIVE at once
        let addons = app.call("GET", &format!("/subscriptions/{sid}/addons"), None).await;
        assert!(addons.body["items"].as_array().unwrap().iter().all(|a| a["status"] == "ACTIVE"), "{:#}", addons.body);

        // 11 GB: 10 GB included, 1 GB from the 5 GB package
        report(&app, &s, "d1", UsageKind::Data, 11 * 1024 * 1024, (0, None)).await;
        // two calls to the USA (60 and 40 kr) and one to Norway (15 kr, no credit for it)
        report(&app, &s, "c1", UsageKind::VoiceIld, 600, (6000, Some("USA"))).await;
        report(&app, &s, "c2", UsageKind::VoiceIld, 300, (5500, Some("USA"))).await;
        report(&app, &s, "c3", UsageKind::VoiceIld, 120, (1500, Some("NOR"))).await;
        let u = usage(&app, &s, None).await;
        assert_eq!(u["data"]["remaining"], 0.0);
        let p = &u["packages"][0];
        assert_eq!(
            (p["name"].as_str(), &p["data"]),
            (Some("Extra data 5 GB"), &json!({"unit": "MB", "used": 1024.0, "included": 5120.0, "remaining": 4096.0}))
        );
        let expiry = app.clock.now() + chrono::Duration::days(30);
        assert!(p["validUntil"].as_str().unwrap().starts_with(&expiry.format("%Y-%m-%dT%H:%M").to_string()), "{p:#}");
        let c = &u["voiceIldPackages"][0];
        assert_eq!((c["creditMinor"].as_i64(), c["balanceMinor"].as_i64(), c["usedSeconds"].as_i64()), (Some(10000), Some(0), Some(900)));
        assert!(c.get("balance").is_none(), "bullfinch reads balanceMinor only");
        // 115 kr of calls to the USA, 100 paid by credit; Norway's 15 kr charged
        assert_eq!(u["internationalVoice"], json!({"usedSeconds": 1020, "chargedMinor": 3000, "currency": "SEK"}));

        // auk also shows the balance in major units, on the read and in the list
        let auk = app.auk_with(&app.new_key(app.org, Some(AUK), false).await);
        let a = json_of(&auk.subscription_usage_view(&sid.parse().unwrap(), None).await.unwrap().into_inner());
        assert_eq!((a["voiceIldPackages"][0]["balanceMinor"].as_i64(), a["voiceIldPackages"][0]["balance"].as_f64()), (Some(0), Some(0.0)));
        let list = json_of(&auk.subscription_usage_list(None, None, None, None).await.unwrap().into_inner());
        assert_eq!(list["items"][0]["voiceIldPackages"][0]["balance"], 0.0);

        // a package runs out with its validity: 30 days on it is gone
        app.clock.advance(chrono::Duration::days(30) + chrono::Duration::minutes(1));
        assert!(usage(&app, &s, None).await["packages"].as_array().unwrap().is_empty());
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_pages_subscriptions_with_periods_by_customer() {
    each_backend(|app| async move {
        setup(&app).await;
        at(&app, "2030-05-15T12:00:00Z");
        let a = active(&app, "mobile-10gb", "+46701230003").await;
        at(&app, "2030-05-20T12:00:00Z");
        let b = active(&app, "data-sim-20gb", "+46701230004").await;
        // never activated: no periods, not listed
        let r = app
            .call(
                "POST",
                "/subscriptions",
                Some(json!({"customerId": "rid_acme", "productOfferingId": offering(&app, "mobile-10gb"),
                                                          "subscription": {"simType": "ESIM", "msisdn": "+46701230005"}})),
            )
            .await;
        assert_eq!(r.status, 201);
        report(&app, &b, "b1", UsageKind::Data, 1024, (0, None)).await;

        let client = app.bullfinch();
        let first = client.subscription_usage_list(None, None, None, Some(1.try_into().unwrap())).await.unwrap().into_inner();
        assert_eq!(first.items.len(), 1);
        assert_eq!(first.items[0].subscription_id.to_string(), a["subscriptionId"].as_str().unwrap());
        let cursor = first.pagination.next_cursor.clone().unwrap();
        let second = client.subscription_usage_list(Some(&cursor.parse().unwrap()), None, None, Some(1.try_into().unwrap())).await.unwrap().into_inner();
        let second = json_of(&second);
        assert_eq!(second["items"][0]["subscriptionId"], b["subscriptionId"]);
        assert_eq!((second["items"][0]["periodStart"].as_str(), second["items"][0]["data"]["used"].as_f64()), (Some("2030-05-20"), Some(1.0)));
        assert!(second["pagination"]["nextCursor"].is_null());
        // each in its own period holding the date
        let june = json_of(&client.subscription_usage_list(None, None, Some(&"2030-06-16".parse().unwrap()), None).await.unwrap().into_inner());
        let starts: Vec<&str> = june["items"].as_array().unwrap().iter().map(|i| i["periodStart"].as_str().unwrap()).collect();
        assert_eq!(starts, ["2030-06-15", "2030-05-20"]);
        // by customer: none of Globex's
        let r = app.call("GET", "/subscriptions/usage?customerId=rid_acme&limit=10", None).await;
        assert_eq!(r.body["items"].as_array().unwrap().len(), 2);
        app.call("GET", "/subscriptions/usage?customerId=rid_nobody", None).await.assert_error(404, "customer_not_found");
        app.call("GET", "/subscriptions/usage?date=tomorrow", None).await.assert_error(400, "validation_failed");
        app
    })
    .await;
}

/// The collector goes on from the position kept in the database, not from
/// one process's memory: a record another instance has read (the position
/// moved past it) is not read again here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_feed_is_read_on_from_the_position_kept_in_the_database() {
    each_backend(|app| async move {
        setup(&app).await;
        let s = active(&app, "mobile-10gb", "+46701230003").await;
        report(&app, &s, "first", UsageKind::Data, 100, (0, None)).await;
        let position = || async { sqlx::query_scalar::<_, i64>("SELECT position FROM feed_positions").fetch_one(app.store.pool()).await.unwrap() };
        assert_eq!(position().await, 1);

        // another instance reads the next record and keeps its position
        sqlx::query("UPDATE feed_positions SET position = 2").execute(app.store.pool()).await.unwrap();
        report(&app, &s, "read elsewhere", UsageKind::Data, 100, (0, None)).await;
        report(&app, &s, "third", UsageKind::Data, 100, (0, None)).await;
        let records: Vec<String> = sqlx::query_scalar("SELECT record_id FROM usage_records ORDER BY record_id").fetch_all(app.store.pool()).await.unwrap();
        assert_eq!(records, ["first", "third"]);
        assert_eq!(position().await, 3);
        app
    })
    .await;
}
