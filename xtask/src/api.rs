//! What the bench and crash tools ask of Switchboard's API besides their
//! load: JSON reads with the demo key, list pages, and offerings of the
//! demo customer's catalog by name.

use crate::http::{Conn, Request};
use anyhow::{Context, Result};
use serde_json::Value;

pub async fn get_json(conn: &mut Conn, key: &str, path: &str) -> Result<Value> {
    conn.send(&Request::get(path).header("x-api-key", key)).await?.success(&format!("GET {path}"))?.json()
}

/// One page of a list (`path` is e.g. `/api/v2/customers`, perhaps with a
/// query of its own): its items and
/// the cursor of the next page, if any.
pub async fn page(conn: &mut Conn, key: &str, path: &str, limit: usize, cursor: Option<&str>) -> Result<(Vec<Value>, Option<String>)> {
    let after = cursor.map(|c| format!("&cursor={c}")).unwrap_or_default();
    let join = if path.contains('?') { '&' } else { '?' };
    let mut page = get_json(conn, key, &format!("{path}{join}limit={limit}{after}")).await?;
    let items = match page["items"].take() {
        Value::Array(items) => items,
        _ => anyhow::bail!("GET {path}: a page without items"),
    };
    Ok((items, page["pagination"]["nextCursor"].as_str().map(str::to_string)))
}

/// The organisation's event log after `position` (`start`, or an eventId
/// it gave), in the order its events were recorded (`GET /events?after=`),
/// a thousand a page, to its end; `position` is then where it ends. Unlike
/// a listing by `cursor` (in the order events were written, which on
/// PostgreSQL is not that of their commits), it never passes an event that
/// commits late.
pub async fn follow(conn: &mut Conn, key: &str, position: &mut String) -> Result<Vec<Value>> {
    let mut all = vec![];
    loop {
        let mut page = get_json(conn, key, &format!("/api/v2/events?after={position}&limit=1000")).await?;
        let items = match page["items"].take() {
            Value::Array(items) => items,
            _ => anyhow::bail!("GET /api/v2/events?after={position}: a page without items"),
        };
        if let Some(next) = page["pagination"]["nextCursor"].as_str() {
            *position = next.to_string();
        }
        if items.is_empty() {
            return Ok(all);
        }
        all.extend(items);
    }
}

/// Every item of a list, a thousand per page.
pub async fn all(conn: &mut Conn, key: &str, path: &str) -> Result<Vec<Value>> {
    let (mut all, mut cursor) = (vec![], None);
    loop {
        let (items, next) = page(conn, key, path, 1000, cursor.as_deref()).await?;
        all.extend(items);
        match next {
            Some(next) => cursor = Some(next),
            None => return Ok(all),
        }
    }
}

/// The id of the offering called `name` in the demo customer's catalog.
pub async fn demo_offering(conn: &mut Conn, key: &str, name: &str) -> Result<String> {
    let catalog = get_json(conn, key, "/api/v2/customers/rid_acme/product-catalog").await?;
    Ok(catalog["items"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|o| o["name"] == name)
        .and_then(|o| o["productOfferingId"].as_str())
        .with_context(|| format!("no offering {name:?} in the demo customer's catalog"))?
        .to_string())
}

/// `GET` of every path, over `connections` connections at once, in order.
pub async fn get_many(addr: &str, key: &str, paths: Vec<String>, connections: usize) -> Result<Vec<Value>> {
    let chunk = paths.len().div_ceil(connections).max(1);
    let mut tasks = tokio::task::JoinSet::new();
    for (i, part) in paths.chunks(chunk).enumerate() {
        let (part, addr, key) = (part.to_vec(), addr.to_string(), key.to_string());
        tasks.spawn(async move {
            let mut conn = Conn::open(&addr).await?;
            let mut found = Vec::with_capacity(part.len());
            for path in &part {
                found.push(get_json(&mut conn, &key, path).await?);
            }
            anyhow::Ok((i, found))
        });
    }
    let mut parts = vec![vec![]; paths.len().div_ceil(chunk)];
    while let Some(done) = tasks.join_next().await {
        let (i, found) = done??;
        parts[i] = found;
    }
    Ok(parts.concat())
}
