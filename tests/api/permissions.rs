//! Bearer plus key: every 401/403/404 case of the permission model. Users
//! see only the customers assigned to them (support users see all); MEMBER
//! reads, MANAGER changes the customer, ADMIN manages its users; support
//! users change nothing; a read-only key caps any user.

use crate::harness::*;
use serde_json::{Value, json};

/// Two customers, A and B, and a user per role; `token` logs each in.
struct World {
    a: String,
    b: String,
    member_a: String,
    manager_a: String,
    admin_a: String,
    admin_b: String,
    support: String,
    /// user ids, by the same names
    ids: std::collections::HashMap<&'static str, String>,
}

async fn world(app: &TestApp) -> World {
    let customer = |name: &'static str| async move {
        let r = app.call("POST", "/customers", Some(json!({"customerType": "BUSINESS", "name": name, "contact": {}}))).await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        r.body["customerId"].as_str().unwrap().to_string()
    };
    let a = customer("A AB").await;
    let b = customer("B AB").await;
    let mut ids = std::collections::HashMap::new();
    let mut tokens = vec![];
    for (name, customer, role) in
        [("member_a", &a, "MEMBER"), ("manager_a", &a, "MANAGER"), ("admin_a", &a, "ADMIN"), ("admin_b", &b, "ADMIN"), ("support", &b, "MEMBER")]
    {
        let email = format!("{name}@example.com");
        let r = app.call("POST", "/users", Some(json!({"name": name, "email": email, "customerId": customer, "role": role}))).await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        let id = r.body["userId"].as_str().unwrap().to_string();
        if name == "support" {
            switchboard::admin::user_support(&app.store, id.parse().unwrap(), true).await.unwrap();
        }
        ids.insert(name, id);
        tokens.push(app.login(&email, Some(&app.key)).await);
    }
    let [member_a, manager_a, admin_a, admin_b, support] = tokens.try_into().unwrap();
    World { a, b, member_a, manager_a, admin_a, admin_b, support, ids }
}

impl TestApp {
    /// A request with the app's key and `token`.
    async fn as_user(&self, token: &str, method: &str, path: &str, body: Option<Value>) -> Raw {
        self.call_as(Some(&self.key), method, path, body, &[("authorization", &format!("Bearer {token}"))]).await
    }
}

fn names(list: &Value) -> Vec<String> {
    let mut n: Vec<String> = list["items"].as_array().unwrap().iter().map(|i| i["name"].as_str().unwrap().to_string()).collect();
    n.sort();
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_see_only_their_customers() {
    each_backend(|app| async move {
        let w = world(&app).await;
        // lists show what the caller may see
        assert_eq!(names(&app.as_user(&w.member_a, "GET", "/customers", None).await.body), ["A AB"]);
        assert_eq!(names(&app.as_user(&w.admin_b, "GET", "/customers", None).await.body), ["B AB"]);
        assert_eq!(names(&app.as_user(&w.support, "GET", "/customers", None).await.body), ["A AB", "B AB"]);
        assert_eq!(names(&app.call("GET", "/customers", None).await.body), ["A AB", "B AB"]);
        let typed = app.bullfinch_as(&app.key, &w.member_a).customer_list(None, None, None, None).await.unwrap();
        assert_eq!(typed.into_inner().items.len(), 1);
        // an invisible customer is missing, by id and by every path to it
        assert_eq!(app.as_user(&w.member_a, "GET", &format!("/customers/{}", w.a), None).await.status, 200);
        app.as_user(&w.member_a, "GET", &format!("/customers/{}", w.b), None).await.assert_error(404, "customer_not_found");
        app.as_user(&w.member_a, "PUT", &format!("/customers/{}", w.b), Some(json!({"name": "X"}))).await.assert_error(404, "customer_not_found");
        app.as_user(&w.member_a, "GET", &format!("/users?customerId={}", w.b), None).await.assert_error(404, "customer_not_found");
        let body = json!({"name": "N", "email": "n@example.com", "customerId": w.b});
        app.as_user(&w.admin_a, "POST", "/users", Some(body)).await.assert_error(404, "customer_not_found");
        // users: those sharing a visible customer, each showing only visible customers
        let users = app.as_user(&w.member_a, "GET", "/users", None).await.body;
        assert_eq!(names(&users), ["admin_a", "manager_a", "member_a"]);
        let all = app.as_user(&w.support, "GET", "/users", None).await.body;
        assert_eq!(names(&all), ["admin_a", "admin_b", "manager_a", "member_a", "support"]);
        let admin_b = &w.ids["admin_b"];
        app.as_user(&w.member_a, "GET", &format!("/users/{admin_b}"), None).await.assert_error(404, "user_not_found");
        app.as_user(&w.member_a, "PUT", &format!("/users/{admin_b}"), Some(json!({"name": "X"}))).await.assert_error(404, "user_not_found");
        let me = app.as_user(&w.member_a, "GET", &format!("/users/{}", w.ids["member_a"]), None).await;
        assert_eq!(me.body["customers"].as_array().unwrap().len(), 1);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roles_decide_what_a_user_may_change() {
    each_backend(|app| async move {
        let w = world(&app).await;
        let a = format!("/customers/{}", w.a);
        // MEMBER reads, MANAGER changes the customer
        app.as_user(&w.member_a, "PUT", &a, Some(json!({"name": "By member"}))).await.assert_error(403, "insufficient_role");
        assert_eq!(app.as_user(&w.manager_a, "PUT", &a, Some(json!({"name": "A2 AB"}))).await.status, 200);
        assert_eq!(app.as_user(&w.admin_a, "PUT", &a, Some(json!({"name": "A AB"}))).await.status, 200);
        // a refused change changed nothing
        assert_eq!(app.call("GET", &a, None).await.body["name"], "A AB");
        // the referenceId (what `rid_` finds it by) is the key's alone to set
        app.as_user(&w.admin_a, "PUT", &a, Some(json!({"referenceId": "crm-a"}))).await.assert_error(403, "insufficient_role");
        assert!(app.call("GET", &a, None).await.body.get("referenceId").is_none(), "the refused change changed nothing");
        assert_eq!(app.call("PUT", &a, Some(json!({"referenceId": "crm-a"}))).await.status, 200);
        let same = app.as_user(&w.manager_a, "PUT", &a, Some(json!({"referenceId": "crm-a", "name": "A AB"}))).await;
        assert_eq!(same.status, 200, "naming the one it has is no change: {:#}", same.body);
        // only the organisation's key creates customers
        let c = json!({"customerType": "CONSUMER", "name": "New", "contact": {}});
        app.as_user(&w.admin_a, "POST", "/customers", Some(c)).await.assert_error(403, "insufficient_role");
        // ADMIN manages the customer's users; MANAGER does not
        let new_user = |email: &str| json!({"name": "New", "email": email, "customerId": w.a, "role": "MEMBER"});
        app.as_user(&w.manager_a, "POST", "/users", Some(new_user("x@example.com"))).await.assert_error(403, "insufficient_role");
        let created = app.as_user(&w.admin_a, "POST", "/users", Some(new_user("y@example.com"))).await;
        assert_eq!(created.status, 201, "{:#}", created.body);
        let manager = format!("/users/{}", w.ids["manager_a"]);
        app.as_user(&w.member_a, "PUT", &manager, Some(json!({"name": "X"}))).await.assert_error(403, "insufficient_role");
        app.as_user(&w.manager_a, "PUT", &format!("/users/{}", w.ids["admin_a"]), Some(json!({"name": "X"}))).await.assert_error(403, "insufficient_role");
        assert_eq!(app.as_user(&w.admin_a, "PUT", &manager, Some(json!({"name": "Manager A"}))).await.status, 200);
        // anyone changes their own profile
        let me = format!("/users/{}", w.ids["member_a"]);
        assert_eq!(app.as_user(&w.member_a, "PUT", &me, Some(json!({"msisdn": "+46701234567"}))).await.status, 200);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn support_users_read_everything_and_change_nothing() {
    each_backend(|app| async move {
        let w = world(&app).await;
        for path in [format!("/customers/{}", w.a), format!("/customers/{}", w.b), format!("/users/{}", w.ids["admin_a"])] {
            assert_eq!(app.as_user(&w.support, "GET", &path, None).await.status, 200, "{path}");
        }
        let writes = [
            ("PUT", format!("/customers/{}", w.b), json!({"name": "X"})),
            ("POST", "/customers".to_string(), json!({"customerType": "CONSUMER", "name": "X", "contact": {}})),
            ("POST", "/users".to_string(), json!({"name": "X", "email": "s@example.com", "customerId": w.b})),
            ("PUT", format!("/users/{}", w.ids["support"]), json!({"name": "X"})),
        ];
        for (method, path, body) in writes {
            app.as_user(&w.support, method, &path, Some(body)).await.assert_error(403, "support_user_read_only");
        }
        // no one but the organisation's key changes a support user: the ADMIN
        // of a customer the support user is linked to may not take over its
        // sign-in address (and with it the whole organisation's data)
        let support = format!("/users/{}", w.ids["support"]);
        let takeover = json!({"email": "attacker@example.com"});
        let r = app.as_user(&w.admin_b, "PUT", &support, Some(takeover.clone())).await;
        r.assert_error(403, "insufficient_role");
        assert!(r.body["message"].as_str().unwrap().contains("support user"), "{:#}", r.body);
        assert_eq!(app.call("GET", &support, None).await.body["email"], "support@example.com", "the refused change changed nothing");
        let renamed = app.call("PUT", &support, Some(json!({"name": "Support desk"}))).await;
        assert_eq!((renamed.status, &renamed.body["name"]), (200, &json!("Support desk")), "{:#}", renamed.body);
        // the flag can be taken away again; the user then sees only their customer
        switchboard::admin::user_support(&app.store, w.ids["support"].parse().unwrap(), false).await.unwrap();
        assert_eq!(names(&app.as_user(&w.support, "GET", "/customers", None).await.body), ["B AB"]);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_key_caps_the_user() {
    each_backend(|app| async move {
        let w = world(&app).await;
        let ro = app.new_key(app.org, None, true).await;
        let auth = format!("Bearer {}", w.admin_a);
        let r = app.call_as(Some(&ro), "PUT", &format!("/customers/{}", w.a), Some(json!({"name": "X"})), &[("authorization", &auth)]).await;
        r.assert_error(403, "read_only_api_key");
        // and still only what the user sees
        let r = app.call_as(Some(&ro), "GET", "/customers", None, &[("authorization", &auth)]).await;
        assert_eq!(names(&r.body), ["A AB"]);
        // a revoked key takes the token down with it
        let id = app.key_id(&ro).await;
        switchboard::admin::key_revoke(&app.store, &app.clock, id).await.unwrap();
        app.clock.advance(chrono::Duration::seconds(switchboard::keys::CACHE_TTL_SECONDS));
        let r = app.call_as(Some(&ro), "GET", "/customers", None, &[("authorization", &auth)]).await;
        r.assert_error(401, "invalid_api_key");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotency_key_belongs_to_the_user_who_used_it() {
    each_backend(|app| async move {
        let w = world(&app).await;
        let body = json!({"name": "Twice", "email": "twice@example.com", "customerId": w.a});
        let key = [("x-idempotency-key", "user-scoped-1")];
        let first = app.call_as(Some(&app.key), "POST", "/users", Some(body.clone()), &[key[0], ("authorization", &format!("Bearer {}", w.admin_a))]).await;
        assert_eq!(first.status, 201);
        // the same request, key and API key from the organisation itself is another caller
        let r = app.call_as(Some(&app.key), "POST", "/users", Some(body), &key).await;
        r.assert_error(409, "idempotency_key_mismatch");
        app
    })
    .await;
}
