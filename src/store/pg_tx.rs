//! PostgreSQL's write transactions, in as few trips to the server as they
//! can go. A statement whose result the transaction does not read waits,
//! its arguments written into its text as literals (`params::inline`), and
//! goes with the next statement that needs the connection or with the
//! COMMIT, all in one message of the simple query protocol: PostgreSQL
//! runs a message's statements in order and stops at the first that fails.
//! A transaction that only writes is one trip, `BEGIN; ...; COMMIT;`,
//! where each statement bound on its own would be a trip of its own. The
//! most frequent writes were prepared when the connection opened
//! (`prepared`) and go as `EXECUTE`, planned once.
//!
//! Nothing is sent before a statement needs the connection, so a
//! transaction holds a pooled connection only from then.

use super::params::{execute, inline};
use super::prepared;
use crate::error::{Error, Result};
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, AssertSqlSafe, Execute, Executor};

pub(super) struct PgTx {
    pool: AnyPool,
    conn: Option<PoolConnection<Any>>,
    /// BEGIN was sent on `conn` and no COMMIT has ended it: dropped so,
    /// the transaction is rolled back
    open: bool,
    /// statements waiting, each ending with `;`
    pending: String,
    /// a message failed: nothing more is sent but the rollback
    broken: bool,
}

impl PgTx {
    pub(super) fn new(pool: AnyPool) -> PgTx {
        PgTx { pool, conn: None, open: false, pending: String::new(), broken: false }
    }

    /// Keeps a statement whose result is not read, to go with the next
    /// message.
    pub(super) fn push<'q>(&mut self, mut query: impl Execute<'q, Any>) -> Result<()> {
        let args = query.take_arguments().map_err(|e| Error::Database(format!("encoding a statement's arguments: {e}")))?;
        let values = args.map(|a| a.values.0).unwrap_or_default();
        // written aside first: a value refused leaves nothing half-written
        let mut statement = String::new();
        let sql = query.sql();
        match prepared::name_of(sql.as_str()) {
            Some(name) => execute(name, &values, &mut statement)?,
            None => inline(sql.as_str(), &values, &mut statement)?,
        }
        self.pending.push_str(&statement);
        self.pending.push_str(";\n");
        Ok(())
    }

    /// The connection, in the transaction, with every waiting statement run.
    pub(super) async fn conn(&mut self) -> Result<&mut AnyConnection> {
        if !self.open || !self.pending.is_empty() {
            self.send("").await?;
        }
        Ok(self.conn.as_mut().expect("sent on a connection"))
    }

    /// Commits what the transaction wrote, in one trip with what waits.
    pub(super) async fn commit(mut self) -> Result<()> {
        if !self.open && self.pending.is_empty() {
            // wrote nothing
            return Ok(());
        }
        self.send("COMMIT;").await?;
        self.open = false;
        Ok(())
    }

    /// Sends what waits, BEGIN before it if the transaction is not open
    /// yet, and `then` after it.
    async fn send(&mut self, then: &str) -> Result<()> {
        if self.broken {
            return Err(Error::Database("a statement of this transaction failed; it was rolled back".into()));
        }
        if self.conn.is_none() {
            self.conn = Some(self.pool.acquire().await?);
        }
        let mut sql = String::with_capacity(self.pending.len() + 16);
        if !self.open {
            sql.push_str("BEGIN;\n");
        }
        sql.push_str(&std::mem::take(&mut self.pending));
        sql.push_str(then);
        let conn = self.conn.as_mut().expect("acquired");
        // from here a rollback is owed, whatever part of the message ran
        self.open = true;
        if let Err(e) = conn.execute(sqlx::raw_sql(AssertSqlSafe(sql))).await {
            self.broken = true;
            return Err(e.into());
        }
        Ok(())
    }
}

impl Drop for PgTx {
    fn drop(&mut self) {
        // the connection goes back to the pool only out of the transaction:
        // rolled back by a task of its own (it cannot wait here), or closed
        // if that fails or there is no runtime to run it
        if !self.open {
            return;
        }
        let Some(mut conn) = self.conn.take() else { return };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    if conn.execute("ROLLBACK").await.is_err() {
                        let _ = conn.close().await;
                    }
                });
            }
            Err(_) => drop(conn.detach()),
        }
    }
}
