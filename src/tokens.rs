//! Access tokens: JWTs signed with HS256 (the only algorithm accepted, so
//! `alg: none` and key-confusion tricks fail), carrying the user, the
//! organisation, issue and expiry times and a token id. Expiry is checked
//! against the server's `Clock`, not the library's wall clock. The same
//! server secret, under different labels, keys the hashes of login codes
//! and of refresh tokens.

use crate::store::Store;
use anyhow::{Context as _, bail};
use base64::Engine;
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use uuid::Uuid;

/// Where a generated secret is kept (table server_secrets).
const SECRET_NAME: &str = "token_secret";
/// A configured secret shorter than this is refused: HS256 wants 256 bits.
pub const MIN_SECRET_BYTES: usize = 32;

#[derive(Debug, Serialize, Deserialize)]
pub struct Claims {
    /// the user
    pub sub: Uuid,
    /// the user's organisation
    pub org: Uuid,
    pub iat: i64,
    pub exp: i64,
    /// token id
    pub jti: Uuid,
    /// when it was issued, in milliseconds (`iat` has whole seconds): a
    /// user's sessions may start over within a second (`sessions_from`);
    /// 0 in a token issued before the claim existed
    #[serde(default)]
    pub iat_ms: i64,
}

/// Why a bearer token was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    Expired,
    Invalid,
}

pub struct Tokens {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    code_key: Vec<u8>,
    /// keys the stored hashes of refresh tokens
    refresh_key: Vec<u8>,
    /// signs report files' download URLs (`domain::reports::download`)
    download_key: Vec<u8>,
    pub lifetime_seconds: i64,
}

fn derive(secret: &[u8], label: &str) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(label.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

impl Tokens {
    /// The configured secret, else the one stored in the database (made and
    /// stored now when this is the first start).
    pub async fn load(store: &Store, now: DateTime<Utc>, configured: Option<&str>, lifetime_seconds: u32) -> anyhow::Result<Tokens> {
        let secret = match configured {
            Some(s) if s.len() < MIN_SECRET_BYTES => bail!("the token secret must be at least {MIN_SECRET_BYTES} bytes"),
            Some(s) => s.to_string(),
            None => {
                let mut bytes = [0u8; 32];
                rand::rng().fill_bytes(&mut bytes);
                let fresh = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
                store.server_secret(SECRET_NAME, &fresh, now).await.context("loading the token secret")?
            }
        };
        Ok(Tokens::new(secret.as_bytes(), lifetime_seconds))
    }

    pub fn new(secret: &[u8], lifetime_seconds: u32) -> Tokens {
        let signing = derive(secret, "switchboard access token HS256");
        let mut validation = Validation::new(Algorithm::HS256);
        // expiry is ours to check, on the server's clock
        validation.validate_exp = false;
        validation.required_spec_claims.clear();
        Tokens {
            encoding: EncodingKey::from_secret(&signing),
            decoding: DecodingKey::from_secret(&signing),
            validation,
            code_key: derive(secret, "switchboard login code"),
            refresh_key: derive(secret, "switchboard refresh token"),
            download_key: derive(secret, "switchboard report download"),
            lifetime_seconds: i64::from(lifetime_seconds),
        }
    }

    /// The key of report files' download URLs: the server's secret under a
    /// label of its own, so every instance over the database signs alike.
    pub fn download_key(&self) -> &[u8] {
        &self.download_key
    }

    /// A token for `user` of `org`, valid from `now` for the lifetime.
    pub fn issue(&self, user: Uuid, org: Uuid, now: DateTime<Utc>) -> String {
        let iat = now.timestamp();
        let claims = Claims { sub: user, org, iat, exp: iat + self.lifetime_seconds, jti: Uuid::new_v4(), iat_ms: now.timestamp_millis() };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding).expect("HS256 signing cannot fail")
    }

    /// The claims of a token signed by this server and not expired at `now`.
    pub fn verify(&self, token: &str, now: DateTime<Utc>) -> Result<Claims, Refusal> {
        let data = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation).map_err(|_| Refusal::Invalid)?;
        if data.claims.exp <= now.timestamp() {
            return Err(Refusal::Expired);
        }
        Ok(data.claims)
    }

    /// The stored form of a login code: keyed by the server secret, so a
    /// copy of the database does not let anyone try the million codes.
    pub fn code_hash(&self, nonce: &str, code: &str) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.code_key).expect("HMAC takes any key length");
        mac.update(nonce.as_bytes());
        mac.update(b":");
        mac.update(code.as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }

    /// A new refresh token: 256 bits from the CSPRNG, with its stored form.
    pub fn new_refresh(&self) -> (String, String) {
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        let token = format!("rft_{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes));
        let hash = self.refresh_hash(&token);
        (token, hash)
    }

    /// The stored form of a refresh token, keyed like the codes' so that a
    /// copy of the database names no usable token.
    pub fn refresh_hash(&self, token: &str) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.refresh_key).expect("HMAC takes any key length");
        mac.update(token.as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }
}
