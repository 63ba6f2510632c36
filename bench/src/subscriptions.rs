//! Bulk seeding of subscriptions for `cargo xtask bench report`: copies of
//! one of the organisation's ACTIVATED subscriptions, each with its own
//! id, number and subscriber, many rows per statement in one transaction,
//! every other column as the original has it (so each row reads as one the
//! product made).

use anyhow::{Context, Result};
use sqlx::any::AnyPoolOptions;
use sqlx::{AssertSqlSafe, Row};
use std::time::Instant;

/// Rows per INSERT: two placeholders each.
const CHUNK: u64 = 2000;

/// The columns of `subscriptions`, on either database.
async fn columns(pool: &sqlx::AnyPool, postgres: bool) -> Result<Vec<String>> {
    let sql = if postgres {
        "SELECT column_name::text AS name FROM information_schema.columns WHERE table_name = 'subscriptions' ORDER BY ordinal_position"
    } else {
        "SELECT name FROM pragma_table_info('subscriptions')"
    };
    sqlx::query(sql).fetch_all(pool).await?.iter().map(|r| Ok(r.try_get::<String, _>("name")?)).collect()
}

pub async fn run(url: &str, org: Option<&str>, count: u64) -> Result<()> {
    sqlx::any::install_default_drivers();
    let pool = AnyPoolOptions::new().max_connections(1).connect(url).await.with_context(|| format!("connecting to {url}"))?;
    let org = match org {
        Some(org) => org.to_string(),
        None => crate::seed::only_organisation(&pool).await?,
    };
    let org = org.as_str();
    let started = Instant::now();
    let template: String = sqlx::query("SELECT id FROM subscriptions WHERE org_id = $1 AND status = 'ACTIVATED' ORDER BY seq LIMIT 1")
        .bind(org)
        .fetch_optional(&pool)
        .await?
        .context("the organisation has no ACTIVATED subscription to copy")?
        .try_get("id")?;
    let postgres = url.starts_with("postgres");
    // each copy: its own id (and subscriber, which is unique), number, no reference
    let pick = |c: &str| match c {
        "id" | "subscriber_id" => "v.column1".to_string(),
        "msisdn" => "v.column2".to_string(),
        "reference_id" => "NULL".to_string(),
        other => format!("t.{other}"),
    };
    let names: Vec<String> = columns(&pool, postgres).await?.into_iter().filter(|c| c != "seq").collect();
    let select: Vec<String> = names.iter().map(|c| pick(c)).collect();
    let mut tx = pool.begin().await?;
    let mut done = 0;
    while done < count {
        let rows = CHUNK.min(count - done);
        let values: Vec<String> = (0..rows).map(|r| format!("(${}, ${})", 2 + r * 2, 3 + r * 2)).collect();
        let sql = format!(
            "INSERT INTO subscriptions ({}) SELECT {} FROM subscriptions t, (VALUES {}) AS v WHERE t.id = $1",
            names.join(", "),
            select.join(", "),
            values.join(", ")
        );
        let mut q = sqlx::query(AssertSqlSafe(sql)).bind(template.clone());
        for i in done..done + rows {
            // +46 76 ...: Swedish mobile numbers, ten million of them
            q = q.bind(uuid::Uuid::new_v4().to_string()).bind(format!("+4676{i:07}"));
        }
        q.execute(&mut *tx).await?;
        done += rows;
    }
    tx.commit().await?;
    if postgres {
        sqlx::query("ANALYZE subscriptions").execute(&pool).await?;
    }
    pool.close().await;
    println!("seeded {count} subscriptions for organisation {org} in {:.1}s", started.elapsed().as_secs_f64());
    Ok(())
}
