//! Keyset pagination: stable under inserts, null cursor at the end, bad input is 400.

use crate::harness::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_stay_correct_when_rows_arrive_between_them() {
    each_backend(|app| async move {
        let create = |n: usize| {
            let app = &app;
            async move {
                let r = app.call("POST", "/customers", Some(json!({"customerType": "CONSUMER", "name": format!("C{n}"), "contact": {}}))).await;
                assert_eq!(r.status, 201);
            }
        };
        for n in 0..5 {
            create(n).await;
        }
        let client = app.bullfinch();
        let two = std::num::NonZeroU32::new(2);
        let p1 = client.customer_list(None, None, None, two).await.unwrap().into_inner();
        let names = |l: &bullfinch::types::CustomerList| l.items.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&p1), ["C0", "C1"]);
        create(5).await; // arrives between pages
        let cursor = p1.pagination.next_cursor.clone().unwrap().parse().unwrap();
        let p2 = client.customer_list(Some(&cursor), None, None, two).await.unwrap().into_inner();
        assert_eq!(names(&p2), ["C2", "C3"]);
        let cursor = p2.pagination.next_cursor.clone().unwrap().parse().unwrap();
        let p3 = client.customer_list(Some(&cursor), None, None, std::num::NonZeroU32::new(10)).await.unwrap().into_inner();
        assert_eq!(names(&p3), ["C4", "C5"]);
        assert_eq!(p3.pagination.next_cursor, None);
        let all = app.call("GET", "/customers", None).await;
        assert_eq!(all.body["items"].as_array().unwrap().len(), 6, "default limit covers all");
        assert!(all.body["pagination"]["nextCursor"].is_null());
        let exact = app.call("GET", "/customers?limit=6", None).await;
        assert!(exact.body["pagination"]["nextCursor"].is_null(), "no empty last page");
        for bad in ["limit=0", "limit=1001", "limit=-1", "limit=ten", "limit=1&limit=2"] {
            app.call("GET", &format!("/customers?{bad}"), None).await.assert_error(400, "validation_failed");
        }
        assert_eq!(app.call("GET", "/customers?limit=1000", None).await.status, 200);
        for bad in ["nonsense", "djE6LTE", "%00"] {
            app.call("GET", &format!("/users?cursor={bad}"), None).await.assert_error(400, "invalid_cursor");
        }
        app
    })
    .await;
}
