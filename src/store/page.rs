//! Keyset pagination: an opaque cursor naming the last row of a page, so
//! rows inserted between pages neither repeat nor vanish.

use crate::error::{Error, InternalCode, Result};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// Where a page starts: after the row with this sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub after_seq: i64,
}

const VERSION: &str = "v1:";

impl Cursor {
    pub fn encode(self) -> String {
        URL_SAFE_NO_PAD.encode(format!("{VERSION}{}", self.after_seq))
    }

    pub fn decode(s: &str) -> Result<Cursor> {
        let bad = || Error::BadRequest { code: InternalCode::InvalidCursor, message: "cursor is not one this API returned".into() };
        let bytes = URL_SAFE_NO_PAD.decode(s).map_err(|_| bad())?;
        let text = String::from_utf8(bytes).map_err(|_| bad())?;
        let seq = text.strip_prefix(VERSION).and_then(|n| n.parse::<i64>().ok()).ok_or_else(bad)?;
        if seq < 0 {
            return Err(bad());
        }
        Ok(Cursor { after_seq: seq })
    }
}

/// One page of rows and where the next one starts.
#[derive(Debug)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next: Option<Cursor>,
}

impl<T> Page<T> {
    /// `rows` were fetched with `LIMIT limit + 1`: an extra row means more.
    pub fn from_rows(mut rows: Vec<(i64, T)>, limit: usize) -> Page<T> {
        let more = rows.len() > limit;
        rows.truncate(limit);
        let next = if more { rows.last().map(|(seq, _)| Cursor { after_seq: *seq }) } else { None };
        Page { items: rows.into_iter().map(|(_, t)| t).collect(), next }
    }
}

/// The page size asked for: 1..=1000, default 100 (the schema has checked
/// the range already; this is the default).
pub fn limit_or_default(limit: Option<i64>) -> usize {
    limit.unwrap_or(100).clamp(1, 1000) as usize
}

/// Rows created within a period: at or after `from`, before `to` (either
/// end open when None).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    pub from: Option<chrono::DateTime<chrono::Utc>>,
    pub to: Option<chrono::DateTime<chrono::Utc>>,
}

/// A keyset-paged list query: `base` selects the rows of organisation `$1`
/// after sequence number `$2` (`AND <seq column> > $2` included); each
/// filter adds a condition and binds its values from `$3` on.
pub(super) struct ListQuery {
    sql: String,
    binds: Vec<String>,
}

impl ListQuery {
    pub fn new(base: String) -> ListQuery {
        ListQuery { sql: base, binds: vec![] }
    }

    fn placeholder(&mut self, value: String) -> String {
        self.binds.push(value);
        format!("${}", self.binds.len() + 2)
    }

    /// Adds `cond`, given the placeholder that `value` is bound to.
    pub fn condition(&mut self, value: String, cond: impl FnOnce(&str) -> String) -> &mut Self {
        let p = self.placeholder(value);
        self.sql.push_str(&format!(" AND {}", cond(&p)));
        self
    }

    /// Adds `cond`, given the comma-separated placeholders that `values`
    /// are bound to (`NULL` for none, which matches nothing in `IN (...)`).
    pub fn list_condition(&mut self, values: impl IntoIterator<Item = String>, cond: impl FnOnce(&str) -> String) -> &mut Self {
        let list: Vec<String> = values.into_iter().map(|v| self.placeholder(v)).collect();
        let list = if list.is_empty() { "NULL".to_string() } else { list.join(", ") };
        self.sql.push_str(&format!(" AND {}", cond(&list)));
        self
    }

    /// `col` is one of `values` (an empty list matches no row).
    pub fn any_of(&mut self, col: &str, values: impl IntoIterator<Item = String>) -> &mut Self {
        self.list_condition(values, |list| format!("{col} IN ({list})"))
    }

    /// Adds a condition that binds nothing.
    pub fn fixed(&mut self, cond: &'static str) -> &mut Self {
        self.sql.push_str(&format!(" AND {cond}"));
        self
    }

    pub fn eq(&mut self, col: &str, value: String) -> &mut Self {
        self.condition(value, |p| format!("{col} = {p}"))
    }

    /// Only rows whose `col` (a timestamp) is within `period`.
    pub fn within(&mut self, col: &str, period: &Period) -> &mut Self {
        if let Some(from) = period.from {
            self.condition(super::ts(from), |p| format!("{col} >= {p}"));
        }
        if let Some(to) = period.to {
            self.condition(super::ts(to), |p| format!("{col} < {p}"));
        }
        self
    }

    /// Only rows whose customer (`customer_col`) the user `viewer` is
    /// assigned to; every row when there is no viewer (a key alone).
    pub fn visible_to(&mut self, customer_col: &str, viewer: Option<uuid::Uuid>) -> &mut Self {
        match viewer {
            Some(v) => self.condition(v.to_string(), |p| format!("{customer_col} IN (SELECT customer_id FROM customer_users WHERE user_id = {p})")),
            None => self,
        }
    }

    /// One page (and one row more, to tell whether there is a next page),
    /// ordered by `seq_col`.
    pub async fn fetch(self, pool: &sqlx::AnyPool, org: uuid::Uuid, after: Option<Cursor>, seq_col: &str, limit: usize) -> Result<Vec<sqlx::any::AnyRow>> {
        self.fetch_within(pool, org, after, seq_col, limit, |page| page).await
    }

    /// As `fetch`, the page's query placed in a larger one by `within`
    /// (which joins to the page what its rows need, in the same query).
    pub async fn fetch_within(
        mut self,
        pool: &sqlx::AnyPool,
        org: uuid::Uuid,
        after: Option<Cursor>,
        seq_col: &str,
        limit: usize,
        within: impl FnOnce(String) -> String,
    ) -> Result<Vec<sqlx::any::AnyRow>> {
        self.sql.push_str(&format!(" ORDER BY {seq_col} LIMIT {}", limit + 1));
        let sql = within(self.sql);
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(org.to_string()).bind(after.map_or(0, |c| c.after_seq));
        for b in self.binds {
            q = q.bind(b);
        }
        Ok(q.fetch_all(pool).await?)
    }
}
