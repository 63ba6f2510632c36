//! An eSIM's activation code is a secret: shown once, in the answer of the
//! move that issued it (and its replay, the answer kept sealed) and to the
//! API key alone or an ADMIN; never in a read or an event; fetched again
//! through its own operation, whose every use is recorded (who, never the
//! code).

use crate::harness::*;
use crate::lifecycle::new_subscription;
use crate::orders::setup;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_esim_activation_code_is_shown_once_and_fetched_audited() {
    each_backend(|app| async move {
        setup(&app).await;
        let sub = new_subscription(&app, "mobile-10gb", "ESIM", "+46701230101", false).await;
        let id = sub.parse().unwrap();
        let client = app.bullfinch();
        // no profile before activation
        assert_refused(&client.subscription_esim_activation_code_view(&sub.parse().unwrap()).await.unwrap_err(), 409, "no_esim_profile");

        // the activation's answer shows it, and so does a replay of the
        // same request (a client whose first answer was lost gets it there)
        let key = "activate-1".parse().unwrap();
        let body: bullfinch::types::ActivateSubscriptionRequest = serde_json::from_value(json!({})).unwrap();
        let first = client.subscription_activate(&id, Some(&key), &body).await.unwrap().into_inner();
        let first = json_of(&first);
        let code = first["esimActivationCode"].as_str().expect("the activation shows the code").to_string();
        let replayed = client.subscription_activate(&id, Some(&key), &body).await.unwrap();
        assert_eq!(replayed.headers()["idempotent-replayed"], "true");
        assert_eq!(replayed.into_inner().esim_activation_code.as_deref().map(|c| c.as_str()), Some(code.as_str()));
        assert!(client.subscription_view(&sub.parse().unwrap()).await.unwrap().into_inner().esim_activation_code.is_none());
        // kept sealed under the master key, never in plain
        let kept: Vec<(Option<String>, Option<String>)> =
            sqlx::query_as("SELECT body, sealed_body FROM idempotency_keys").fetch_all(app.store.pool()).await.unwrap();
        assert!(kept.iter().flat_map(|(b, s)| [b, s]).flatten().all(|text| !text.contains(&code)), "a stored answer keeps the code in plain");
        assert!(kept.iter().any(|(b, s)| b.is_none() && s.as_deref().is_some_and(|s| s.starts_with("sealed:v1:"))), "the answer is kept sealed");
        let events = app.store.event_types(app.org).await.unwrap();
        assert!(events.iter().all(|(_, d)| !d.to_string().contains(&code)), "an event carries the code");

        // the key fetches it, and the fetch is recorded
        let fetched = json_of(&client.subscription_esim_activation_code_view(&sub.parse().unwrap()).await.unwrap().into_inner());
        assert_eq!((&fetched["esimActivationCode"], &fetched["iccid"]), (&json!(code), &first["iccid"]));
        let (kind, data) = app.store.event_types(app.org).await.unwrap().pop().unwrap();
        assert_eq!(kind, "subscription.esim_activation_code_viewed");
        assert_eq!(data["apiKeyId"], json!(app.key_id(&app.key).await));
        assert!(data.get("userId").is_none() && !data.to_string().contains(&code));

        // an ADMIN of the customer may; a MANAGER and a support user may not
        let mut tokens = vec![];
        for (role, support) in [("ADMIN", false), ("MANAGER", false), ("ADMIN", true)] {
            let email = format!("{}{}@acme.example", role.to_lowercase(), if support { "-support" } else { "" });
            let u = app.call("POST", "/users", Some(json!({"name": role, "email": email, "customerId": "rid_acme", "role": role}))).await;
            assert_eq!(u.status, 201, "{:#}", u.body);
            if support {
                switchboard::admin::user_support(&app.store, u.body["userId"].as_str().unwrap().parse().unwrap(), true).await.unwrap();
            }
            tokens.push((u.body["userId"].clone(), app.login(&email, Some(&app.key)).await));
        }
        let as_user = |token: &str| app.bullfinch_as(&app.key, token);
        let by_admin = as_user(&tokens[0].1).subscription_esim_activation_code_view(&sub.parse().unwrap()).await.unwrap().into_inner();
        assert_eq!(json_of(&by_admin)["esimActivationCode"], json!(code));
        assert_eq!(app.store.event_types(app.org).await.unwrap().pop().unwrap().1["userId"], tokens[0].0);
        assert_refused(&as_user(&tokens[1].1).subscription_esim_activation_code_view(&sub.parse().unwrap()).await.unwrap_err(), 403, "insufficient_role");
        assert_refused(&as_user(&tokens[2].1).subscription_esim_activation_code_view(&sub.parse().unwrap()).await.unwrap_err(), 403, "support_user_read_only");
        // a MANAGER's change of SIM answers without the new code
        let sim: bullfinch::types::ChangeSimRequest = serde_json::from_value(json!({"simType": "ESIM"})).unwrap();
        let manager = as_user(&tokens[1].1).subscription_change_sim(&sub.parse().unwrap(), None, &sim).await;
        assert_refused(&manager.unwrap_err(), 403, "insufficient_role");
        let changed = as_user(&tokens[0].1).subscription_change_sim(&sub.parse().unwrap(), None, &sim).await.unwrap().into_inner();
        let new_code = json_of(&changed)["esimActivationCode"].clone();
        assert!(new_code.is_string() && new_code != json!(code), "the ADMIN who changed it sees the new code");

        // another organisation's key does not find it
        let (_, other) = app.other_org().await;
        assert_refused(
            &app.bullfinch_with(&other).subscription_esim_activation_code_view(&sub.parse().unwrap()).await.unwrap_err(),
            404,
            "subscription_not_found",
        );
        app
    })
    .await;
}

/// A read-only key (the kind handed to BI tools) reads subscriptions and SIMs but is shown no activation code: its own operation answers
/// 403 `read_only_api_key`, alone or with an ADMIN's token, and the SIM comes without it; nothing is recorded as viewed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_key_is_shown_no_activation_code() {
    each_backend(|app| async move {
        setup(&app).await;
        let sub = new_subscription(&app, "mobile-10gb", "ESIM", "+46701230201", false).await;
        let activated = app.call("POST", &format!("/subscriptions/{sub}/activate"), Some(json!({}))).await;
        assert_eq!(activated.status, 200, "{:#}", activated.body);
        let iccid = activated.body["iccid"].as_str().unwrap().to_string();
        let u = app.call("POST", "/users", Some(json!({"name": "Ada", "email": "ada@acme.example", "customerId": "rid_acme", "role": "ADMIN"}))).await;
        assert_eq!(u.status, 201, "{:#}", u.body);
        let token = app.login("ada@acme.example", Some(&app.key)).await;
        let read_only = app.new_key(app.org, None, true).await;
        let viewed = |events: Vec<(String, serde_json::Value)>| events.iter().filter(|(t, _)| t == "subscription.esim_activation_code_viewed").count();
        let before = viewed(app.store.event_types(app.org).await.unwrap());
        let bearer = format!("Bearer {token}");
        for headers in [vec![], vec![("authorization", bearer.as_str())]] {
            let code = app.call_as(Some(&read_only), "GET", &format!("/subscriptions/{sub}/esim-activation-code"), None, &headers).await;
            code.assert_error(403, "read_only_api_key");
            let sim = app.call_as(Some(&read_only), "GET", &format!("/inventory/sims/{iccid}"), None, &headers).await;
            assert_eq!(sim.status, 200, "{:#}", sim.body);
            assert!(sim.body.get("esimActivationCode").is_none(), "a read-only key is shown the code: {:#}", sim.body);
            assert_eq!(sim.body["subscriptionId"], json!(sub));
        }
        assert_eq!(viewed(app.store.event_types(app.org).await.unwrap()), before, "a refused fetch is recorded as viewed");
        // the full key behind the same ADMIN is shown it
        let full = app.call_as(Some(&app.key), "GET", &format!("/subscriptions/{sub}/esim-activation-code"), None, &[("authorization", &bearer)]).await;
        assert_eq!((full.status, &full.body["esimActivationCode"]), (200, &activated.body["esimActivationCode"]));
        app
    })
    .await;
}
