//! Verifying webhook deliveries, as Standard Webhooks has it: each delivery
//! carries `webhook-id` (the event's id, the same on every attempt),
//! `webhook-timestamp` (unix seconds of the attempt) and
//! `webhook-signature` (`v1,` and the base64 of HMAC-SHA256 over
//! `{id}.{timestamp}.{body}`; two, space-separated, while the endpoint's
//! secret is being rotated).
//!
//! ```no_run
//! use CRATE_NAME::webhooks;
//!
//! # fn receive(headers: &reqwest::header::HeaderMap, body: &[u8]) -> Result<(), Box<dyn std::error::Error>> {
//! let secret = "whsec_..."; // shown when the endpoint was created
//! let event = webhooks::verify(secret, headers, body, std::time::Duration::from_secs(300))?;
//! match event.type_.as_str() {
//!     "order.submitted" => { /* event.data is the Order */ }
//!     _ => {}
//! }
//! # Ok(()) }
//! ```

use crate::types::EventEnvelope;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use reqwest::header::HeaderMap;
use sha2::Sha256;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Why a delivery was not accepted.
#[derive(Debug)]
pub enum VerifyError {
    /// a `webhook-*` header is missing or not text
    MissingHeader(&'static str),
    /// `webhook-timestamp` is not a number of seconds
    InvalidTimestamp,
    /// the attempt is older, or further in the future, than the tolerance
    TimestampOutOfTolerance,
    /// the secret is not `whsec_` and base64
    InvalidSecret,
    /// no signature of the header was made with the secret
    InvalidSignature,
    /// the signature holds, but the body is not an event
    InvalidBody(serde_json::Error),
}

impl std::fmt::Display for VerifyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VerifyError::MissingHeader(h) => write!(f, "the {h} header is missing"),
            VerifyError::InvalidTimestamp => write!(f, "webhook-timestamp is not a unix time"),
            VerifyError::TimestampOutOfTolerance => write!(f, "webhook-timestamp is outside the tolerance"),
            VerifyError::InvalidSecret => write!(f, "the secret is not whsec_ and base64"),
            VerifyError::InvalidSignature => write!(f, "no signature matches the secret"),
            VerifyError::InvalidBody(e) => write!(f, "the body is not an event: {e}"),
        }
    }
}

impl std::error::Error for VerifyError {}

/// The event a delivery carries, once its signature is checked against
/// `secret` and its timestamp is within `tolerance` of now (5 minutes is
/// usual). Pass the body exactly as received, before any parsing.
pub fn verify(secret: &str, headers: &HeaderMap, body: &[u8], tolerance: Duration) -> Result<EventEnvelope, VerifyError> {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    verify_at(secret, headers, body, tolerance, now)
}

/// [`verify`] at `now` (unix seconds).
pub fn verify_at(secret: &str, headers: &HeaderMap, body: &[u8], tolerance: Duration, now: i64) -> Result<EventEnvelope, VerifyError> {
    let header = |name: &'static str| headers.get(name).and_then(|v| v.to_str().ok()).ok_or(VerifyError::MissingHeader(name));
    let id = header("webhook-id")?;
    let timestamp: i64 = header("webhook-timestamp")?.trim().parse().map_err(|_| VerifyError::InvalidTimestamp)?;
    let signatures = header("webhook-signature")?;
    // (abs_diff: a timestamp far from now overflows a subtraction)
    if now.abs_diff(timestamp) > tolerance.as_secs() {
        return Err(VerifyError::TimestampOutOfTolerance);
    }
    let key = STANDARD.decode(secret.strip_prefix("whsec_").unwrap_or(secret)).map_err(|_| VerifyError::InvalidSecret)?;
    let signed = format!("{id}.{timestamp}.");
    let matches = signatures.split(' ').filter_map(|s| s.strip_prefix("v1,")).any(|s| {
        let Ok(given) = STANDARD.decode(s) else { return false };
        let mut mac = Hmac::<Sha256>::new_from_slice(&key).expect("HMAC takes a key of any length");
        mac.update(signed.as_bytes());
        mac.update(body);
        // constant time
        mac.verify_slice(&given).is_ok()
    });
    if !matches {
        return Err(VerifyError::InvalidSignature);
    }
    serde_json::from_slice(body).map_err(VerifyError::InvalidBody)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the fuzz target `sdk_webhook_verify`: a timestamp at either
    /// end of i64 overflowed the distance to now (a panic in a debug build).
    #[test]
    fn a_timestamp_at_the_end_of_the_range_is_out_of_tolerance() {
        for (timestamp, now) in [(i64::MIN, 1_614_265_330), (i64::MAX, -1), (i64::MIN, i64::MAX)] {
            let mut headers = HeaderMap::new();
            headers.insert("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek".parse().unwrap());
            headers.insert("webhook-timestamp", timestamp.to_string().parse().unwrap());
            headers.insert("webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=".parse().unwrap());
            let verdict = verify_at("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", &headers, b"{}", Duration::from_secs(300), now);
            assert!(matches!(verdict, Err(VerifyError::TimestampOutOfTolerance)), "{verdict:?}");
        }
    }
}
