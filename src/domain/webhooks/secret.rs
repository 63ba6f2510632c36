//! Signing secrets of webhook endpoints, in the Standard Webhooks form.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rand::RngCore;

/// What every secret starts with.
pub const PREFIX: &str = "whsec_";

/// A new secret: `whsec_` and the base64 of 32 random bytes.
pub fn mint() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("{PREFIX}{}", STANDARD.encode(bytes))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_secret_is_the_prefix_and_32_bytes_in_base64() {
        use base64::Engine;
        let s = super::mint();
        let key = s.strip_prefix(super::PREFIX).expect("prefix");
        assert_eq!(base64::engine::general_purpose::STANDARD.decode(key).expect("base64").len(), 32);
        assert_ne!(s, super::mint());
    }
}
