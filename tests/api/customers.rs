//! Customers: create, view by id and rid_, update, list, validation, conflicts, tenancy.

use crate::harness::*;
use serde_json::json;

fn acme() -> serde_json::Value {
    json!({
        "customerType": "BUSINESS",
        "name": "Acme AB",
        "identity": "556677-8899",
        "preferredLocale": "sv-SE",
        "referenceId": "crm-42",
        "contact": {"email": "billing@acme.example", "msisdn": "+46701234567"},
        "billing": {"method": "EMAIL_INVOICE", "email": "billing@acme.example", "currency": "SEK"},
        "shipping": {"name": "Reception", "address": {"street1": "Storgatan 1", "city": "Stockholm", "zip": "111 22", "country": "SE"}},
        "metadata": {"segment": "smb", "empty": ""}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_view_update_on_both_revisions() {
    each_backend(|app| async move {
        let client = app.bullfinch();
        let req: bullfinch::types::CreateCustomerRequest = serde_json::from_value(acme()).unwrap();
        let created = client.customer_create(None, &req).await.unwrap();
        assert_eq!(created.status().as_u16(), 201);
        let c = created.into_inner();
        assert_eq!(c.name, "Acme AB");
        assert_eq!(c.preferred_locale.as_ref().map(|l| l.as_str()), Some("sv-SE"));
        assert!(c.human_readable_id.as_deref().is_some_and(|id| id.starts_with("CU-")));
        assert_eq!(c.metadata.as_ref().unwrap().get("empty").unwrap().as_str(), "");
        assert!(!c.billing.as_ref().unwrap().auto_pay);

        // the auk client reads the same customer by its reference id
        let auk_key = app.new_key(app.org, Some(AUK), false).await;
        let seen = app.auk_with(&auk_key).customer_view(&"rid_crm-42".parse().unwrap()).await.unwrap();
        assert_eq!(seen.headers()["api-revision"], AUK);
        assert_eq!(seen.into_inner().customer_id, c.customer_id);

        let update: bullfinch::types::UpdateCustomerRequest =
            serde_json::from_value(json!({"name": "Acme Sverige AB", "metadata": {"segment": "enterprise"}})).unwrap();
        let updated = client.customer_update(&c.customer_id.to_string().parse().unwrap(), &update).await.unwrap().into_inner();
        assert_eq!(updated.name, "Acme Sverige AB");
        assert_eq!(updated.identity.as_ref().map(|s| s.as_str()), Some("556677-8899"), "fields left out keep their value");
        assert_eq!(updated.metadata.unwrap().get("segment").unwrap().as_str(), "enterprise");

        // each change recorded its event with the change
        let events: Vec<String> = app.store.event_types(app.org).await.unwrap().into_iter().map(|(t, _)| t).collect();
        assert_eq!(events, ["customer.created", "customer.updated"]);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defaults_and_rid_paths() {
    each_backend(|app| async move {
        let r = app.call("POST", "/customers", Some(json!({"customerType": "CONSUMER", "name": "Maria", "contact": {}}))).await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        assert_eq!(r.body["preferredLocale"], "en-US");
        assert!(r.body.get("referenceId").is_none());
        app.call("GET", "/customers/rid_nope", None).await.assert_error(404, "customer_not_found");
        app.call("GET", "/customers/not-a-uuid", None).await.assert_error(404, "customer_not_found");
        app.call("GET", "/customers/rid_", None).await.assert_error(404, "customer_not_found");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_invalid_field_is_named_and_nothing_changes() {
    each_backend(|app| async move {
        let body = json!({
            "customerType": "PERSON",
            "name": "",
            "preferredLocale": "not a locale!",
            "referenceId": "x".repeat(256),
            "contact": {"email": "nope", "msisdn": "0701234567"},
            "billing": {"method": "PAPER_INVOICE", "currency": "XXY", "autoPay": true},
            "shipping": {"name": "Home", "address": {"street1": "1 Main St", "city": "Springfield", "zip": "1234", "country": "US"}},
            "metadata": {"k": 5}
        });
        let r = app.call("POST", "/customers", Some(body)).await;
        r.assert_error(400, "validation_failed");
        let props: Vec<String> = r.details().into_iter().map(|(p, _)| p).collect();
        for expected in ["customerType", "name", "preferredLocale", "referenceId", "contact.email", "contact.msisdn", "metadata.k"] {
            assert!(props.contains(&expected.to_string()), "{expected} missing from {props:?}");
        }
        // domain rules are checked once the shape is right
        let body = json!({
            "customerType": "BUSINESS", "name": "Globex",
            "contact": {"msisdn": "+1555"},
            "billing": {"method": "PAPER_INVOICE", "currency": "XXY", "autoPay": true},
            "shipping": {"name": "Dock", "address": {"street1": "1 Main St", "city": "Springfield", "zip": "1234", "country": "US"}}
        });
        let r = app.call("POST", "/customers", Some(body)).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(
            r.details(),
            [
                ("billing.address", "required"),
                ("billing.currency", "invalid_currency"),
                ("billing.defaultPaymentProfileId", "required"),
                ("contact.msisdn", "invalid_msisdn"),
                ("shipping.address.zip", "invalid_zip"),
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
        let r = app
            .call(
                "POST",
                "/customers",
                Some(json!({"customerType": "CONSUMER", "name": "X", "contact": {},
            "billing": {"method": "EMAIL_INVOICE", "currency": "EUR"}})),
            )
            .await;
        assert_eq!(r.details(), [("billing.email".to_string(), "required".to_string())]);
        let r = app
            .call(
                "POST",
                "/customers",
                Some(json!({"customerType": "CONSUMER", "name": "X", "contact": {},
            "shipping": {"name": "X", "address": {"street1": "a", "city": "b", "zip": "c", "country": "XX"}}})),
            )
            .await;
        assert_eq!(r.details(), [("shipping.address.country".to_string(), "invalid_country".to_string())]);
        app.call("POST", "/customers", Some(json!([1, 2]))).await.assert_error(400, "validation_failed");
        let list = app.call("GET", "/customers", None).await;
        assert_eq!(list.body["items"].as_array().unwrap().len(), 0, "a failed request changes nothing");
        // malformed JSON
        let r = TestApp::http(Some(&app.key))
            .post(format!("{}/customers", app.base))
            .header("content-type", "application/json")
            .body("{\"name\":")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 400);
        let b: serde_json::Value = r.json().await.unwrap();
        assert_eq!(b["internalCode"], "malformed_json");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn references_to_missing_objects_answer_404_naming_the_field() {
    each_backend(|app| async move {
        let mut body = acme();
        body["billing"]["defaultPaymentProfileId"] = json!("pp_1");
        let r = app.call("POST", "/customers", Some(body)).await;
        r.assert_error(404, "payment_profile_not_found");
        let field = |f: &str, c: &str| vec![(f.to_string(), c.to_string())];
        assert_eq!(r.details(), field("billing.defaultPaymentProfileId", "payment_profile_not_found"));
        assert_eq!(app.call("GET", "/customers", None).await.body["items"], json!([]), "a failed request changes nothing");

        let id = app.call("POST", "/customers", Some(acme())).await.body["customerId"].as_str().unwrap().to_string();
        let path = format!("/customers/{id}");
        let r = app.call("PUT", &path, Some(json!({"contactPersonUserId": uuid::Uuid::new_v4().to_string()}))).await;
        r.assert_error(404, "user_not_found");
        assert_eq!(r.details(), field("contactPersonUserId", "user_not_found"));
        let r = app.call("PUT", &path, Some(json!({"billing": {"method": "E_INVOICE", "currency": "SEK", "defaultPaymentProfileId": "pp_1"}}))).await;
        r.assert_error(404, "payment_profile_not_found");
        assert_eq!(app.call("GET", &path, None).await.body["billing"]["method"], "EMAIL_INVOICE");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reference_id_is_unique_per_organisation() {
    each_backend(|app| async move {
        assert_eq!(app.call("POST", "/customers", Some(acme())).await.status, 201);
        let r = app.call("POST", "/customers", Some(acme())).await;
        r.assert_error(409, "reference_id_taken");
        assert_eq!(r.details(), [("referenceId".to_string(), "reference_id_taken".to_string())]);
        // a second customer cannot take it by update either
        let mut other = acme();
        other["referenceId"] = json!("crm-43");
        let id = app.call("POST", "/customers", Some(other)).await.body["customerId"].as_str().unwrap().to_string();
        app.call("PUT", &format!("/customers/{id}"), Some(json!({"referenceId": "crm-42"}))).await.assert_error(409, "reference_id_taken");
        // keeping its own is fine
        assert_eq!(app.call("PUT", &format!("/customers/{id}"), Some(json!({"referenceId": "crm-43"}))).await.status, 200);
        // another organisation may use the same reference id, and cannot see ours
        let (_, other_key) = app.other_org().await;
        let r = app.call_as(Some(&other_key), "POST", "/customers", Some(acme()), &[]).await;
        assert_eq!(r.status, 201);
        let theirs = r.body["customerId"].as_str().unwrap().to_string();
        app.call("GET", &format!("/customers/{theirs}"), None).await.assert_error(404, "customer_not_found");
        app.call("PUT", &format!("/customers/{theirs}"), Some(json!({"name": "Mine"}))).await.assert_error(404, "customer_not_found");
        let ours = app.call("GET", "/customers", None).await;
        assert_eq!(ours.body["items"].as_array().unwrap().len(), 2);
        let still = app.call_as(Some(&other_key), "GET", &format!("/customers/{theirs}"), None, &[]).await;
        assert_eq!(still.body["name"], "Acme AB");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_filters_by_text_and_type() {
    each_backend(|app| async move {
        for (name, t, email) in
            [("Acme AB", "BUSINESS", "a@acme.example"), ("Maria Lind", "CONSUMER", "maria@home.example"), ("Globex", "BUSINESS", "ops@globex.example")]
        {
            let r = app.call("POST", "/customers", Some(json!({"customerType": t, "name": name, "contact": {"email": email}}))).await;
            assert_eq!(r.status, 201);
        }
        let client = app.bullfinch();
        let names = |l: bullfinch::types::CustomerList| l.items.into_iter().map(|c| c.name).collect::<Vec<_>>();
        let all = client.customer_list(None, None, None, None).await.unwrap().into_inner();
        assert_eq!(names(all), ["Acme AB", "Maria Lind", "Globex"]);
        let biz = client.customer_list(None, Some(bullfinch::types::CustomerListCustomerType::Business), None, None).await.unwrap().into_inner();
        assert_eq!(names(biz), ["Acme AB", "Globex"]);
        let by_email = client.customer_list(None, None, Some(&"HOME.example".parse().unwrap()), None).await.unwrap().into_inner();
        assert_eq!(names(by_email), ["Maria Lind"]);
        let pct = client.customer_list(None, None, Some(&"%".parse().unwrap()), None).await.unwrap().into_inner();
        assert!(pct.items.is_empty(), "LIKE wildcards are matched literally");
        app.call("GET", "/customers?customerType=PERSON", None).await.assert_error(400, "validation_failed");
        app
    })
    .await;
}

/// A preferredLocale is any BCP 47 tag of registered subtags (RFC 5646's
/// grammar in the schema, the IANA registry in the server), kept as given;
/// an unregistered subtag or a tag the grammar refuses is 400 naming the
/// field, on create and on update, and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preferred_locale_is_any_registered_bcp47_tag() {
    each_backend(|app| async move {
        let customer = |locale: &str| json!({"customerType": "CONSUMER", "name": "Núria", "contact": {}, "preferredLocale": locale});
        let mut first = None;
        for tag in [
            "ca-ES-valencia",
            "zh-Hant-TW",
            "es-419",
            "sr-Latn-RS",
            "de-CH-1996",
            "en-US-u-ca-gregory",
            "i-klingon",
            "I-KLINGON",
            "x-whatever",
            "sgn-BE-FR",
            "sv-XA",
        ] {
            let r = app.call("POST", "/customers", Some(customer(tag))).await;
            assert_eq!(r.status, 201, "{tag}: {:#}", r.body);
            assert_eq!(r.body["preferredLocale"], tag, "kept as given");
            first.get_or_insert(r.body["customerId"].as_str().unwrap().to_string());
        }
        let id = first.unwrap();
        let long = format!("en-US-x-{}", ["abcdefgh"; 7].join("-"));
        for (tag, code) in [
            ("sv-QQQ", "invalid_locale"),
            ("jqq-SE", "invalid_locale"),
            ("sv-Abcd-SE", "invalid_locale"),
            ("de-DE-1996-1996", "invalid_locale"),
            ("en-US-US", "invalid_format"),
            ("not a locale!", "invalid_format"),
            (long.as_str(), "too_long"),
        ] {
            let r = app.call("POST", "/customers", Some(customer(tag))).await;
            r.assert_error(400, "validation_failed");
            assert!(r.details().contains(&("preferredLocale".to_string(), code.to_string())), "{tag}: {:?}", r.details());
            let r = app.call("PUT", &format!("/customers/{id}"), Some(json!({"preferredLocale": tag}))).await;
            r.assert_error(400, "validation_failed");
            assert!(r.details().contains(&("preferredLocale".to_string(), code.to_string())), "{tag}: {:?}", r.details());
        }
        let r = app.call("GET", &format!("/customers/{id}"), None).await;
        assert_eq!(r.body["preferredLocale"], "ca-ES-valencia", "a refused update changed nothing");
        let r = app.call("PUT", &format!("/customers/{id}"), Some(json!({"preferredLocale": "sv-SE"}))).await;
        assert_eq!((r.status, r.body["preferredLocale"].as_str()), (200, Some("sv-SE")), "{:#}", r.body);
        app
    })
    .await;
}
