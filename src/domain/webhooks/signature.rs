//! Signing deliveries as Standard Webhooks does: `v1,` and the base64 of
//! HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}`, keyed by the
//! bytes the endpoint's secret encodes. During a rotation a delivery
//! carries one signature per live secret, space-separated, so a receiver
//! holding either secret accepts it.

use super::secret::PREFIX;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The signature of one delivery attempt under one secret.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Result<String, base64::DecodeError> {
    let key = STANDARD.decode(secret.strip_prefix(PREFIX).unwrap_or(secret))?;
    if key.is_empty() {
        // a secret that keys nothing (one no master key opened:
        // `store::UNREADABLE_SECRET`) signs nothing
        return Err(base64::DecodeError::InvalidLength(0));
    }
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).expect("HMAC takes a key of any length");
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    Ok(format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes())))
}

/// The `webhook-signature` header: a signature under each of `secrets`.
pub fn header(secrets: &[&str], id: &str, timestamp: i64, body: &[u8]) -> Result<String, base64::DecodeError> {
    let signatures = secrets.iter().map(|s| sign(s, id, timestamp, body)).collect::<Result<Vec<_>, _>>()?;
    Ok(signatures.join(" "))
}

#[cfg(test)]
mod tests {
    /// The reference vector of the Standard Webhooks libraries.
    #[test]
    fn signs_as_the_standard_webhooks_reference_does() {
        let signed = super::sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, br#"{"test": 2432232314}"#);
        assert_eq!(signed.unwrap(), "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn a_rotation_signs_under_both_secrets() {
        let (old, new) = (super::super::secret::mint(), super::super::secret::mint());
        let h = super::header(&[&new, &old], "evt", 1, b"{}").unwrap();
        let parts: Vec<&str> = h.split(' ').collect();
        assert_eq!(parts, [super::sign(&new, "evt", 1, b"{}").unwrap(), super::sign(&old, "evt", 1, b"{}").unwrap()]);
    }
}
