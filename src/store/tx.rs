//! Write transactions. On PostgreSQL each is a transaction of the pool. On
//! SQLite, which has one writer, they are group-committed: every writer of
//! the process takes its turn on one dedicated connection, inside a
//! savepoint of a batch transaction that commits once for all the writers
//! that joined it, and `Tx::commit` returns only after that COMMIT, so a
//! write is still acknowledged only once it is committed.
//!
//! An idempotent request runs with a `Scope`: its transaction is parked
//! when the work "commits", and the request's answer is written into it
//! before the real commit, so the work, its events and the stored answer
//! commit together or not at all.

use super::Store;
use crate::error::{Error, Result};
use sqlx::{Any, AnyConnection};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OwnedMutexGuard, watch};

/// A write transaction; hold it only across SQL.
pub struct Tx {
    inner: Option<Inner>,
    /// the idempotent request whose work this is, if any
    scope: Option<Arc<Scope>>,
}

enum Inner {
    Pool(sqlx::Transaction<'static, Any>),
    Group(OwnedMutexGuard<Writer>, Arc<Group>),
}

/// The savepoint each writer of a batch works in.
const SAVEPOINT: &str = "SAVEPOINT writer";

/// A batch commits once this many writers have joined it, even while more
/// are waiting, so each writer's wait stays short under steady load.
const MAX_BATCH: usize = 64;

/// A writer waiting for its batch's COMMIT commits the batch itself after
/// this long: the writer expected to lead it went away, and nothing is
/// left hanging.
const LEAD_TIMEOUT: Duration = Duration::from_millis(50);

/// SQLite's one writing connection, shared by the process's writers.
pub(super) struct Group {
    writer: Arc<tokio::sync::Mutex<Writer>>,
    /// writers queued for the connection: while any are, the one holding
    /// it leaves the batch open for them
    waiting: AtomicUsize,
}

pub(super) struct Writer {
    conn: AnyConnection,
    /// the open batch, if any
    batch: Option<Batch>,
    /// batches opened so far: names the open one
    opened: u64,
    /// a writer gave up its savepoint without committing (dropped):
    /// whoever holds the connection next rolls it back first
    rollback_pending: bool,
}

struct Batch {
    number: u64,
    /// how it ended, for every writer in it
    outcome: watch::Sender<Option<Outcome>>,
    /// writers that released their work into it
    members: usize,
}

type Outcome = std::result::Result<(), String>;

impl Group {
    pub(super) async fn open(url: &str, sync: super::Synchronous) -> anyhow::Result<Group> {
        use sqlx::Connection;
        let mut conn = AnyConnection::connect(url).await?;
        super::sqlite_pragmas(&mut conn, sync).await?;
        let writer = Writer { conn, batch: None, opened: 0, rollback_pending: false };
        Ok(Group { writer: Arc::new(tokio::sync::Mutex::new(writer)), waiting: AtomicUsize::new(0) })
    }

    /// The connection, once what a dropped writer left is rolled back.
    async fn lock(&self) -> OwnedMutexGuard<Writer> {
        // counted while queued; uncounted even if this is cancelled
        struct Queued<'a>(&'a AtomicUsize);
        impl Drop for Queued<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let _queued = Queued(&self.waiting);
        let mut guard = self.writer.clone().lock_owned().await;
        guard.settle().await;
        guard
    }

    fn nobody_waiting(&self) -> bool {
        self.waiting.load(Ordering::SeqCst) == 0
    }

    /// Commits the batch numbered `number` if it is still open.
    async fn finish_batch(&self, number: u64) {
        let mut guard = self.lock().await;
        if guard.batch.as_ref().is_some_and(|b| b.number == number) {
            guard.finish().await;
        }
    }

    /// Commits what is open (the store is closing).
    pub(super) async fn close(&self) {
        self.lock().await.finish().await;
    }
}

impl Writer {
    async fn exec(&mut self, sql: &'static str) -> Result<()> {
        sqlx::query(sql).execute(&mut self.conn).await?;
        Ok(())
    }

    /// Rolls back what a dropped writer left; if that fails, SQLite has
    /// dropped the whole batch transaction, and the batch fails for all.
    async fn settle(&mut self) {
        if !std::mem::take(&mut self.rollback_pending) {
            return;
        }
        let undone = match self.exec("ROLLBACK TO SAVEPOINT writer").await {
            Ok(()) => self.exec("RELEASE SAVEPOINT writer").await,
            Err(e) => Err(e),
        };
        if let Err(e) = undone {
            self.fail(format!("a write batch was lost: {e}")).await;
        }
    }

    async fn fail(&mut self, why: String) {
        let _ = self.exec("ROLLBACK").await;
        if let Some(batch) = self.batch.take() {
            batch.outcome.send_replace(Some(Err(why)));
        }
    }

    /// Commits the open batch and tells every writer in it how it went.
    async fn finish(&mut self) {
        let Some(batch) = self.batch.take() else { return };
        let committed = self.exec("COMMIT").await;
        if committed.is_err() {
            let _ = self.exec("ROLLBACK").await;
        }
        batch.outcome.send_replace(Some(committed.map_err(|e| e.to_string())));
    }
}

impl Store {
    /// A write transaction: its own on PostgreSQL, a savepoint of the
    /// shared batch on SQLite. Within an idempotent request's scope, the
    /// transaction its work parked, if there is one, continues.
    pub async fn begin(&self) -> Result<Tx> {
        if let Some(mut tx) = self.scope.as_ref().and_then(|s| s.take()) {
            tx.scope = self.scope.clone();
            return Ok(tx);
        }
        let inner = match &self.group {
            None => Inner::Pool(self.pool.begin().await?),
            Some(group) => {
                let mut guard = group.lock().await;
                if guard.batch.is_none() {
                    // IMMEDIATE takes SQLite's write lock now, so a writer
                    // of another process waits its turn instead of failing
                    guard.exec("BEGIN IMMEDIATE").await?;
                    guard.opened += 1;
                    guard.batch = Some(Batch { number: guard.opened, outcome: watch::channel(None).0, members: 0 });
                }
                if let Err(e) = guard.exec(SAVEPOINT).await {
                    guard.fail(e.to_string()).await;
                    return Err(e);
                }
                Inner::Group(guard, group.clone())
            }
        };
        Ok(Tx { inner: Some(inner), scope: self.scope.clone() })
    }

    /// The same store, its writes parked in `scope` instead of committed.
    pub fn scoped(&self, scope: Arc<Scope>) -> Store {
        Store { scope: Some(scope), ..self.clone() }
    }
}

impl Tx {
    /// The connection to run this transaction's statements on.
    pub(crate) fn conn(&mut self) -> &mut AnyConnection {
        match self.inner.as_mut().expect("a transaction in use") {
            Inner::Pool(tx) => tx,
            Inner::Group(guard, _) => &mut guard.conn,
        }
    }

    /// Commits; returns once the change is committed. In an idempotent
    /// request's scope the transaction is parked instead, for the answer
    /// to join it (see `Scope`).
    pub async fn commit(mut self) -> Result<()> {
        match self.scope.take() {
            Some(scope) => {
                scope.park(self);
                Ok(())
            }
            None => self.commit_now().await,
        }
    }

    /// Commits, whatever the scope.
    pub(crate) async fn commit_now(mut self) -> Result<()> {
        let (mut guard, group) = match self.inner.take().expect("a transaction in use") {
            Inner::Pool(tx) => return Ok(tx.commit().await?),
            Inner::Group(guard, group) => (guard, group),
        };
        if let Err(e) = guard.exec("RELEASE SAVEPOINT writer").await {
            // dropping it rolls it back (see Drop)
            self.inner = Some(Inner::Group(guard, group));
            return Err(e);
        }
        let batch = guard.batch.as_mut().expect("a batch is open while a writer is in it");
        batch.members += 1;
        let (number, mut told) = (batch.number, batch.outcome.subscribe());
        // no one queued behind: commit now; otherwise the last of those
        // queued (or a full batch) commits for all
        if batch.members >= MAX_BATCH || group.nobody_waiting() {
            guard.finish().await;
        }
        drop(guard);
        loop {
            let waited = tokio::time::timeout(LEAD_TIMEOUT, told.wait_for(Option::is_some)).await.map(|r| r.map(|o| o.clone()));
            match waited {
                Ok(Ok(outcome)) => return outcome.expect("waited for an outcome").map_err(Error::Database),
                Ok(Err(_)) => return Err(Error::Database("a write batch ended without an outcome".into())),
                // the writer expected to commit went away: commit it here
                Err(_) => group.finish_batch(number).await,
            }
        }
    }
}

impl Drop for Tx {
    fn drop(&mut self) {
        // a pool transaction rolls itself back; a savepoint is rolled back
        // by the next holder of the connection, and if no writer is queued
        // to be that, by a task started here, so the batch is not held open
        if let Some(Inner::Group(mut guard, group)) = self.inner.take() {
            guard.rollback_pending = true;
            let number = guard.batch.as_ref().map(|b| b.number);
            drop(guard);
            if let (Some(number), Ok(runtime)) = (number, tokio::runtime::Handle::try_current())
                && group.nobody_waiting()
            {
                runtime.spawn(async move { group.finish_batch(number).await });
            }
        }
    }
}

/// An idempotent request's writes: the transaction its work committed,
/// held until the answer joins it.
#[derive(Default)]
pub struct Scope {
    parked: Mutex<Option<Tx>>,
}

impl Scope {
    fn park(&self, tx: Tx) {
        let previous = self.parked.lock().expect("scope").replace(tx);
        debug_assert!(previous.is_none(), "a request's work parks one transaction at a time");
    }

    /// The parked transaction, if the work wrote anything.
    pub fn take(&self) -> Option<Tx> {
        self.parked.lock().expect("scope").take()
    }
}
