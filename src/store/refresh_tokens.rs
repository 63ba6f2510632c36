//! Refresh tokens: a login's session as a family of single-use tokens,
//! each kept only as its keyed hash. A use is one atomic step: the token
//! is spent and its successor stored, or, when it was spent before, its
//! whole family is revoked (reuse means a copy is in someone else's hands).

use super::{Store, Tx, parse_ts, parse_uuid, ts};
use crate::error::Result;
use chrono::{DateTime, Utc};
use sqlx::Row;
use uuid::Uuid;

/// A refresh token to store.
pub struct NewRefresh<'a> {
    pub token_hash: &'a str,
    pub family: Uuid,
    /// when the family's login was: a user's `sessions_from` after it ends it
    pub family_started_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

/// What one use of a refresh token came to.
pub enum Refreshed {
    /// spent; its successor is stored
    Granted { user: Uuid, org: Uuid },
    /// spent before: its family is revoked now
    Reused,
    /// unknown, expired, revoked, of an ended session or of another organisation
    Refused,
}

impl Store {
    /// Stores `r` for `user` of `org`, in the transaction that earned it;
    /// forgets tokens expired before `now` (a spent one is kept until its
    /// expiry, to recognise its reuse).
    pub async fn insert_refresh_token(tx: &mut Tx, org: Uuid, user: Uuid, r: &NewRefresh<'_>, now: DateTime<Utc>) -> Result<()> {
        tx.execute(sqlx::query("DELETE FROM refresh_tokens WHERE expires_at <= $1").bind(ts(now))).await?;
        tx.execute(
            sqlx::query(
                "INSERT INTO refresh_tokens (token_hash, family_id, org_id, user_id, family_started_at, created_at, expires_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(r.token_hash.to_string())
            .bind(r.family.to_string())
            .bind(org.to_string())
            .bind(user.to_string())
            .bind(ts(r.family_started_at))
            .bind(ts(now))
            .bind(ts(r.expires_at)),
        )
        .await?;
        Ok(())
    }

    /// One use of the refresh token hashed `token_hash`, in `org` when
    /// given: while it is live (unspent, unrevoked, unexpired, its user's
    /// sessions not started over since its login) it is spent and `next`
    /// (its `family` and `family_started_at` are taken from the spent one)
    /// stored in the same commit.
    pub async fn use_refresh_token(
        &self,
        token_hash: &str,
        org: Option<Uuid>,
        next_hash: &str,
        next_expires: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Refreshed> {
        let mut tx = self.begin().await?;
        // the organisation as a condition of the spend itself, so another
        // organisation's key spends nothing ('' for any organisation)
        let row = sqlx::query(
            "UPDATE refresh_tokens SET used_at = $2
             WHERE token_hash = $1 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > $2
               AND ($3 = '' OR org_id = $3)
               AND EXISTS (SELECT 1 FROM users u WHERE u.id = refresh_tokens.user_id AND u.org_id = refresh_tokens.org_id
                           AND (u.sessions_from IS NULL OR u.sessions_from <= refresh_tokens.family_started_at))
             RETURNING family_id, org_id, user_id, family_started_at",
        )
        .bind(token_hash)
        .bind(ts(now))
        .bind(org.map(|o| o.to_string()).unwrap_or_default())
        .fetch_optional(tx.conn().await?)
        .await?;
        if let Some(r) = row {
            let (user, org) = (parse_uuid(&r.try_get::<String, _>("user_id")?)?, parse_uuid(&r.try_get::<String, _>("org_id")?)?);
            let next = NewRefresh {
                token_hash: next_hash,
                family: parse_uuid(&r.try_get::<String, _>("family_id")?)?,
                family_started_at: parse_ts(&r.try_get::<String, _>("family_started_at")?)?,
                expires_at: next_expires,
            };
            Store::insert_refresh_token(&mut tx, org, user, &next, now).await?;
            tx.commit().await?;
            return Ok(Refreshed::Granted { user, org });
        }
        // spent before (by whoever): the family ends, whichever organisation asked
        let spent = sqlx::query("SELECT family_id FROM refresh_tokens WHERE token_hash = $1 AND used_at IS NOT NULL")
            .bind(token_hash)
            .fetch_optional(tx.conn().await?)
            .await?;
        let Some(spent) = spent else { return Ok(Refreshed::Refused) };
        let family = spent.try_get::<String, _>("family_id")?;
        tx.execute(sqlx::query("UPDATE refresh_tokens SET revoked_at = $1 WHERE family_id = $2 AND revoked_at IS NULL").bind(ts(now)).bind(family)).await?;
        tx.commit().await?;
        Ok(Refreshed::Reused)
    }
}
