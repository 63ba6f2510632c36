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
        let bad = || Error::BadRequest {
            code: InternalCode::InvalidCursor,
            message: "cursor is not one this API returned".into(),
        };
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
