//! The attempts a hosted page took (`payments::ATTEMPTS_AT_MOST`): a
//! count per payment link and per payment profile session, taken with a
//! conditional update so that attempts sent at once count each.

use super::Store;
use crate::error::Result;
use sqlx::{AssertSqlSafe, Row};
use uuid::Uuid;

/// Whose page.
#[derive(Debug, Clone, Copy)]
pub enum HostedPage {
    Link,
    Setup,
}

impl HostedPage {
    fn table(self) -> &'static str {
        match self {
            HostedPage::Link => "payment_links",
            HostedPage::Setup => "payment_profile_sessions",
        }
    }
}

impl Store {
    /// How many attempts `org`'s page `id` took (0 when there is none).
    pub async fn page_attempts(&self, page: HostedPage, org: Uuid, id: Uuid) -> Result<i64> {
        let sql = format!("SELECT attempts FROM {} WHERE id = $1 AND org_id = $2", page.table());
        let row = sqlx::query(AssertSqlSafe(sql)).bind(id.to_string()).bind(org.to_string()).fetch_optional(&self.pool).await?;
        Ok(row.map(|r| r.try_get("attempts")).transpose()?.unwrap_or(0))
    }

    /// Counts an attempt of `org`'s page `id` if it took fewer than
    /// `at_most`: whether it had (false: no attempt may be made).
    pub async fn take_page_attempt(&self, page: HostedPage, org: Uuid, id: Uuid, at_most: i64) -> Result<bool> {
        let sql = format!("UPDATE {} SET attempts = attempts + 1 WHERE id = $1 AND org_id = $2 AND attempts < $3", page.table());
        let mut tx = self.begin().await?;
        let done = sqlx::query(AssertSqlSafe(sql)).bind(id.to_string()).bind(org.to_string()).bind(at_most).execute(tx.conn().await?).await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }
}
