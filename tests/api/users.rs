//! Users: created for a customer with a role, reflected on both sides.

use crate::harness::*;
use serde_json::json;

async fn customer(app: &TestApp, reference: &str) -> String {
    let r = app
        .call("POST", "/customers", Some(json!({"customerType": "BUSINESS", "name": format!("Customer {reference}"), "referenceId": reference, "contact": {}})))
        .await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    r.body["customerId"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_view_update_and_roles() {
    each_backend(|app| async move {
        let acme = customer(&app, "acme").await;
        let client = app.bullfinch();
        let req: bullfinch::types::CreateUserRequest = serde_json::from_value(json!({
            "name": "Anna Svensson", "email": "Anna@Acme.example", "msisdn": "+46701234567", "role": "ADMIN",
            "customerId": "rid_acme", "referenceId": "u-1", "identity": "19800101-1234", "metadata": {"team": "ops"}
        }))
        .unwrap();
        let created = client.user_create(None, &req).await.unwrap();
        assert_eq!(created.status().as_u16(), 201);
        let u = created.into_inner();
        assert_eq!(u.customers.len(), 1);
        assert_eq!(u.customers[0].customer_id.to_string(), acme);
        assert_eq!(u.customers[0].role, bullfinch::types::CustomerRole::Admin);

        // a MEMBER by default
        let r = app.call("POST", "/users", Some(json!({"name": "Bo", "email": "bo@acme.example", "customerId": acme}))).await;
        assert_eq!(r.body["customers"][0]["role"], "MEMBER");

        let c = app.call("GET", "/customers/rid_acme", None).await;
        let users: Vec<(&str, &str)> = c.body["users"].as_array().unwrap().iter().map(|u| (u["name"].as_str().unwrap(), u["role"].as_str().unwrap())).collect();
        assert_eq!(users, [("Anna Svensson", "ADMIN"), ("Bo", "MEMBER")]);
        // the list shows the same users, in the same order, and none for
        // a customer without users (a page is one query, users joined)
        customer(&app, "initech").await;
        let listed = app.call("GET", "/customers", None).await;
        let users: Vec<(&str, Vec<&str>)> = listed.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["name"].as_str().unwrap(), c["users"].as_array().into_iter().flatten().map(|u| u["name"].as_str().unwrap()).collect()))
            .collect();
        assert_eq!(users, [("Customer acme", vec!["Anna Svensson", "Bo"]), ("Customer initech", vec![])]);

        let viewed = client.user_view(&"rid_u-1".parse().unwrap()).await.unwrap().into_inner();
        assert_eq!(viewed.user_id, u.user_id);
        let update: bullfinch::types::UpdateUserRequest = serde_json::from_value(json!({"name": "Anna Berg"})).unwrap();
        let updated = client.user_update(&u.user_id.to_string().parse().unwrap(), &update).await.unwrap().into_inner();
        assert_eq!(updated.name, "Anna Berg");
        assert_eq!(updated.msisdn.as_ref().map(|s| s.as_str()), Some("+46701234567"));
        assert_eq!(updated.customers.len(), 1);

        // the contact person must act for the customer
        let r = app.call("PUT", "/customers/rid_acme", Some(json!({"contactPersonUserId": "rid_u-1"}))).await;
        assert_eq!(r.body["contactPerson"]["name"], "Anna Berg", "{:#}", r.body);
        let elsewhere = customer(&app, "globex").await;
        app.call("PUT", &format!("/customers/{elsewhere}"), Some(json!({"contactPersonUserId": "rid_u-1"}))).await.assert_error(404, "user_not_found");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conflicts_not_found_and_validation() {
    each_backend(|app| async move {
        let acme = customer(&app, "acme").await;
        let first = json!({"name": "Anna", "email": "anna@acme.example", "customerId": acme, "referenceId": "u-1"});
        assert_eq!(app.call("POST", "/users", Some(first)).await.status, 201);
        let r = app.call("POST", "/users", Some(json!({"name": "Anna 2", "email": "ANNA@acme.example", "customerId": acme}))).await;
        r.assert_error(409, "email_taken");
        app.call("POST", "/users", Some(json!({"name": "Bo", "email": "bo@acme.example", "customerId": acme, "referenceId": "u-1"})))
            .await
            .assert_error(409, "reference_id_taken");
        app.call("POST", "/users", Some(json!({"name": "Bo", "email": "bo@acme.example", "customerId": "rid_nobody"})))
            .await
            .assert_error(404, "customer_not_found");
        let bo = app.call("POST", "/users", Some(json!({"name": "Bo", "email": "bo@acme.example", "customerId": acme}))).await;
        let bo_id = bo.body["userId"].as_str().unwrap().to_string();
        app.call("PUT", &format!("/users/{bo_id}"), Some(json!({"email": "anna@acme.example"}))).await.assert_error(409, "email_taken");
        app.call("PUT", "/users/rid_ghost", Some(json!({"name": "X"}))).await.assert_error(404, "user_not_found");
        app.call("GET", &format!("/users/{}", uuid::Uuid::new_v4()), None).await.assert_error(404, "user_not_found");
        let r = app.call("POST", "/users", Some(json!({"name": "", "email": "x", "msisdn": "12", "role": "OWNER"}))).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(
            r.details(),
            [("customerId", "required"), ("email", "invalid_email"), ("msisdn", "invalid_format"), ("name", "too_short"), ("role", "invalid_value")]
                .map(|(a, b)| (a.to_string(), b.to_string()))
        );
        app.call("PUT", &format!("/users/{bo_id}"), Some(json!({"msisdn": "+999999"}))).await.assert_error(400, "validation_failed");
        // another organisation cannot see or change our users
        let (_, other) = app.other_org().await;
        let r = app.call_as(Some(&other), "GET", &format!("/users/{bo_id}"), None, &[]).await;
        r.assert_error(404, "user_not_found");
        let r = app.call_as(Some(&other), "PUT", &format!("/users/{bo_id}"), Some(json!({"name": "Hacked"})), &[]).await;
        r.assert_error(404, "user_not_found");
        let r = app.call_as(Some(&other), "GET", "/users", None, &[]).await;
        assert_eq!(r.body["items"].as_array().unwrap().len(), 0);
        assert_eq!(app.call("GET", &format!("/users/{bo_id}"), None).await.body["name"], "Bo");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_filters_by_text_and_customers() {
    each_backend(|app| async move {
        let acme = customer(&app, "acme").await;
        let globex = customer(&app, "globex").await;
        customer(&app, "empty").await;
        for (name, email, c) in [("Anna", "anna@acme.example", &acme), ("Bo", "bo@acme.example", &acme), ("Hank", "hank@globex.example", &globex)] {
            assert_eq!(app.call("POST", "/users", Some(json!({"name": name, "email": email, "customerId": c}))).await.status, 201);
        }
        let client = app.bullfinch();
        let names = |l: bullfinch::types::UserList| l.items.into_iter().map(|u| u.name).collect::<Vec<_>>();
        let ids = vec!["rid_globex".parse().unwrap(), acme.parse().unwrap()];
        let both = client.user_list(None, Some(&ids), None, None).await.unwrap().into_inner();
        assert_eq!(names(both), ["Anna", "Bo", "Hank"]);
        let one = vec!["rid_globex".parse().unwrap()];
        assert_eq!(names(client.user_list(None, Some(&one), None, None).await.unwrap().into_inner()), ["Hank"]);
        let none = vec!["rid_empty".parse().unwrap()];
        assert!(client.user_list(None, Some(&none), None, None).await.unwrap().into_inner().items.is_empty());
        let text = client.user_list(None, None, Some(&"ACME".parse().unwrap()), None).await.unwrap().into_inner();
        assert_eq!(names(text), ["Anna", "Bo"]);
        let by_name = client.user_list(None, None, Some(&"han".parse().unwrap()), None).await.unwrap().into_inner();
        assert_eq!(names(by_name), ["Hank"]);
        let unknown = vec!["rid_nobody".parse().unwrap()];
        let e = client.user_list(None, Some(&unknown), None, None).await.unwrap_err();
        assert_refused(&e, 404, "customer_not_found");
        app
    })
    .await;
}
