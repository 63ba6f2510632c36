//! Each test's database: a copy of one migrated once per run (SQLite: the
//! migrated file's bytes written anew; PostgreSQL: `CREATE DATABASE ...
//! TEMPLATE`), removed by a guard when the test ends, also when it fails.
//! (`tests/migrations.rs` still migrates from nothing.)

use crate::harness::Backend;
use std::path::PathBuf;
use switchboard::store::Store;
use tokio::sync::OnceCell;
use uuid::Uuid;

/// A test's own database, removed when this is dropped.
pub struct TestDatabase {
    pub url: String,
    place: Option<Place>,
}

enum Place {
    Sqlite(PathBuf),
    Postgres { admin: String, name: String },
}

impl TestDatabase {
    /// A migrated, empty database of `backend`, the test's alone.
    pub async fn new(backend: Backend) -> TestDatabase {
        match backend {
            Backend::Sqlite => {
                let file = std::env::temp_dir().join(format!("switchboard-test-{}.db", Uuid::new_v4().simple()));
                std::fs::write(&file, sqlite_template().await).expect("the test's database file");
                TestDatabase { url: sqlite_url(&file), place: Some(Place::Sqlite(file)) }
            }
            Backend::Postgres => {
                let admin = std::env::var("SWITCHBOARD_TEST_POSTGRES").expect("SWITCHBOARD_TEST_POSTGRES");
                let template = postgres_template(&admin).await;
                let name = format!("sb_test_{}_{}", owner(), Uuid::new_v4().simple());
                execute(&admin, &format!("CREATE DATABASE {name} TEMPLATE {template}")).await;
                TestDatabase { url: database_url(&admin, &name), place: Some(Place::Postgres { admin, name }) }
            }
        }
    }

    /// A database of `backend` holding what the SQL script `dump` writes
    /// (a fixture of an earlier release: `sqlite3 .dump`, `pg_dump
    /// --inserts`), not migrated by this release yet. psql's own commands
    /// in a dump (`\restrict`) are left out.
    pub async fn loaded(backend: Backend, dump: &str) -> TestDatabase {
        let script: String = dump.lines().filter(|l| !l.starts_with('\\')).map(|l| format!("{l}\n")).collect();
        let database = match backend {
            Backend::Sqlite => {
                let file = std::env::temp_dir().join(format!("switchboard-test-{}.db", Uuid::new_v4().simple()));
                // (an empty file is an empty database)
                std::fs::write(&file, b"").expect("the test's database file");
                TestDatabase { url: sqlite_url(&file), place: Some(Place::Sqlite(file)) }
            }
            Backend::Postgres => {
                let admin = std::env::var("SWITCHBOARD_TEST_POSTGRES").expect("SWITCHBOARD_TEST_POSTGRES");
                let name = format!("sb_test_{}_{}", owner(), Uuid::new_v4().simple());
                execute(&admin, &format!("CREATE DATABASE {name}")).await;
                TestDatabase { url: database_url(&admin, &name), place: Some(Place::Postgres { admin, name }) }
            }
        };
        let mut conn = connect(&database.url).await;
        sqlx::raw_sql(sqlx::AssertSqlSafe(script)).execute(&mut conn).await.expect("the dump loads");
        database
    }

    /// Removes the database now (the guard's work, awaited).
    pub async fn remove(mut self) {
        match self.place.take() {
            Some(Place::Postgres { admin, name }) => drop_postgres(&admin, &name).await,
            Some(Place::Sqlite(file)) => remove_sqlite(&file),
            None => {}
        }
    }
}

impl Drop for TestDatabase {
    /// A test that failed (or forgot `finish`) still leaves nothing behind.
    fn drop(&mut self) {
        match self.place.take() {
            Some(Place::Sqlite(file)) => remove_sqlite(&file),
            // on a thread of its own: this may run on a runtime's thread,
            // where another runtime cannot be entered
            Some(Place::Postgres { admin, name }) => {
                let _ = std::thread::spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
                    runtime.block_on(drop_postgres(&admin, &name));
                })
                .join();
            }
            None => {}
        }
    }
}

fn sqlite_url(file: &std::path::Path) -> String {
    format!("sqlite://{}", file.display())
}

fn remove_sqlite(file: &std::path::Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}

/// A migrated SQLite database, as the bytes of its file.
async fn sqlite_template() -> &'static [u8] {
    static TEMPLATE: OnceCell<Vec<u8>> = OnceCell::const_new();
    TEMPLATE
        .get_or_init(|| async {
            let dir = std::env::temp_dir();
            let id = Uuid::new_v4().simple();
            let (file, copy) = (dir.join(format!("switchboard-template-{id}.db")), dir.join(format!("switchboard-template-{id}-copy.db")));
            let store = Store::connect(&sqlite_url(&file)).await.expect("the template database");
            // one file holding everything, whatever the log still holds
            let into = format!("VACUUM INTO '{}'", copy.display());
            sqlx::query(sqlx::AssertSqlSafe(into)).execute(store.pool()).await.expect("the template copied");
            store.close().await;
            let bytes = std::fs::read(&copy).expect("the template's bytes");
            remove_sqlite(&file);
            remove_sqlite(&copy);
            bytes
        })
        .await
}

/// The name of a migrated PostgreSQL database of this run. Made once per
/// test process and left behind when it ends; those left by processes of
/// this machine that are gone (and any test database they left) are
/// dropped first.
async fn postgres_template(admin: &str) -> &'static str {
    static TEMPLATE: OnceCell<String> = OnceCell::const_new();
    TEMPLATE
        .get_or_init(|| async {
            drop_left_behind(admin).await;
            let name = format!("sb_template_{}_{}", owner(), &Uuid::new_v4().simple().to_string()[..8]);
            execute(admin, &format!("CREATE DATABASE {name}")).await;
            let store = Store::connect(&database_url(admin, &name)).await.expect("the template database");
            store.close().await;
            name
        })
        .await
}

/// Who makes a database: this machine (since it booted) and this process,
/// `BOOT_PID`, so that a run drops only what its own machine's finished
/// processes left, not the databases of a run on another machine sharing
/// the server.
fn owner() -> String {
    format!("{}_{}", boot(), std::process::id())
}

fn boot() -> String {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let id: String = id.chars().filter(char::is_ascii_hexdigit).take(8).collect();
    if id.is_empty() { "noboot".into() } else { id }
}

/// Drops the templates and test databases of this machine's test processes
/// no longer running (named `sb_template_BOOT_PID_...`, `sb_test_BOOT_PID_...`).
async fn drop_left_behind(admin: &str) {
    use sqlx::Row;
    let mut conn = connect(admin).await;
    let names: Vec<String> = sqlx::query("SELECT datname::text FROM pg_database WHERE datname LIKE 'sb\\_template\\_%' OR datname LIKE 'sb\\_test\\_%'")
        .fetch_all(&mut conn)
        .await
        .expect("the databases")
        .iter()
        .map(|r| r.get(0))
        .collect();
    let boot = boot();
    for name in names {
        let mut parts = name.trim_start_matches("sb_template_").trim_start_matches("sb_test_").split('_');
        let (made_on, pid) = (parts.next(), parts.next().and_then(|p| p.parse::<u32>().ok()));
        let gone = pid.is_some_and(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists());
        if made_on == Some(boot.as_str()) && gone {
            drop_postgres(admin, &name).await;
        }
    }
}

fn database_url(admin: &str, name: &str) -> String {
    let base = admin.rsplit_once('/').map(|(b, _)| b.to_string()).expect("a URL naming a database");
    format!("{base}/{name}")
}

async fn connect(url: &str) -> sqlx::AnyConnection {
    sqlx::any::install_default_drivers();
    <sqlx::AnyConnection as sqlx::Connection>::connect(url).await.expect("PostgreSQL reachable")
}

async fn execute(admin: &str, sql: &str) {
    let mut conn = connect(admin).await;
    sqlx::query(sqlx::AssertSqlSafe(sql.to_string())).execute(&mut conn).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
}

async fn drop_postgres(admin: &str, name: &str) {
    execute(admin, &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await;
}
