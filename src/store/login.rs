//! Email login state: server secrets, login challenges (one per started
//! login, its code only as a keyed hash), and the user lookups login needs.

use super::{NewRefresh, Store, Tx, parse_ts, parse_uuid, ts};
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use sqlx::Row;
use uuid::Uuid;

/// Verifications a challenge allows; the sixth is refused even with the right code.
pub const MAX_ATTEMPTS: i64 = 5;

/// Wrong codes for an address count for this long from the first.
pub const FAILURE_WINDOW_HOURS: i64 = 24;

/// The start of the failure window that is still open at `now`.
fn window_open_since(now: DateTime<Utc>) -> String {
    ts(now - chrono::Duration::hours(FAILURE_WINDOW_HOURS))
}

pub struct NewChallenge<'a> {
    pub nonce: &'a str,
    pub email_key: &'a str,
    /// the organisation of the X-Api-Key sent with start, if any
    pub scope_org: Option<Uuid>,
    /// the user the address belongs to (and their organisation), if exactly one
    pub user: Option<(Uuid, Uuid)>,
    pub code_hash: &'a str,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

/// A verification that matched: the user and the organisation it was for.
pub struct Redeemed {
    pub user_id: Uuid,
    pub org: Uuid,
    pub scope_org: Option<Uuid>,
}

impl Store {
    /// The secret named `name`: the stored one, or `fresh` stored now. Every
    /// instance that starts over this database ends up with the same value.
    /// It is sealed at rest (`sealed`).
    pub async fn server_secret(&self, name: &str, fresh: &str, now: DateTime<Utc>) -> Result<String> {
        let place = super::sealed::SERVER_SECRET.place(name);
        let mut tx = self.begin().await?;
        tx.execute(
            sqlx::query("INSERT INTO server_secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING")
                .bind(name)
                .bind(self.sealing.seal(&place, fresh))
                .bind(ts(now)),
        )
        .await?;
        let row = sqlx::query("SELECT value FROM server_secrets WHERE name = $1").bind(name).fetch_one(tx.conn().await?).await?;
        tx.commit().await?;
        self.sealing.open(&place, &row.try_get::<String, _>("value")?).map_err(|e| Error::Internal(format!("the server secret {name}: {e}")))
    }

    /// Users who sign in with this address, or wait to confirm it as
    /// theirs: `(user, organisation)`, in `org` only when given. At most
    /// two are returned (two means "ambiguous").
    pub async fn login_users(&self, email_key: &str, org: Option<Uuid>) -> Result<Vec<(Uuid, Uuid)>> {
        let rows =
            sqlx::query("SELECT id, org_id FROM users WHERE (email_key = $1 OR pending_email_key = $1) AND ($2 IS NULL OR org_id = $2) ORDER BY seq LIMIT 2")
                .bind(email_key)
                .bind(org.map(|o| o.to_string()))
                .fetch_all(&self.pool)
                .await?;
        rows.iter().map(|r| Ok((parse_uuid(&r.try_get::<String, _>("id")?)?, parse_uuid(&r.try_get::<String, _>("org_id")?)?))).collect()
    }

    /// Until when login for the address is refused: `max` wrong codes or
    /// more within the window still open; None when it is not.
    pub async fn login_locked_until(&self, email_key: &str, max: u32, now: DateTime<Utc>) -> Result<Option<DateTime<Utc>>> {
        let row = sqlx::query("SELECT since FROM login_failures WHERE email_key = $1 AND failures >= $2 AND since > $3")
            .bind(email_key)
            .bind(i64::from(max))
            .bind(window_open_since(now))
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| Ok(parse_ts(&r.try_get::<String, _>("since")?)? + chrono::Duration::hours(FAILURE_WINDOW_HOURS))).transpose()
    }

    /// Records a started login: the only live one of its address (every
    /// earlier one expires now, so guesses cannot be spread over several
    /// codes); forgets challenges long expired and wrong codes whose window
    /// has closed.
    pub async fn insert_challenge(tx: &mut Tx, c: &NewChallenge<'_>, forget_before: DateTime<Utc>) -> Result<()> {
        tx.execute(sqlx::query("DELETE FROM login_challenges WHERE expires_at < $1").bind(ts(forget_before))).await?;
        tx.execute(sqlx::query("DELETE FROM login_failures WHERE since <= $1").bind(window_open_since(c.created_at))).await?;
        tx.execute(
            sqlx::query("UPDATE login_challenges SET expires_at = $2 WHERE email_key = $1 AND expires_at > $2").bind(c.email_key).bind(ts(c.created_at)),
        )
        .await?;
        tx.execute(
            sqlx::query(
                "INSERT INTO login_challenges (nonce, email_key, scope_org_id, user_id, user_org_id, code_hash, created_at, expires_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(c.nonce)
            .bind(c.email_key)
            .bind(c.scope_org.map(|o| o.to_string()))
            .bind(c.user.map(|(u, _)| u.to_string()))
            .bind(c.user.map(|(_, o)| o.to_string()))
            .bind(c.code_hash)
            .bind(ts(c.created_at))
            .bind(ts(c.expires_at)),
        )
        .await?;
        Ok(())
    }

    /// One verification of a challenge, as one atomic step: when `code_hash`
    /// matches a live challenge (unused, unexpired, under the attempt limit,
    /// for this address, with a user) and the address is not locked (`max`
    /// wrong codes in the window), it is used up, the address's wrong codes
    /// are forgotten, the pending address it names confirmed, and its user
    /// returned; otherwise the attempt is counted
    /// against the nonce and a wrong code against the address. A
    /// redemption stores `refresh`, the first refresh token of the session
    /// it begins, in the same commit.
    pub async fn redeem_challenge(
        &self,
        nonce: &str,
        email_key: &str,
        code_hash: &str,
        max: u32,
        now: DateTime<Utc>,
        refresh: &NewRefresh<'_>,
    ) -> Result<Option<Redeemed>> {
        let mut tx = self.begin().await?;
        let row = sqlx::query(
            "UPDATE login_challenges SET used_at = $4, attempts = attempts + 1
             WHERE nonce = $1 AND email_key = $2 AND code_hash = $3 AND used_at IS NULL
               AND attempts < $5 AND expires_at > $4 AND user_id IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM login_failures f WHERE f.email_key = $2 AND f.failures >= $6 AND f.since > $7)
             RETURNING user_id, user_org_id, scope_org_id",
        )
        .bind(nonce)
        .bind(email_key)
        .bind(code_hash)
        .bind(ts(now))
        .bind(MAX_ATTEMPTS)
        .bind(i64::from(max))
        .bind(window_open_since(now))
        .fetch_optional(tx.conn().await?)
        .await?;
        let redeemed = match row {
            Some(r) => {
                let redeemed = Redeemed {
                    user_id: parse_uuid(&r.try_get::<String, _>("user_id")?)?,
                    org: parse_uuid(&r.try_get::<String, _>("user_org_id")?)?,
                    scope_org: r.try_get::<Option<String>, _>("scope_org_id")?.map(|o| parse_uuid(&o)).transpose()?,
                };
                tx.execute(sqlx::query("DELETE FROM login_failures WHERE email_key = $1").bind(email_key.to_string())).await?;
                // a sign-in with the user's pending address confirms it: it
                // becomes their address, and every session begun before ends
                // (the token this redemption earns is issued after `now`)
                tx.execute(
                    sqlx::query(
                        "UPDATE users SET email = pending_email, email_key = pending_email_key, pending_email = NULL,
                           pending_email_key = NULL, sessions_from = $1, updated_at = $1
                         WHERE id = $2 AND org_id = $3 AND pending_email_key = $4",
                    )
                    .bind(ts(now))
                    .bind(redeemed.user_id.to_string())
                    .bind(redeemed.org.to_string())
                    .bind(email_key.to_string()),
                )
                .await?;
                Store::insert_refresh_token(&mut tx, redeemed.org, redeemed.user_id, refresh, now).await?;
                Some(redeemed)
            }
            None => {
                tx.execute(
                    sqlx::query("UPDATE login_challenges SET attempts = attempts + 1 WHERE nonce = $1 AND used_at IS NULL AND attempts < $2")
                        .bind(nonce.to_string())
                        .bind(MAX_ATTEMPTS),
                )
                .await?;
                // a window that closed starts over at this wrong code
                tx.execute(
                    sqlx::query(
                        "INSERT INTO login_failures (email_key, failures, since) VALUES ($1, 1, $2)
                         ON CONFLICT (email_key) DO UPDATE SET
                           failures = CASE WHEN login_failures.since > $3 THEN login_failures.failures + 1 ELSE 1 END,
                           since = CASE WHEN login_failures.since > $3 THEN login_failures.since ELSE $2 END",
                    )
                    .bind(email_key.to_string())
                    .bind(ts(now))
                    .bind(window_open_since(now)),
                )
                .await?;
                None
            }
        };
        tx.commit().await?;
        Ok(redeemed)
    }
}
