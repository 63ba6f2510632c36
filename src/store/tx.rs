//! Write transactions. On PostgreSQL each is a transaction of the pool,
//! its written statements sent together (see `pg_tx`). On SQLite, which
//! has one writer, they are group-committed (see `group`):
//! every writer of the process takes its turn on one dedicated connection,
//! inside a savepoint of a batch transaction that commits once for all the
//! writers that joined it, and `Tx::commit` returns only after that COMMIT,
//! so a write is still acknowledged only once it is committed. A
//! transaction takes its turn only when it first needs the connection,
//! and the statements it only writes (`Tx::execute`) travel together.
//!
//! An idempotent request runs with a `Scope`: its transaction is parked
//! when the work "commits", and the request's answer is written into it
//! before the real commit, so the work, its events and the stored answer
//! commit together or not at all.

use super::Store;
use super::group_commit::{Group, Joined, Pending, Writer, finish};
use super::pg_tx::PgTx;
use crate::error::{Error, Result};
use sqlx::{Any, AnyConnection, Execute};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, OwnedMutexGuard};

/// A write transaction; hold it only across SQL.
pub struct Tx {
    inner: Option<Inner>,
    /// the idempotent request whose work this is, if any
    scope: Option<Arc<Scope>>,
    /// told when a transaction that recorded an event or queued a webhook
    /// delivery commits (the webhook dispatcher waits on it)
    events: Arc<Notify>,
    webhooks_changed: bool,
    /// the store's master keys, for the secrets this transaction writes
    sealing: Arc<crate::sealing::Sealing>,
}

enum Inner {
    /// PostgreSQL's (see `pg_tx`)
    Postgres(PgTx),
    Group(Turn),
}

/// A transaction's turn on SQLite's writing connection (see `group`).
struct Turn {
    group: Arc<Group>,
    /// the connection, once a statement whose result the transaction
    /// reads needed it; held from then until the commit
    guard: Option<OwnedMutexGuard<Writer>>,
    /// statements only written, sent with the next that needs the
    /// connection or with the commit
    pending: Pending,
    /// a statement failed and the savepoint was rolled back
    broken: bool,
}

/// A writer waiting for its batch's COMMIT commits the batch itself after
/// this long: the writer expected to lead it went away, and nothing is
/// left hanging.
const LEAD_TIMEOUT: Duration = Duration::from_millis(50);

impl Store {
    /// A write transaction: its own on PostgreSQL, a savepoint of the
    /// shared batch on SQLite, taken only when it first needs the
    /// connection. Within an idempotent request's scope, the transaction
    /// its work parked, if there is one, continues.
    pub async fn begin(&self) -> Result<Tx> {
        if let Some(mut tx) = self.scope.as_ref().and_then(|s| s.take()) {
            tx.scope = self.scope.clone();
            return Ok(tx);
        }
        let inner = match &self.group {
            None => Inner::Postgres(PgTx::new(self.pool.clone())),
            Some(group) => Inner::Group(Turn { group: group.clone(), guard: None, pending: Pending::default(), broken: false }),
        };
        Ok(Tx { inner: Some(inner), scope: self.scope.clone(), events: self.events_recorded.clone(), webhooks_changed: false, sealing: self.sealing.clone() })
    }

    /// The same store, its writes parked in `scope` instead of committed.
    pub fn scoped(&self, scope: Arc<Scope>) -> Store {
        Store { scope: Some(scope), ..self.clone() }
    }
}

impl Turn {
    /// The connection, with every pending statement sent.
    async fn flush(&mut self) -> Result<&mut AnyConnection> {
        if self.broken {
            return Err(broken());
        }
        let pending = std::mem::take(&mut self.pending);
        let sent = match &mut self.guard {
            Some(guard) => guard.send(pending).await,
            None => {
                let mut guard = self.group.lock().await;
                let entered = guard.enter(pending).await;
                if entered.is_ok() {
                    self.guard = Some(guard);
                } else {
                    leave(&self.group, guard).await;
                }
                entered
            }
        };
        if let Err(e) = sent {
            // the savepoint is rolled back: nothing of this transaction
            // stands, and it must not go on as if it did
            self.broken = true;
            if let Some(guard) = self.guard.take() {
                leave(&self.group, guard).await;
            }
            return Err(e);
        }
        Ok(self.guard.as_mut().expect("the connection is held").conn())
    }

    /// Releases the savepoint into the batch (in the same trip as the
    /// pending statements; for a transaction that only wrote, in a trip
    /// shared with every other such one queued meanwhile), and returns
    /// once the batch has committed.
    async fn commit(mut self) -> Result<()> {
        if self.guard.is_none() && !self.broken {
            if self.pending.is_empty() {
                // wrote nothing
                return Ok(());
            }
            // only wrote: its statements go in a trip shared with others'
            let joined = self.group.submit(std::mem::take(&mut self.pending)).await?;
            return committed(&self.group, joined).await;
        }
        self.pending.release();
        self.flush().await?;
        let mut guard = self.guard.take().expect("the connection is held");
        let group = self.group.clone();
        let joined = guard.joined();
        // no one queued behind: commit now; otherwise the last of those
        // queued (or a full batch) commits for all
        if guard.full() || group.nobody_waiting() {
            finish(guard).await;
        } else {
            drop(guard);
        }
        committed(&group, joined).await
    }
}

/// Returns once the batch `joined` names has committed (or failed).
async fn committed(group: &Group, joined: Joined) -> Result<()> {
    let Joined { number, outcome: mut told } = joined;
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

fn broken() -> Error {
    Error::Database("a statement of this transaction failed; it was rolled back".into())
}

/// Lets go of the connection after a failed turn, committing the batch if
/// no writer is queued to do it.
async fn leave(group: &Group, guard: OwnedMutexGuard<Writer>) {
    if group.nobody_waiting() {
        finish(guard).await;
    }
}

impl Tx {
    /// The master keys of the secrets this transaction writes.
    pub(super) fn sealing(&self) -> &crate::sealing::Sealing {
        &self.sealing
    }

    /// Runs a statement whose result the transaction does not read. It
    /// waits, to go with the next statement that needs the connection or
    /// with the commit, so its failure (a constraint) is reported there
    /// instead of here.
    pub(crate) async fn execute<'q>(&mut self, query: impl Execute<'q, Any> + 'q) -> Result<()> {
        match self.inner.as_mut().expect("a transaction in use") {
            Inner::Postgres(tx) => tx.push(query)?,
            Inner::Group(turn) if turn.broken => return Err(broken()),
            Inner::Group(turn) => turn.pending.push(query)?,
        }
        Ok(())
    }

    /// The connection to run a statement on whose result the transaction
    /// reads (rows, or the count of rows changed); every statement before
    /// it has run.
    pub(crate) async fn conn(&mut self) -> Result<&mut AnyConnection> {
        match self.inner.as_mut().expect("a transaction in use") {
            Inner::Postgres(tx) => tx.conn().await,
            Inner::Group(turn) => turn.flush().await,
        }
    }

    /// Whether this is PostgreSQL's (its locking statements differ).
    pub fn is_postgres(&self) -> bool {
        matches!(self.inner, Some(Inner::Postgres(_)))
    }

    /// From here to the commit, `org`'s transactions that call this go one
    /// at a time, so a count read next stays true until then (a bound two
    /// at once must not both pass). SQLite's writers already go one at a
    /// time; PostgreSQL's lock the organisation's row, without blocking
    /// the rows that refer to it.
    pub async fn one_at_a_time_in(&mut self, org: uuid::Uuid) -> Result<()> {
        if self.is_postgres() {
            self.execute(sqlx::query("SELECT id FROM organisations WHERE id = $1 FOR NO KEY UPDATE").bind(org.to_string())).await?;
        }
        Ok(())
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
        match self.inner.take().expect("a transaction in use") {
            Inner::Postgres(tx) => tx.commit().await?,
            Inner::Group(turn) => turn.commit().await?,
        }
        if self.webhooks_changed {
            self.events.notify_one();
        }
        Ok(())
    }

    /// Notes that this transaction recorded an event or queued a webhook
    /// delivery: the dispatcher is woken when it commits.
    pub(crate) fn webhooks_changed(&mut self) {
        self.webhooks_changed = true;
    }
}

impl Drop for Tx {
    fn drop(&mut self) {
        // a pool transaction rolls itself back, and statements not sent
        // are simply dropped; a savepoint is rolled back by the next holder
        // of the connection, and a task started here is one such holder,
        // which commits the batch if it is still open, so the batch is not
        // held open. (Always, not only when no writer is queued now: the
        // writers queued may be cancelled too, as when a server's workers
        // are stopped, and then none would come.)
        if let Some(Inner::Group(Turn { group, guard: Some(guard), .. })) = self.inner.take() {
            // its savepoint is not released: `rollback_pending` is set
            let number = guard.batch.as_ref().map(|b| b.number);
            drop(guard);
            if let (Some(number), Ok(runtime)) = (number, tokio::runtime::Handle::try_current()) {
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
