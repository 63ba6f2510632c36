//! The store under the API: group commit (SQLite's writers share one batch
//! transaction, each in its own savepoint), an idempotent request's scope
//! (its work is committed only together with its answer), and coalesced
//! reads (concurrent lookups by id share one query).

use crate::harness::each_backend;
use serde_json::json;
use std::sync::Arc;
use switchboard::store::{CustomerRow, KeyHeld, KeyTimes, Scope, Store, StoredAnswer};
use uuid::Uuid;

fn customer(org: Uuid, id: Uuid, name: &str) -> CustomerRow {
    let now = chrono::Utc::now();
    CustomerRow {
        id,
        org,
        customer_type: serde_json::from_value(json!("CONSUMER")).unwrap(),
        name: name.into(),
        identity: None,
        preferred_locale: "en-US".into(),
        human_readable_id: format!("CU-{}", &id.simple().to_string()[..8].to_uppercase()),
        reference_id: None,
        contact: serde_json::from_value(json!({"email": format!("{name}@example.com")})).unwrap(),
        billing: None,
        shipping: None,
        contact_person_user_id: None,
        metadata: None,
        created_at: now,
        updated_at: now,
    }
}

/// A customer inserted and committed on its own.
async fn insert_committed(store: &Store, row: &CustomerRow) {
    let mut tx = store.begin().await.unwrap();
    Store::insert_customer(&mut tx, row).await.unwrap();
    tx.commit().await.unwrap();
}

async fn exists(store: &Store, org: Uuid, id: Uuid) -> bool {
    store.customer(org, &switchboard::store::IdOrRef::Id(id)).await.unwrap().is_some()
}

/// Many writers at once: each one's commit returns after its work is
/// committed; one that fails (a unique violation) or gives up (dropped
/// without committing) leaves nothing, and takes nothing of the others'
/// with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_commit_alone_or_together_and_a_failed_one_changes_nothing() {
    each_backend(|app| async move {
        let taken = Uuid::new_v4();
        insert_committed(&app.store, &customer(app.org, taken, "first")).await;
        let tasks: Vec<_> = (0..60)
            .map(|i| {
                let (store, org) = (app.store.clone(), app.org);
                tokio::spawn(async move {
                    // every third reuses a taken id, every fifth gives up
                    let id = if i % 3 == 0 { taken } else { Uuid::new_v4() };
                    let mut tx = store.begin().await.unwrap();
                    // on SQLite a statement only written goes with the
                    // commit, so either may report the clash
                    let inserted = Store::insert_customer(&mut tx, &customer(org, id, &format!("w{i}"))).await;
                    let acknowledged = match inserted {
                        Err(_) => false,
                        Ok(()) if i % 5 == 0 => false,
                        Ok(()) => tx.commit().await.is_ok(),
                    };
                    (id, acknowledged)
                })
            })
            .collect();
        let mut committed = 0;
        for task in tasks {
            let (id, acknowledged) = task.await.unwrap();
            if id == taken {
                assert!(!acknowledged, "a duplicate id never commits");
                continue;
            }
            // an acknowledged write is visible at once; a dropped one never
            assert_eq!(exists(&app.store, app.org, id).await, acknowledged);
            committed += usize::from(acknowledged);
        }
        assert_eq!(committed, (0..60).filter(|i| i % 3 != 0 && i % 5 != 0).count());
        let first = app.store.customer(app.org, &switchboard::store::IdOrRef::Id(taken)).await.unwrap().unwrap();
        assert_eq!(first.name, "first", "the failed writers left the row they clashed with alone");
        app
    })
    .await;
}

/// In an idempotent request's scope a commit parks the transaction: the
/// work is not committed until the answer joins it, so a request that
/// dies before its answer is stored leaves nothing (the scope dropped is
/// that death), and one that finishes commits both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_write_commits_only_with_its_answer() {
    each_backend(|app| async move {
        let (died, finished) = (Uuid::new_v4(), Uuid::new_v4());
        for (id, finish) in [(died, false), (finished, true)] {
            let scope = Arc::new(Scope::default());
            let store = app.store.scoped(scope.clone());
            let mut tx = store.begin().await.unwrap();
            Store::insert_customer(&mut tx, &customer(app.org, id, "scoped")).await.unwrap();
            tx.commit().await.unwrap();
            assert!(!exists(&app.store, app.org, id).await, "parked, not committed");
            let parked = scope.take().expect("the work's transaction is parked");
            if finish {
                parked.commit().await.unwrap();
            }
        }
        assert!(!exists(&app.store, app.org, died).await);
        assert!(exists(&app.store, app.org, finished).await);
        // the writer connection is free again: a plain write goes through
        app.store.create_organisation("after", false, chrono::Utc::now()).await.unwrap();
        app
    })
    .await;
}

/// Two requests with one idempotency key both ran their work: the one
/// that records the key second fails on the key, and its work, in the same
/// transaction, rolls back with it. An expired key is recorded over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_second_answer_of_a_key_rolls_its_work_back() {
    each_backend(|app| async move {
        let now = chrono::Utc::now();
        let times = KeyTimes { now, expired_before: now - chrono::Duration::hours(24) };
        let answer = |body: &str| StoredAnswer { status: 201, headers: vec![], body: body.into(), secret: false };
        let mut ids = vec![];
        let mut outcomes = vec![];
        for (name, times) in [("first", &times), ("second", &times)] {
            let id = Uuid::new_v4();
            let mut tx = app.store.begin().await.unwrap();
            Store::insert_customer(&mut tx, &customer(app.org, id, name)).await.unwrap();
            let recorded = match app.store.idempotency_record(&mut tx, app.org, "k", "fp", times, &answer(name), false).await {
                Ok(()) => tx.commit().await,
                Err(e) => Err(e),
            };
            ids.push(id);
            outcomes.push(recorded);
        }
        assert!(outcomes[0].is_ok());
        assert!(outcomes[1].as_ref().unwrap_err().is_idempotency_key_taken(), "{:?}", outcomes[1]);
        assert!(exists(&app.store, app.org, ids[0]).await);
        assert!(!exists(&app.store, app.org, ids[1]).await, "the second work rolled back");
        let held = app.store.idempotency_answer(app.org, "k", times.expired_before).await.unwrap().answer().unwrap();
        assert_eq!((held.0.as_str(), held.1.body.as_str()), ("fp", "first"));

        // a day later the key has expired: a new request records over it
        let later = KeyTimes { now: now + chrono::Duration::hours(25), expired_before: now + chrono::Duration::hours(1) };
        let held = app.store.idempotency_answer(app.org, "k", later.expired_before).await.unwrap();
        assert!(matches!(held, KeyHeld::Expired), "{held:?}");
        let mut tx = app.store.begin().await.unwrap();
        app.store.idempotency_record(&mut tx, app.org, "k", "fp2", &later, &answer("third"), true).await.unwrap();
        tx.commit().await.unwrap();
        let held = app.store.idempotency_answer(app.org, "k", later.expired_before).await.unwrap().answer().unwrap();
        assert_eq!((held.0.as_str(), held.1.body.as_str()), ("fp2", "third"));
        app
    })
    .await;
}

/// A clash in a transaction rolls all of it back, whether the statement
/// reports it or the commit that sends it does (statements only written
/// travel with the commit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clash_rolls_back_the_whole_transaction_wherever_it_is_reported() {
    each_backend(|app| async move {
        let (fresh, taken) = (Uuid::new_v4(), Uuid::new_v4());
        insert_committed(&app.store, &customer(app.org, taken, "taken")).await;

        let mut tx = app.store.begin().await.unwrap();
        Store::insert_customer(&mut tx, &customer(app.org, fresh, "fresh")).await.unwrap();
        let outcome = match Store::insert_customer(&mut tx, &customer(app.org, taken, "clash")).await {
            Ok(()) => tx.commit().await,
            Err(e) => Err(e),
        };
        assert!(outcome.unwrap_err().is_concurrent_conflict());
        assert!(!exists(&app.store, app.org, fresh).await, "nothing of the failed transaction stands");
        // the writer goes on for others
        app.store.create_organisation("after", false, chrono::Utc::now()).await.unwrap();
        app
    })
    .await;
}

/// Values that could end a literal (quotes, backslashes, a `$1`, a
/// semicolon) are stored as given: on PostgreSQL the statements a
/// transaction only writes carry their values written into the text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_that_look_like_sql_are_stored_as_given() {
    each_backend(|app| async move {
        let id = Uuid::new_v4();
        let name = "O'Brien \\' $1 \"x\"; DROP TABLE customers; -- ünï €";
        let mut row = customer(app.org, id, "odd");
        row.name = name.into();
        row.metadata = Some(serde_json::from_value(json!({"path": "C:\\dir\\", "quote": "'", "nul-free": "\u{1F4DE} E'\\\\x00'"})).unwrap());
        insert_committed(&app.store, &row).await;
        let stored = app.store.customer(app.org, &switchboard::store::IdOrRef::Id(id)).await.unwrap().unwrap();
        assert_eq!(stored.name, name);
        assert_eq!(stored.metadata, row.metadata);
        app
    })
    .await;
}

/// Transactions that fail or are given up, many more than the pool has
/// connections, leave no connection inside a transaction: the writes and
/// reads after them all succeed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_transactions_leave_every_connection_clean() {
    each_backend(|app| async move {
        let taken = Uuid::new_v4();
        insert_committed(&app.store, &customer(app.org, taken, "taken")).await;
        let rates = json!({"standard": 25});
        for i in 0..40 {
            let mut tx = app.store.begin().await.unwrap();
            match i % 3 {
                // a read sends the clash before it
                0 => {
                    Store::insert_customer(&mut tx, &customer(app.org, taken, &format!("clash{i}"))).await.unwrap();
                    assert!(Store::set_tax_rates(&mut tx, app.org, "SE", &rates).await.is_err());
                }
                1 => {
                    Store::insert_customer(&mut tx, &customer(app.org, taken, &format!("clash{i}"))).await.unwrap();
                    assert!(tx.commit().await.unwrap_err().is_concurrent_conflict());
                }
                // begun and written, then given up
                _ => {
                    Store::set_tax_rates(&mut tx, app.org, "SE", &rates).await.unwrap();
                    drop(tx);
                }
            }
        }
        for i in 0..40 {
            let id = Uuid::new_v4();
            insert_committed(&app.store, &customer(app.org, id, &format!("after{i}"))).await;
            assert!(exists(&app.store, app.org, id).await);
        }
        assert_eq!(app.store.tax_rates(app.org, "SE").await.unwrap(), None, "no transaction given up stands");
        app
    })
    .await;
}

/// A transaction of thousands of statements (on SQLite sent as one text,
/// its parameters numbered past SQLite's limit for one statement) commits
/// whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_transaction_commits_whole() {
    each_backend(|app| async move {
        // 16 parameters each: 48,000 in all
        let ids: Vec<Uuid> = (0..3000).map(|_| Uuid::new_v4()).collect();
        let mut tx = app.store.begin().await.unwrap();
        for (i, id) in ids.iter().enumerate() {
            Store::insert_customer(&mut tx, &customer(app.org, *id, &format!("bulk{i}"))).await.unwrap();
        }
        tx.commit().await.unwrap();
        for id in [ids[0], ids[1500], ids[2999]] {
            assert!(exists(&app.store, app.org, id).await);
        }
        app
    })
    .await;
}

/// Lookups by id running at once share queries: each still gets its own
/// customer, never one of another organisation, and a missing one is None.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_lookups_by_id_each_get_their_own_customer() {
    each_backend(|app| async move {
        let other = app.store.create_organisation("Other", false, chrono::Utc::now()).await.unwrap();
        let mut ids = vec![];
        for (i, org) in [app.org, other].into_iter().cycle().take(20).enumerate() {
            let id = Uuid::new_v4();
            insert_committed(&app.store, &customer(org, id, &format!("c{i}"))).await;
            ids.push((org, id, format!("c{i}")));
        }
        let lookups: Vec<_> = (0..200)
            .map(|n| {
                let store = app.store.clone();
                let (org, id, name) = ids[n % ids.len()].clone();
                // every third asks in the wrong organisation
                let (asked, expect) = if n % 3 == 0 { (if org == other { app.org } else { other }, None) } else { (org, Some(name)) };
                tokio::spawn(async move {
                    let found = store.customer_with_users(asked, &switchboard::store::IdOrRef::Id(id)).await.unwrap();
                    assert_eq!(found.map(|(c, _)| c.name), expect);
                })
            })
            .collect();
        for l in lookups {
            l.await.unwrap();
        }
        app
    })
    .await;
}

/// `--sqlite-synchronous full`: every SQLite connection syncs each commit
/// (2 is FULL; NORMAL, the default, is 1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_synchronous_is_a_setting() {
    use sqlx::Row;
    use switchboard::store::Synchronous;
    for (sync, expect) in [(Synchronous::Normal, 1), (Synchronous::Full, 2)] {
        let file = std::env::temp_dir().join(format!("switchboard-sync-{}.db", Uuid::new_v4()));
        let store = Store::connect_with(&format!("sqlite://{}", file.display()), sync).await.unwrap();
        let row = sqlx::query("PRAGMA synchronous").fetch_one(store.pool()).await.unwrap();
        assert_eq!(row.try_get::<i64, _>(0).unwrap(), expect);
        store.create_organisation("durable", false, chrono::Utc::now()).await.unwrap();
        store.close().await;
        let _ = std::fs::remove_file(&file);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writers_cancelled_together_leave_no_batch_open() {
    each_backend(|app| async move {
        let (store, org) = (app.store.clone(), app.org);
        // one writer holds SQLite's writing connection, another is queued
        // for it; both are cancelled, as a server's stopped workers are
        let (holding, held) = tokio::sync::oneshot::channel();
        let holder = tokio::spawn({
            let store = store.clone();
            async move {
                let mut tx = store.begin().await.unwrap();
                Store::porting_in(&mut tx, org, Uuid::new_v4()).await.unwrap();
                holding.send(()).unwrap();
                std::future::pending::<()>().await;
            }
        });
        held.await.unwrap();
        let queued = tokio::spawn({
            let store = store.clone();
            async move {
                let mut tx = store.begin().await.unwrap();
                Store::porting_in(&mut tx, org, Uuid::new_v4()).await.unwrap();
            }
        });
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        holder.abort();
        let _ = holder.await;
        queued.abort();
        let _ = queued.await;
        // the batch they left is committed: a write beside the group (an
        // operator's command, another process) is not locked out
        assert!(store.set_dunning_days(org, 0, 0).await.unwrap());
        app
    })
    .await;
}

/// PostgreSQL's write path writes values into statements as literals: a server whose connections would read them otherwise
/// (`standard_conforming_strings` off) is refused at connect, naming the setting. (The client encoding is checked too, but sqlx asks for UTF-8
/// at every connection itself, whatever the URL's options say.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgresql_that_would_read_literals_otherwise_is_refused() {
    if std::env::var("SWITCHBOARD_TEST_POSTGRES").is_err() {
        eprintln!("skipped: SWITCHBOARD_TEST_POSTGRES holds no PostgreSQL URL");
        return;
    }
    let db = crate::databases::TestDatabase::new(crate::harness::Backend::Postgres).await;
    let sep = if db.url.contains('?') { '&' } else { '?' };
    for (option, setting) in [("standard_conforming_strings%3Doff", "standard_conforming_strings")] {
        let url = format!("{}{sep}options=-c%20{option}", db.url);
        let refused = Store::connect(&url).await.err().map(|e| format!("{e:#}")).unwrap_or_default();
        assert!(refused.contains(setting), "a connection with {option} was taken: {refused:?}");
    }
    assert!(Store::connect(&db.url).await.is_ok(), "the test database itself");
    db.remove().await;
}
