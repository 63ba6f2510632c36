//! Email login: start mails a 6-digit code and answers with the nonce of
//! the attempt; verify trades the code for an access token and the first
//! refresh token of the session; refresh trades that for the next pair.
//!
//! Start answers alike for every address: it does the same work (a user
//! lookup, a code drawn and hashed, one challenge row and one outbox row,
//! in one transaction) whether or not a user matched, and mail leaves
//! through the outbox, never inside the request, so neither the answer nor
//! its timing tells whether the address has an account (`cargo xtask bench
//! login` measures it).

use crate::error::{Error, InternalCode, Result};
use crate::store::{NewChallenge, NewRefresh, Refreshed, Store, email_key};
use crate::tokens::Tokens;
use crate::wire::latest as wire;
use chrono::{DateTime, Duration, Utc};
use rand::{Rng, RngCore};
use uuid::Uuid;

/// Which organisation a login looks in, from the optional X-Api-Key.
#[derive(Debug, Clone, Copy)]
pub enum Scope {
    /// no key: the address must belong to a user of exactly one organisation
    Anywhere,
    Organisation(Uuid),
    /// a key that is not valid finds no one
    Nowhere,
}

/// What login needs from the server.
pub struct Login {
    pub store: Store,
    pub tokens: std::sync::Arc<Tokens>,
    pub code_seconds: i64,
    /// wrong codes an address may send in a day (`--login-failures-per-day`)
    pub max_failures: u32,
    /// how long a refresh token lives unused (`--refresh-token-seconds`)
    pub refresh_seconds: i64,
    pub now: DateTime<Utc>,
}

/// Challenges are deleted this long after they expire.
const FORGET_AFTER_HOURS: i64 = 24;

fn nonce() -> String {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    format!("lgn_{}", hex::encode(bytes))
}

/// Six digits, uniform over 000000..=999999, from the thread's CSPRNG.
fn code() -> String {
    format!("{:06}", rand::rng().random_range(0..1_000_000u32))
}

fn unauthorized(code: InternalCode, message: &str) -> Error {
    Error::Unauthorized { code, message: message.into() }
}

impl Login {
    /// 429 while the address has had too many wrong codes: the lockout
    /// every instance sees, as the count is in the database. It holds for
    /// addresses with and without an account alike.
    async fn refuse_if_locked(&self, key: &str) -> Result<()> {
        match self.store.login_locked_until(key, self.max_failures, self.now).await? {
            Some(until) => Err(Error::TooMany {
                message: format!(
                    "Too many wrong login codes for this email address; login for it opens again at {}.",
                    until.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                ),
                retry_after: u64::try_from((until - self.now).num_seconds()).unwrap_or(0).max(1),
            }),
            None => Ok(()),
        }
    }

    pub async fn start(&self, scope: Scope, email: &str) -> Result<(wire::EmailLoginChallenge, bool)> {
        let key = email_key(email);
        self.refuse_if_locked(&key).await?;
        let org = match scope {
            Scope::Anywhere => None,
            Scope::Organisation(o) => Some(o),
            // the same query as any other scope, matching no organisation
            Scope::Nowhere => Some(Uuid::nil()),
        };
        let users = self.store.login_users(&key, org).await?;
        let nonce = nonce();
        let code = code();
        let code_hash = self.tokens.code_hash(&nonce, &code);
        let expires_at = self.now + Duration::seconds(self.code_seconds);
        let user = match users.as_slice() {
            [one] => Some(*one),
            _ => None,
        };
        let challenge = NewChallenge { nonce: &nonce, email_key: &key, scope_org: org, user, code_hash: &code_hash, created_at: self.now, expires_at };
        let mut tx = self.store.begin().await?;
        Store::insert_challenge(&mut tx, &challenge, self.now - Duration::hours(FORGET_AFTER_HOURS)).await?;
        let minutes = (self.code_seconds + 59) / 60;
        let mail = match users.len() {
            0 => None,
            1 => Some((
                format!("Your login code: {code}"),
                format!(
                    "Your Switchboard login code is {code}.\n\nIt works once, for {minutes} minutes (until {}).\n\
                     If you did not ask to sign in, ignore this mail: no one can sign in without the code.\n",
                    expires_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                ),
            )),
            // the address is a user in several organisations: only the
            // organisation's own application (sending its API key) can say which
            _ => Some((
                "Sign in through your organisation's application".to_string(),
                "Someone asked to sign in to Switchboard with this address, which belongs to accounts in \
                 several organisations.\nSign in through your organisation's own application instead.\n\
                 If this was not you, ignore this mail.\n"
                    .to_string(),
            )),
        };
        // an address without a user gets a discarded outbox row instead of
        // a mail, so both cases write the same rows
        let queued = mail.is_some();
        match mail {
            Some((subject, body)) => Store::queue_mail(&mut tx, email.trim(), &subject, &body, self.now).await?,
            None => Store::discard_mail(&mut tx, self.now).await?,
        }
        tx.commit().await?;
        let challenge = wire::EmailLoginChallenge { nonce, expires_in: self.code_seconds, created_at: self.now, expires_at };
        Ok((challenge, queued))
    }

    /// The token for a right code. Every failure is the same 401, so verify
    /// reveals no more than start does.
    pub async fn verify(&self, scope: Scope, req: &wire::EmailLoginVerifyRequest) -> Result<wire::AccessToken> {
        let refused = || unauthorized(InternalCode::InvalidLoginCode, "The login code is wrong, expired or used up.");
        if let Scope::Nowhere = scope {
            return Err(unauthorized(InternalCode::InvalidApiKey, "The API key is unknown or revoked."));
        }
        let key = email_key(&req.email);
        // (a locked address redeems nothing, right code or not: the
        // redemption checks the lock as it writes, and the refusal says so)
        let hash = self.tokens.code_hash(&req.nonce, &req.code);
        // (a redemption refused below for its organisation keeps this
        // token stored, never shown to anyone, until it expires)
        let (refresh, refresh_hash) = self.tokens.new_refresh();
        let first = NewRefresh { token_hash: &refresh_hash, family: Uuid::new_v4(), family_started_at: self.now, expires_at: self.refresh_expiry() };
        let Some(redeemed) = self.store.redeem_challenge(&req.nonce, &key, &hash, self.max_failures, self.now, &first).await? else {
            // the wrong code that reaches the limit says so at once
            self.refuse_if_locked(&key).await?;
            return Err(refused());
        };
        // a code started for one organisation is not redeemed with another's key
        if let Scope::Organisation(org) = scope
            && (org != redeemed.org || redeemed.scope_org.is_some_and(|s| s != org))
        {
            return Err(refused());
        }
        Ok(self.answer(redeemed.user_id, redeemed.org, refresh))
    }

    /// The next access token and refresh token for a live refresh token.
    /// Every refusal is the same 401, reuse too (which also ends the
    /// session: see `Store::use_refresh_token`).
    pub async fn refresh(&self, scope: Scope, req: &wire::RefreshTokenRequest) -> Result<wire::AccessToken> {
        let org = match scope {
            Scope::Nowhere => return Err(unauthorized(InternalCode::InvalidApiKey, "The API key is unknown or revoked.")),
            Scope::Anywhere => None,
            Scope::Organisation(o) => Some(o),
        };
        let (next, next_hash) = self.tokens.new_refresh();
        let used = self.tokens.refresh_hash(&req.refresh_token);
        match self.store.use_refresh_token(&used, org, &next_hash, self.refresh_expiry(), self.now).await? {
            Refreshed::Granted { user, org } => Ok(self.answer(user, org, next)),
            Refreshed::Reused | Refreshed::Refused => {
                Err(unauthorized(InternalCode::InvalidRefreshToken, "The refresh token is unknown, used, expired or ended; sign in again."))
            }
        }
    }

    fn refresh_expiry(&self) -> DateTime<Utc> {
        self.now + Duration::seconds(self.refresh_seconds)
    }

    fn answer(&self, user: Uuid, org: Uuid, refresh_token: String) -> wire::AccessToken {
        wire::AccessToken {
            access_token: self.tokens.issue(user, org, self.now),
            token_type: wire::AccessTokenTokenType::Bearer,
            expires_in: self.tokens.lifetime_seconds,
            refresh_token,
            refresh_expires_in: self.refresh_seconds,
            user_id: Some(user),
        }
    }
}
