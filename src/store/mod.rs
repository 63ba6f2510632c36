//! The SQL store: one `Store` over SQLite or PostgreSQL (sqlx `Any`), its
//! migrations, and one file of queries per resource. Only the store writes SQL.

mod catalog;
mod coalesce;
mod customers;
mod deliveries;
mod events;
mod group_commit;
mod holds;
mod idempotency;
mod invoices;
mod jobs;
mod keys;
mod licenses;
mod lifecycle;
mod login;
mod mail;
mod numbers;
mod orders;
mod organisations;
mod page;
mod page_attempts;
mod params;
mod payment_links;
mod payment_profile_sessions;
mod payment_sessions;
mod payments;
mod pg_tx;
mod port_in_secrets;
mod portings;
mod prepared;
mod redeliveries;
mod refresh_tokens;
mod reports;
mod sandbox_payments;
mod sealed;
pub mod settings;
mod sims;
mod sqlite_memory;
mod subscribers;
mod subscription_addons;
mod subscriptions;
mod tx;
mod usage;
mod users;
mod webhooks;

pub use catalog::{CatalogDoc, Change, Columns, Features, GroupDoc, Kind, OfferingDoc, OfferingFilter, OfferingRow, ProductDoc};
pub use customers::{Address, Billing, Contact, CustomerFilter, CustomerRow, IdOrRef, Link, Shipping};
pub use deliveries::{After, AttemptRow, DeliveryRow, DeliveryWork, Recorded, delivery_subject, parse_delivery_subject};
pub use events::{EventFilter, EventRow, LogPage, LogPosition};
pub use holds::Held;
pub use idempotency::{EXPIRY_SUBJECT, KeyHeld, KeyTimes, LIFETIME_HOURS as IDEMPOTENCY_LIFETIME_HOURS, StoredAnswer};
pub use invoices::{InvoiceFilter, InvoiceRow};
pub use jobs::{Claim, Job, JobKind, ORGANISATION_WORK};
pub use keys::{ApiKeyRecord, NewApiKey};
pub use login::{MAX_ATTEMPTS, NewChallenge, Redeemed};
pub use mail::{Mail, MailStatus};
pub use numbers::{Imported, LeaseRow, NewLease, NumberRow, NumberStatus};
pub use page_attempts::HostedPage;
pub use port_in_secrets::{SHOWN_FIELDS as PORT_IN_SHOWN_FIELDS, joined as port_in_joined, order_line as port_in_order_line, split as port_in_split};
pub use portings::PortingRow;
pub use redeliveries::Which;
pub use refresh_tokens::{NewRefresh, Refreshed};
pub use sandbox_payments::{SandboxCharge, SandboxMethod, SandboxRefund};
pub use sims::SimRow;

/// `sql` with each `$N` as `args[N - 1]` written as a PostgreSQL text
/// literal, as PostgreSQL's write path sends bound text (for the fuzz
/// target `sql_literal`; the store itself binds through `params::inline`).
#[doc(hidden)]
pub fn inline_texts(sql: &str, args: &[String]) -> Result<String> {
    let args: Vec<sqlx_core::any::AnyValueKind> = args.iter().map(|a| sqlx_core::any::AnyValueKind::Text(Arc::new(a.clone()))).collect();
    let mut out = String::new();
    params::inline(sql, &args, &mut out)?;
    Ok(out)
}
pub use licenses::{LicenseFilter, LicenseRow};
pub use orders::{OrderFilter, OrderRow};
pub use organisations::{ClockRow, OrganisationRow};
use page::ListQuery;
pub use page::{Cursor, Page, Period, limit_or_default};
pub use payment_links::{LinkFilter, LinkRow, ProfileRow};
pub use payment_profile_sessions::ProfileSessionRow;
pub use payment_sessions::SessionRow;
pub use payments::{ChargeRow, ChargedMethod, IntentFilter, IntentRow, RefundRow};
pub use reports::ReportRunRow;
pub use sealed::{Resealed, SecretsAtRest};
pub use subscription_addons::AddonRow;
pub use subscriptions::{Life, PendingOffering, SubscriptionFilter, SubscriptionRow, Terms};
pub use tx::{Scope, Tx};
pub use usage::{Amounts, PeriodUsage, UsageKind, UsageRecord};
pub use users::{UserFilter, UserGrants, UserRow, email_key};
pub use webhooks::{UNREADABLE as UNREADABLE_SECRET, WebhookEndpointRow};

use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Row};
use std::sync::{Arc, LazyLock};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The store handle: cheap to clone.
#[derive(Clone)]
pub struct Store {
    /// reads, and PostgreSQL's writes
    pool: AnyPool,
    backend: Backend,
    /// SQLite's one writing connection (see `tx`)
    group: Option<Arc<group_commit::Group>>,
    /// an idempotent request's writes park here (see `tx::Scope`)
    scope: Option<Arc<Scope>>,
    /// customers' views by id, concurrent ones in one query
    customers_by_id: customers::CustomersById,
    /// human-readable ids in use, concurrent checks in one query
    human_readable_ids: customers::HumanReadableIds,
    /// idempotency keys' answers, concurrent lookups in one query
    answers_by_key: idempotency::AnswersByKey,
    /// told when a transaction that recorded an event commits
    events_recorded: Arc<tokio::sync::Notify>,
    /// the server instance whose jobs claim through this handle (see
    /// `claiming_as`)
    claimer: Option<uuid::Uuid>,
    /// the master keys that seal secrets at rest (`sealed_with`)
    sealing: Arc<crate::sealing::Sealing>,
}

/// Refuses a PostgreSQL connection that would read the literals the write
/// path writes values as (`params::inline`) otherwise: checked on the
/// first connection, so the start names the setting, and on each new one.
async fn reads_literals_as_written(conn: &mut sqlx::AnyConnection) -> std::result::Result<(), sqlx::Error> {
    for (setting, wanted) in [("standard_conforming_strings", "on"), ("client_encoding", "UTF8")] {
        let (value,): (String,) = sqlx::query_as(sqlx::AssertSqlSafe(format!("SHOW {setting}"))).fetch_one(&mut *conn).await?;
        if !value.eq_ignore_ascii_case(wanted) {
            return Err(sqlx::Error::Configuration(format!("PostgreSQL's {setting} is {value}; Switchboard needs {wanted}").into()));
        }
    }
    Ok(())
}

/// migrations/, embedded by build.rs.
mod embedded {
    include!(concat!(env!("OUT_DIR"), "/migrations.rs"));
}

/// A migrator of embedded files, as sqlx's `migrate!` would make it: the
/// same checksums (of each file's text), so a database migrated by either
/// reads as up to date to the other.
fn migrator(files: &'static [(i64, &'static str, &'static str)]) -> sqlx::migrate::Migrator {
    let migrations = files
        .iter()
        .map(|&(version, name, sql)| {
            let no_tx = sql.starts_with("-- no-transaction");
            sqlx::migrate::Migration::new(version, name.into(), sqlx::migrate::MigrationType::Simple, sqlx::SqlStr::from_static(sql), no_tx)
        })
        .collect();
    sqlx::migrate::Migrator::with_migrations(migrations)
}

static MIGRATE_SQLITE: LazyLock<sqlx::migrate::Migrator> = LazyLock::new(|| migrator(embedded::SQLITE));
static MIGRATE_POSTGRES: LazyLock<sqlx::migrate::Migrator> = LazyLock::new(|| migrator(embedded::POSTGRES));

/// The newest migration this binary applies (SQLite's and PostgreSQL's
/// are numbered alike).
pub fn newest_migration() -> i64 {
    MIGRATE_SQLITE.iter().map(|m| m.version).max().unwrap_or(0)
}

impl Store {
    /// Copies a SQLite database, as of one commit, into the new file
    /// `path` while it is in use (`VACUUM INTO`).
    pub async fn backup_into(&self, path: &str) -> Result<()> {
        if self.backend != Backend::Sqlite {
            return Err(Error::Internal("VACUUM INTO is SQLite's".into()));
        }
        sqlx::query("VACUUM INTO $1").bind(path.to_string()).execute(&self.pool).await?;
        Ok(())
    }

    /// Connects and brings the schema up to date. `url` is `sqlite://FILE`
    /// (created when missing) or `postgres://...`.
    pub async fn connect(url: &str) -> anyhow::Result<Store> {
        Store::connect_with(url, Synchronous::Normal).await
    }

    /// `connect`, with SQLite's durability chosen (PostgreSQL's is the
    /// server's `synchronous_commit`).
    pub async fn connect_with(url: &str, sync: Synchronous) -> anyhow::Result<Store> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Backend::Postgres
        } else if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else {
            anyhow::bail!("unsupported database URL {}: use sqlite://FILE or postgres://...", crate::config::without_password(url));
        };
        let url = match backend {
            Backend::Sqlite if !url.contains('?') => format!("{url}?mode=rwc"),
            _ => url.to_string(),
        };
        let options = AnyPoolOptions::new().max_connections(match backend {
            // SQLite's readers, one per core up to four: each is a thread
            // of sqlx's with a page cache, a schema and prepared statements
            // of its own (3-4 MiB under load), and a reader runs on its
            // core until its query is done. On two cores two read as fast
            // as four did and take 6-8 MiB off the peak
            // (docs/performance.md, Memory). The writer is the group's
            // connection besides.
            Backend::Sqlite => std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 4) as u32,
            Backend::Postgres => 16,
        });
        let options = if backend == Backend::Sqlite {
            sqlite_memory::use_mimalloc();
            options.after_connect(move |conn, _| {
                Box::pin(async move {
                    sqlite_pragmas(conn, sync).await?;
                    // A reader's page cache is a second copy of pages the
                    // operating system caches already: 512 KiB rather than
                    // SQLite's 2 MiB holds an index's upper levels, and
                    // took 6 MiB off the server's peak over four
                    // readers, lists no slower (docs/performance.md,
                    // Memory). The writer keeps 2 MiB: a batch changes many
                    // pages, and would spill them to the log before it
                    // commits.
                    sqlx::query("PRAGMA cache_size = -512").execute(&mut *conn).await?;
                    Ok(())
                })
            })
        } else {
            // The migrations come first, on a connection of their own:
            // each pooled connection prepares the frequent writes as it
            // opens (`prepared`), against the tables as they now are.
            // (A pool: `Migrator::run` on a bare connection is not `Send`.)
            let migrating = AnyPoolOptions::new().max_connections(1).connect(&url).await?;
            reads_literals_as_written(&mut *migrating.acquire().await?).await?;
            MIGRATE_POSTGRES.run(&migrating).await?;
            migrating.close().await;
            // sqlx pings a connection as it goes back to the pool, and by
            // default again as it comes out: a round trip per use, paid on
            // the request's path. Without it a connection PostgreSQL closed
            // while it sat idle (a restart) fails the one request that
            // takes it, and is then dropped (issue 35: 0.56x to 0.87x the
            // baseline's idempotent POST, with the pending writes below).
            options.test_before_acquire(false).after_connect(|conn, _| {
                Box::pin(async move {
                    reads_literals_as_written(conn).await?;
                    sqlx::Executor::execute(&mut *conn, sqlx::raw_sql(sqlx::AssertSqlSafe(prepared::prepare_all()))).await?;
                    Ok(())
                })
            })
        };
        let pool = options.connect(&url).await?;
        let group = if backend == Backend::Sqlite {
            sqlx::query("PRAGMA journal_mode = WAL").execute(&pool).await?;
            MIGRATE_SQLITE.run(&pool).await?;
            Some(Arc::new(group_commit::Group::open(&url, sync, &pool).await?))
        } else {
            None
        };
        Ok(Store {
            customers_by_id: customers::customers_by_id(pool.clone()),
            human_readable_ids: customers::human_readable_ids(pool.clone()),
            answers_by_key: idempotency::answers_by_key(pool.clone()),
            pool,
            backend,
            group,
            scope: None,
            events_recorded: Arc::default(),
            claimer: None,
            sealing: Arc::default(),
        })
    }

    /// This store, its job claims marked as `instance`'s, so that the
    /// instance can release them all as it stops (`release_claims`).
    pub fn claiming_as(&self, instance: uuid::Uuid) -> Store {
        Store { claimer: Some(instance), ..self.clone() }
    }

    /// This store, sealing the secrets it writes and opening those it
    /// reads with `sealing`'s master keys (src/sealing.rs).
    pub fn sealed_with(self, sealing: Arc<crate::sealing::Sealing>) -> Store {
        Store { sealing, ..self }
    }

    /// The master keys of secrets at rest.
    pub fn sealing(&self) -> &crate::sealing::Sealing {
        &self.sealing
    }

    /// The newest migration applied to the database (0 for none).
    pub async fn applied_migration(&self) -> Result<i64> {
        let newest: Option<i64> = sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success").fetch_one(&self.pool).await?;
        Ok(newest.unwrap_or(0))
    }

    /// Told each time a transaction that recorded an event commits.
    pub fn events_recorded(&self) -> Arc<tokio::sync::Notify> {
        self.events_recorded.clone()
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// The database answers.
    pub async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    pub async fn close(&self) {
        if let Some(group) = &self.group {
            group.close().await;
        }
        self.pool.close().await;
    }
}

/// When SQLite syncs to disk (docs/durability.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Synchronous {
    /// in WAL mode, at checkpoints: a commit survives a crash of the
    /// process, not a loss of power or of the operating system
    Normal,
    /// at every commit: a commit survives a loss of power too
    Full,
}

/// Every SQLite connection: foreign keys enforced, and `sync`.
async fn sqlite_pragmas(conn: &mut sqlx::AnyConnection, sync: Synchronous) -> std::result::Result<(), sqlx::Error> {
    sqlx::query("PRAGMA foreign_keys = ON").execute(&mut *conn).await?;
    let pragma = match sync {
        Synchronous::Normal => "PRAGMA synchronous = NORMAL",
        Synchronous::Full => "PRAGMA synchronous = FULL",
    };
    sqlx::query(pragma).execute(&mut *conn).await?;
    Ok(())
}

/// `$first, $first+1, ...`: the placeholders of an `IN (...)` list of
/// `count` values.
pub(in crate::store) fn placeholders(first: usize, count: usize) -> String {
    (first..first + count).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ")
}

/// The rows of a query of `org` (`$1`) over a list of `values`: `sql` is
/// given the list's placeholders (`$2, $3, ...`) to put in its `IN (...)`.
pub(in crate::store) async fn fetch_in<'c>(
    exec: impl sqlx::Executor<'c, Database = sqlx::Any>,
    org: uuid::Uuid,
    values: impl IntoIterator<Item = String>,
    sql: impl FnOnce(&str) -> String,
) -> Result<Vec<AnyRow>> {
    let values: Vec<String> = values.into_iter().collect();
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql(&placeholders(2, values.len())))).bind(org.to_string());
    for v in values {
        q = q.bind(v);
    }
    Ok(q.fetch_all(exec).await?)
}

/// Timestamps are stored as fixed-width RFC 3339 text in UTC.
pub(in crate::store) fn ts(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

pub(in crate::store) fn parse_ts(s: &str) -> Result<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc)).map_err(|e| Error::Internal(format!("stored timestamp {s:?}: {e}")))
}

/// A timestamp column that may be NULL.
pub(in crate::store) fn opt_ts(r: &AnyRow, col: &str) -> Result<Option<DateTime<Utc>>> {
    r.try_get::<Option<String>, _>(col)?.as_deref().map(parse_ts).transpose()
}

/// An id column that may be NULL.
pub(in crate::store) fn opt_uuid(r: &AnyRow, col: &str) -> Result<Option<uuid::Uuid>> {
    r.try_get::<Option<String>, _>(col)?.as_deref().map(parse_uuid).transpose()
}

pub(in crate::store) fn parse_uuid(s: &str) -> Result<uuid::Uuid> {
    uuid::Uuid::parse_str(s).map_err(|e| Error::Internal(format!("stored id {s:?}: {e}")))
}

/// A stateful resource's table: one whose rows have an `org_id` and a
/// `status`.
#[derive(Debug, Clone, Copy)]
pub enum Stateful {
    Orders,
    Subscriptions,
    PaymentLinks,
    PaymentProfileSessions,
    Invoices,
}

impl Store {
    /// The status row `id` of `table` stands in as `tx` sees it: on
    /// SQLite's shared writer that includes what the writers before it in
    /// its batch changed and have not yet committed, which no read from the
    /// pool would show. A guarded write that missed asks it which move beat
    /// it.
    pub async fn status_in<S: std::str::FromStr>(tx: &mut Tx, table: Stateful, org: uuid::Uuid, id: uuid::Uuid) -> Result<Option<S>> {
        let sql = match table {
            Stateful::Orders => "SELECT status FROM orders WHERE org_id = $1 AND id = $2",
            Stateful::Subscriptions => "SELECT status FROM subscriptions WHERE org_id = $1 AND id = $2",
            Stateful::PaymentLinks => "SELECT status FROM payment_links WHERE org_id = $1 AND id = $2",
            Stateful::PaymentProfileSessions => "SELECT status FROM payment_profile_sessions WHERE org_id = $1 AND id = $2",
            Stateful::Invoices => "SELECT status FROM invoices WHERE org_id = $1 AND id = $2",
        };
        let row = sqlx::query(sql).bind(org.to_string()).bind(id.to_string()).fetch_optional(tx.conn().await?).await?;
        row.as_ref().map(|r| state_col(r, "status")).transpose()
    }
}

/// A state column, as its enum (only valid names are ever stored, so
/// anything else is a fault of the stored data).
pub(in crate::store) fn state_col<T: std::str::FromStr>(row: &AnyRow, col: &str) -> Result<T> {
    parse_state(col, row.try_get(col)?)
}

/// A state column's text, parsed.
pub(in crate::store) fn parse_state<T: std::str::FromStr>(col: &str, text: &str) -> Result<T> {
    text.parse().map_err(|_| Error::Internal(format!("column {col}: unknown state {text:?}")))
}

/// A JSON column, decoded.
pub(in crate::store) fn json_col<T: serde::de::DeserializeOwned>(row: &AnyRow, col: &str) -> Result<Option<T>> {
    parse_json(col, row.try_get(col)?)
}

/// A JSON column's text (None for NULL), decoded.
pub(in crate::store) fn parse_json<T: serde::de::DeserializeOwned>(col: &str, text: Option<&str>) -> Result<Option<T>> {
    text.map(|t| serde_json::from_str(t).map_err(|e| Error::Internal(format!("column {col}: {e}")))).transpose()
}

/// `LIKE` pattern for a case-insensitive substring match of `text`.
pub(in crate::store) fn like_pattern(text: &str) -> String {
    let escaped: String = text
        .to_lowercase()
        .chars()
        .flat_map(|c| match c {
            '%' | '_' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect();
    format!("%{escaped}%")
}

/// What the store's failures are to the domain: a unique-constraint
/// violation is the typed conflict of a concurrent writer that won a race
/// the checks before the write could not see; anything else is a database
/// failure.
impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Self {
        match &e {
            // both databases name the table in the message
            sqlx::Error::Database(d) if d.is_unique_violation() && d.message().contains("idempotency_keys") => Error::idempotency_key_taken(),
            sqlx::Error::Database(d) if d.is_unique_violation() => Error::concurrent_conflict(),
            // PostgreSQL broke a deadlock between two writers (or a
            // serialisation failure): a race as well, lost by this one
            sqlx::Error::Database(d) if matches!(d.code().as_deref(), Some("40P01" | "40001")) => Error::concurrent_conflict(),
            _ => Error::Database(e.to_string()),
        }
    }
}

/// The id of a new resource: a UUID of version 7, time-ordered, so each
/// new row goes at the end of its id index instead of dirtying a random
/// page of it (on SQLite, where every commit writes its dirty pages to the
/// log, that made an idempotent create about a third faster).
pub fn new_id() -> uuid::Uuid {
    uuid::Uuid::now_v7()
}

/// What a `referenceId` names: unique among an organisation's of its kind.
#[derive(Debug, Clone, Copy)]
pub enum Referenced {
    Customer,
    Order,
}

impl Referenced {
    fn table(self) -> &'static str {
        match self {
            Referenced::Customer => "customers",
            Referenced::Order => "orders",
        }
    }

    /// The word an answer names it by.
    pub fn noun(self) -> &'static str {
        match self {
            Referenced::Customer => "customer",
            Referenced::Order => "order",
        }
    }
}

impl Store {
    /// Whether another `kind` of `org` than `except` has this reference id.
    pub async fn reference_taken(&self, kind: Referenced, org: uuid::Uuid, reference_id: &str, except: Option<uuid::Uuid>) -> Result<bool> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT id FROM {} WHERE org_id = $1 AND reference_id = $2 AND id <> $3", kind.table())))
            .bind(org.to_string())
            .bind(reference_id)
            .bind(except.map(|u| u.to_string()).unwrap_or_default())
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.is_some())
    }
}

#[cfg(test)]
mod embedded_migrations {
    use sqlx::migrate::Migrator;

    fn shape(m: &Migrator) -> Vec<(i64, String, Vec<u8>, bool, sqlx::migrate::MigrationType)> {
        m.iter().map(|m| (m.version, m.description.to_string(), m.checksum.to_vec(), m.no_tx, m.migration_type)).collect()
    }

    /// The migrations build.rs embeds are those sqlx's own resolver reads
    /// from migrations/ (what its `migrate!` macro embedded before): the
    /// same versions, names, checksums and transactions, so a database an
    /// earlier build migrated reads as up to date.
    /// (sqlx reads one directory: each database's own files and those of
    /// migrations/both/, copied together)
    #[tokio::test]
    async fn are_sqlxs_own_reading_of_the_directory() {
        for (db, embedded) in [("sqlite", &*super::MIGRATE_SQLITE), ("postgres", &*super::MIGRATE_POSTGRES)] {
            let dir = std::env::temp_dir().join(format!("switchboard-migrations-{db}-{}", uuid::Uuid::new_v4().simple()));
            std::fs::create_dir(&dir).unwrap();
            for from in [db, "both"] {
                for entry in std::fs::read_dir(std::path::Path::new("migrations").join(from)).unwrap() {
                    let entry = entry.unwrap();
                    std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
                }
            }
            let resolved = Migrator::new(dir.as_path()).await.expect("migrations/ resolves");
            std::fs::remove_dir_all(&dir).unwrap();
            assert!(resolved.iter().count() > 40, "{db}");
            assert_eq!(shape(embedded), shape(&resolved), "{db}");
        }
    }
}
