//! Bulk seeding: customers written straight into Switchboard's tables in
//! one transaction, many rows per statement, because creating 100,000 of
//! them through the API would take longer than the benchmark itself. The
//! values are encoded as `src/store/customers.rs` encodes them. The
//! organisation's number pool is taken out (see `run`).

use anyhow::{Context, Result, bail};
use sqlx::any::AnyPoolOptions;
use sqlx::{AssertSqlSafe, Row};
use std::time::Instant;

/// Rows per INSERT: 6 placeholders each stays far below SQLite's 32,766
/// and PostgreSQL's 65,535 bound parameters per statement.
const CHUNK: u32 = 1000;

/// Every seeded customer has this creation time (fixed-width RFC 3339, as
/// the store writes it).
const CREATED: &str = "2026-01-01T00:00:00.000000Z";

/// The alphabet of Switchboard's human-readable ids (Crockford base 32).
const ALPHABET: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

pub async fn run(url: &str, org: Option<&str>, count: u32) -> Result<()> {
    sqlx::any::install_default_drivers();
    let pool = AnyPoolOptions::new().max_connections(1).connect(url).await.with_context(|| format!("connecting to {url}"))?;
    let org = match org {
        Some(org) => org.to_string(),
        None => only_organisation(&pool).await?,
    };
    let started = Instant::now();
    let mut tx = pool.begin().await?;
    // the bench's orders name their numbers, as an organisation without a
    // number pool does (and as the baseline's do): the demo's pool is
    // taken out, so an order measures the same work it always has
    sqlx::query("DELETE FROM numbers WHERE org_id = $1").bind(&org).execute(&mut *tx).await?;
    // numbering goes on after what is there, so a second seed of the same
    // organisation gets new human-readable ids
    let first: i64 = sqlx::query("SELECT COUNT(*) AS n FROM customers WHERE org_id = $1").bind(&org).fetch_one(&mut *tx).await?.try_get("n")?;
    let first = u64::try_from(first)?;
    let mut done = 0;
    while done < count {
        let rows = CHUNK.min(count - done);
        let placeholders: Vec<String> = (0..rows as usize)
            .map(|r| {
                let p = r * 6;
                format!("(${}, ${}, 'CONSUMER', ${}, 'en-US', ${}, ${}, ${}, '{CREATED}', '{CREATED}')", p + 1, p + 2, p + 3, p + 4, p + 5, p + 6)
            })
            .collect();
        let sql = format!(
            "INSERT INTO customers (id, org_id, customer_type, name, preferred_locale, human_readable_id, contact, contact_email, created_at, updated_at) VALUES {}",
            placeholders.join(", ")
        );
        let mut q = sqlx::query(AssertSqlSafe(sql));
        for i in (first + u64::from(done))..(first + u64::from(done + rows)) {
            let email = format!("c{i}@example.com");
            q = q
                .bind(uuid::Uuid::new_v4().to_string())
                .bind(org.clone())
                .bind(format!("Bench Customer {i}"))
                .bind(human_readable_id(i))
                .bind(serde_json::json!({ "email": email }).to_string())
                .bind(email);
        }
        q.execute(&mut *tx).await?;
        done += rows;
    }
    tx.commit().await?;
    if url.starts_with("postgres") {
        // what autovacuum does soon after a bulk load on a normal server
        // (the test server may run without it); without statistics the
        // planner takes the table for a few rows and sorts all of them
        // for a first page. SQLite gets no ANALYZE: nothing runs one for
        // Switchboard in production either.
        sqlx::query("ANALYZE customers").execute(&pool).await?;
    }
    pool.close().await;
    println!("seeded {count} customers for organisation {org} in {:.1}s", started.elapsed().as_secs_f64());
    Ok(())
}

pub(crate) async fn only_organisation(pool: &sqlx::AnyPool) -> Result<String> {
    let rows = sqlx::query("SELECT id FROM organisations").fetch_all(pool).await?;
    match &rows[..] {
        [row] => Ok(row.try_get("id")?),
        _ => bail!("the database has {} organisations; name one with --org", rows.len()),
    }
}

/// `CU-` and the number `i` in eight base-32 digits: unique per number.
fn human_readable_id(mut i: u64) -> String {
    let mut digits = [b'0'; 8];
    for d in digits.iter_mut().rev() {
        *d = ALPHABET[(i % 32) as usize];
        i /= 32;
    }
    format!("CU-{}", std::str::from_utf8(&digits).expect("ASCII"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn human_readable_ids_are_switchboards_shape() {
        assert_eq!(super::human_readable_id(0), "CU-00000000");
        assert_eq!(super::human_readable_id(32 + 31), "CU-0000001Z");
    }
}
