//! SQLite's group commit: the process's one writing connection, on which
//! every write transaction takes its turn inside a savepoint of a batch
//! transaction that commits once for all the writers that joined it.
//!
//! A turn costs one trip to SQLite's worker thread: the statements a
//! transaction only writes wait in `Pending` and go, with the savepoint
//! around them, as one multi-statement text. Every trip to that thread is a
//! pair of context switches, and while a writer holds the connection no
//! other writer can use it, so trips, not statements, bound the writes per
//! second. So a transaction that only wrote does not take a turn of its
//! own: its statements join a queue, and one task sends everything queued
//! in one trip (`Group::submit`), so a batch costs about two trips (its
//! writers' statements and its COMMIT) however many writers it holds.

use super::params::renumber;
use crate::error::{Error, Result};
use sqlx::any::AnyArguments;
use sqlx::{Any, AnyConnection, AnyPool, AssertSqlSafe, Execute};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::{OwnedMutexGuard, oneshot, watch};

/// The savepoint each writer of a batch works in.
const SAVEPOINT: &str = "SAVEPOINT writer";
const RELEASE: &str = "RELEASE SAVEPOINT writer";

/// SQLite's one writing connection, shared by the process's writers.
pub(super) struct Group {
    writer: Arc<tokio::sync::Mutex<Writer>>,
    /// writers queued for the connection: while any are, the one holding
    /// it leaves the batch open for them
    waiting: AtomicUsize,
    /// write-only transactions' statements, for the next trip
    queue: std::sync::Mutex<Vec<Queued>>,
    /// a task is sending what is queued (`Group::serve`)
    serving: AtomicBool,
}

/// A write-only transaction's statements (not yet released), and where to
/// tell it which batch they joined, or why they failed.
struct Queued {
    pending: Pending,
    told: oneshot::Sender<Result<Joined>>,
}

/// The batch a writer's work was released into: its number, and how it
/// will end.
pub(super) struct Joined {
    pub(super) number: u64,
    pub(super) outcome: watch::Receiver<Option<Outcome>>,
}

/// A batch commits once this many writers have joined it, even while more
/// are waiting, so each writer's wait stays short under steady load.
const MAX_BATCH: usize = 64;

pub(super) struct Writer {
    conn: AnyConnection,
    /// the open batch, if any
    pub(super) batch: Option<Batch>,
    /// batches opened so far: names the open one
    opened: u64,
    /// a writer's savepoint may be open and not released: set before its
    /// statements are sent, cleared once its RELEASE has run, so a writer
    /// that fails, is dropped, or is cancelled mid-trip is rolled back by
    /// whoever holds the connection next, before anything else
    pub(super) rollback_pending: bool,
}

pub(super) struct Batch {
    pub(super) number: u64,
    /// how it ended, for every writer in it
    pub(super) outcome: watch::Sender<Option<Outcome>>,
    /// writers that released their work into it
    pub(super) members: usize,
}

pub(super) type Outcome = std::result::Result<(), String>;

impl Group {
    /// Opens the writing connection, and starts the checkpoints beside it
    /// on `pool`'s connections.
    pub(super) async fn open(url: &str, sync: super::Synchronous, pool: &AnyPool) -> anyhow::Result<Group> {
        use sqlx::Connection;
        let mut conn = AnyConnection::connect(url).await?;
        super::sqlite_pragmas(&mut conn, sync).await?;
        let frames = format!("PRAGMA wal_autocheckpoint = {WRITER_CHECKPOINT_FRAMES}");
        sqlx::query(AssertSqlSafe(frames)).execute(&mut conn).await?;
        // Each writer's savepoint keeps the pages it changes that the batch
        // had already changed in a statement journal, which SQLite spills
        // to a temporary file past 64 KiB: in a batch of dozens of writers,
        // about a fifth of the writer thread's time went to writing,
        // opening and unlinking those files (a pwrite per page, more
        // pwrites than to the log itself).
        // In memory the journal is a copy, freed at each RELEASE.
        sqlx::query("PRAGMA temp_store = MEMORY").execute(&mut conn).await?;
        tokio::spawn(checkpoints(pool.clone()));
        let writer = Writer { conn, batch: None, opened: 0, rollback_pending: false };
        Ok(Group {
            writer: Arc::new(tokio::sync::Mutex::new(writer)),
            waiting: AtomicUsize::new(0),
            queue: std::sync::Mutex::default(),
            serving: AtomicBool::new(false),
        })
    }

    /// The connection, once what a dropped writer left is rolled back.
    pub(super) async fn lock(&self) -> OwnedMutexGuard<Writer> {
        // counted while queued; uncounted even if this is cancelled
        struct Counted<'a>(&'a AtomicUsize);
        impl Drop for Counted<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let _counted = Counted(&self.waiting);
        let mut guard = self.writer.clone().lock_owned().await;
        guard.settle().await;
        guard
    }

    pub(super) fn nobody_waiting(&self) -> bool {
        self.waiting.load(Ordering::SeqCst) == 0
    }

    /// Commits the batch numbered `number` if it is still open, or
    /// whatever batch is open if no writer is waiting to (what it holds is
    /// all released work: `lock` rolled back the rest).
    pub(super) async fn finish_batch(&self, number: u64) {
        let guard = self.lock().await;
        if guard.batch.as_ref().is_some_and(|b| b.number == number || self.nobody_waiting()) {
            finish(guard).await;
        }
    }

    /// Sends a write-only transaction's statements, in one trip with every
    /// other queued meanwhile, and answers the batch they joined.
    pub(super) async fn submit(self: &Arc<Self>, pending: Pending) -> Result<Joined> {
        let (told, answer) = oneshot::channel();
        self.queue.lock().expect("write queue").push(Queued { pending, told });
        if !self.serving.swap(true, Ordering::SeqCst) {
            // a task of its own: a cancelled caller must not cut a trip or
            // a COMMIT in half
            tokio::spawn(self.clone().serve());
        }
        answer.await.map_err(|_| Error::Database("a write was dropped before it was sent".into()))?
    }

    /// Sends what is queued, a trip at a time, until nothing is. The batch
    /// is left open for the next trip while more are queued (up to
    /// `MAX_BATCH` writers), and committed once nothing is queued and no
    /// writer waits for the connection.
    async fn serve(self: Arc<Self>) {
        loop {
            if self.queue.lock().expect("write queue").is_empty() {
                self.serving.store(false, Ordering::SeqCst);
                // one queued after the look and before the store saw
                // `serving` still set and left its statements to this task
                if self.queue.lock().expect("write queue").is_empty() || self.serving.swap(true, Ordering::SeqCst) {
                    return;
                }
            }
            let mut guard = self.lock().await;
            let queued = std::mem::take(&mut *self.queue.lock().expect("write queue"));
            guard.send_queued(queued).await;
            let more = !self.queue.lock().expect("write queue").is_empty();
            if guard.full() || (!more && self.nobody_waiting()) {
                guard.finish().await;
            }
        }
    }

    /// Commits what is open (the store is closing).
    pub(super) async fn close(&self) {
        finish(self.lock().await).await;
    }
}

/// Commits the open batch, to the end even if the caller is cancelled
/// meanwhile (a COMMIT cut off halfway would leave the batch's state
/// unknown).
pub(super) async fn finish(mut guard: OwnedMutexGuard<Writer>) {
    let _ = tokio::spawn(async move { guard.finish().await }).await;
}

/// How often the write-ahead log is copied into the database file.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(100);

/// Frames in the log (about 40 MiB of 4 KiB pages) past which the writer
/// copies the log into the database itself, at its next commit (SQLite's
/// `wal_autocheckpoint`, 1,000 by default). Only the writer can start the
/// log over, and only at a write after a checkpoint that copied all of it;
/// under steady writes the checkpoints beside it rarely finish in the
/// moment between two batches, so this keeps the log bounded, while its
/// two disk syncs stall the writers queued behind that commit ten times
/// more rarely than at the default.
const WRITER_CHECKPOINT_FRAMES: u32 = 10_000;

/// Copies the write-ahead log into the database file, beside the writer
/// (PASSIVE: it neither waits for nor blocks the writer or readers), until
/// the store closes, so the writer's own checkpoints find little to copy.
async fn checkpoints(pool: AnyPool) {
    let mut tick = tokio::time::interval(CHECKPOINT_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if pool.is_closed() {
            return;
        }
        if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)").execute(&pool).await
            && !pool.is_closed()
        {
            tracing::warn!(error = %e, "a checkpoint of the write-ahead log failed; the next one tries again");
        }
    }
}

impl Writer {
    pub(super) fn conn(&mut self) -> &mut AnyConnection {
        &mut self.conn
    }

    async fn exec(&mut self, sql: &'static str) -> Result<()> {
        sqlx::query(sql).execute(&mut self.conn).await?;
        Ok(())
    }

    /// Opens a savepoint and sends `pending` in it, in one trip; opens the
    /// batch too if none is, so the first writer of a batch makes one trip
    /// as well. On failure the savepoint is rolled back.
    pub(super) async fn enter(&mut self, pending: Pending) -> Result<()> {
        let mut sql = String::with_capacity(pending.sql.len() + 64);
        if self.batch.is_none() {
            // IMMEDIATE takes SQLite's write lock now, so a writer of
            // another process waits its turn instead of failing
            sql.push_str("BEGIN IMMEDIATE;\n");
            self.opened += 1;
            self.batch = Some(Batch { number: self.opened, outcome: watch::channel(None).0, members: 0 });
        }
        sql.push_str(SAVEPOINT);
        sql.push_str(";\n");
        self.rollback_pending = true;
        self.send(Pending { sql: sql + &pending.sql, ..pending }).await
    }

    /// Sends queued writers' statements and tells each the batch they
    /// joined. Writers of one kind (the same statements) go together, a
    /// power of two of them a trip: SQLite prepares a text once and sqlx
    /// keeps it prepared, so the texts sent must be few (a text prepared
    /// anew each trip costs more than the trips it saves).
    async fn send_queued(&mut self, queued: Vec<Queued>) {
        let mut kinds: Vec<Vec<Queued>> = vec![];
        for q in queued {
            match kinds.iter_mut().find(|k| k[0].pending.sql == q.pending.sql) {
                Some(kind) => kind.push(q),
                None => kinds.push(vec![q]),
            }
        }
        for mut kind in kinds {
            while !kind.is_empty() {
                let size = 1 << kind.len().min(MAX_BATCH).ilog2();
                let rest = kind.split_off(size);
                self.send_together(kind).await;
                kind = rest;
            }
        }
    }

    /// Sends writers' statements in one savepoint, in one trip, and tells
    /// each the batch they joined. If the trip fails, nothing of it
    /// stands, and each writer's statements are sent again alone, so only
    /// the one at fault fails.
    async fn send_together(&mut self, queued: Vec<Queued>) {
        let mut all = Pending::default();
        for q in &queued {
            all.append(&q.pending);
        }
        all.release();
        match self.enter(all).await {
            Ok(()) => {
                for q in queued {
                    let _ = q.told.send(Ok(self.joined()));
                }
            }
            Err(e) if queued.len() == 1 => {
                let _ = queued.into_iter().next().expect("one").told.send(Err(e));
            }
            Err(_) => {
                for Queued { mut pending, told } in queued {
                    pending.release();
                    let sent = self.enter(pending).await.map(|()| self.joined());
                    let _ = told.send(sent);
                }
            }
        }
    }

    /// The open batch holds `MAX_BATCH` writers.
    pub(super) fn full(&self) -> bool {
        self.batch.as_ref().is_some_and(|b| b.members >= MAX_BATCH)
    }

    /// Counts a writer whose work was just released into the open batch.
    pub(super) fn joined(&mut self) -> Joined {
        let batch = self.batch.as_mut().expect("a batch is open while a writer is in it");
        batch.members += 1;
        Joined { number: batch.number, outcome: batch.outcome.subscribe() }
    }

    /// Sends statements inside this writer's savepoint; on failure rolls
    /// the savepoint back (the statements before the failed one too).
    pub(super) async fn send(&mut self, pending: Pending) -> Result<()> {
        if pending.sql.is_empty() {
            return Ok(());
        }
        let releases = pending.releases;
        let sent = sqlx::query_with(AssertSqlSafe(pending.sql), pending.args).execute(&mut self.conn).await;
        if let Err(e) = sent {
            self.settle().await;
            return Err(e.into());
        }
        if releases {
            self.rollback_pending = false;
        }
        Ok(())
    }

    /// Rolls back what a failed or dropped writer left; if that fails,
    /// SQLite has dropped the whole batch transaction (or never began it),
    /// and the batch fails for all.
    pub(super) async fn settle(&mut self) {
        if !self.rollback_pending {
            return;
        }
        // the flag stays set until the rollback has run: cut off halfway
        // (its caller cancelled), the next holder runs it again, or finding
        // it already done fails the batch for all; a savepoint left half
        // rolled back never swallows later writers' work told committed
        let rolled_back = self.exec("ROLLBACK TO SAVEPOINT writer; RELEASE SAVEPOINT writer").await;
        self.rollback_pending = false;
        if let Err(e) = rolled_back {
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
    pub(super) async fn finish(&mut self) {
        let Some(batch) = self.batch.take() else { return };
        let committed = self.exec("COMMIT").await;
        if committed.is_err() {
            let _ = self.exec("ROLLBACK").await;
        }
        batch.outcome.send_replace(Some(committed.map_err(|e| e.to_string())));
    }
}

/// Statements a transaction has not sent yet: one SQL text of `;`-joined
/// statements whose `$N` parameters are renumbered to follow each other,
/// and their arguments in that order. SQLite prepares each statement of
/// the text alone, and a `$N` is a name to it (sqlx binds it to argument
/// N), so the numbers may run past SQLite's limit of parameters in one
/// statement.
#[derive(Default)]
pub(super) struct Pending {
    sql: String,
    args: AnyArguments,
    /// ends with the writer's RELEASE
    releases: bool,
}

impl Pending {
    pub(super) fn push<'q>(&mut self, mut query: impl Execute<'q, Any>) -> Result<()> {
        let offset = self.args.values.0.len();
        let args = query.take_arguments().map_err(|e| Error::Database(format!("encoding a statement's arguments: {e}")))?;
        renumber(query.sql().as_str(), offset, &mut self.sql);
        self.sql.push_str(";\n");
        if let Some(args) = args {
            // the argument buffer is public, if hidden, in the pinned sqlx
            self.args.values.0.extend(args.values.0);
        }
        Ok(())
    }

    /// Appends another transaction's statements (their arguments copied).
    fn append(&mut self, other: &Pending) {
        renumber(&other.sql, self.args.values.0.len(), &mut self.sql);
        self.args.values.0.extend(other.args.values.0.iter().cloned());
    }

    /// Ends the statements with the writer's RELEASE.
    pub(super) fn release(&mut self) {
        self.sql.push_str(RELEASE);
        self.sql.push_str(";\n");
        self.releases = true;
    }

    pub(super) fn is_empty(&self) -> bool {
        self.sql.is_empty()
    }
}
