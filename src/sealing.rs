//! Secrets at rest: what only the server may read back (webhook endpoints'
//! signing secrets, the server's own secret that signs access tokens and
//! download URLs) is sealed with AES-256-GCM under the master key from
//! configuration before it is written, and opened as it is read. API keys,
//! login codes and lease tokens are not here: they are kept only as hashes.
//!
//! A sealed value is `sealed:v1:KEY:NONCE_AND_CIPHERTEXT` (the key's id,
//! then base64url). Its place (table, column, row) is the AEAD's associated
//! data, so a value copied into another row does not open. Without a
//! master key values are written in plain, as they were before sealing
//! existed; with one, a plain value still opens (it is from before), and
//! `reseal` seals it. Rotation: the new key becomes `--master-key`, the old
//! one goes to `--previous-master-keys` until `reseal` has moved every
//! value (docs/operating.md, Secrets at rest).

use aws_lc_rs::aead::{AES_256_GCM, Aad, NONCE_LEN, Nonce, RandomizedNonceKey};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// What every sealed value starts with; then the format's version. A value
/// with this prefix in a version this binary does not know is refused,
/// never taken for a plain one.
const SEALED: &str = "sealed:";
const PREFIX: &str = "sealed:v1:";
/// A master key's length: AES-256.
pub const KEY_BYTES: usize = 32;

/// One master key and its id (which a sealed value names).
struct MasterKey {
    id: String,
    key: RandomizedNonceKey,
}

impl MasterKey {
    /// A key given as the base64 of 32 bytes (`openssl rand -base64 32`).
    fn parse(text: &str) -> anyhow::Result<MasterKey> {
        let bytes = STANDARD
            .decode(text.trim())
            .map_err(|_| anyhow::anyhow!("a master key is the base64 of {KEY_BYTES} random bytes (openssl rand -base64 {KEY_BYTES})"))?;
        if bytes.len() != KEY_BYTES {
            anyhow::bail!("a master key is {KEY_BYTES} bytes; this one is {}", bytes.len());
        }
        // the id names the key without saying anything of it
        let mut mac = Hmac::<Sha256>::new_from_slice(&bytes).expect("HMAC takes any key length");
        mac.update(b"switchboard master key id");
        let id = hex::encode(&mac.finalize().into_bytes()[..4]);
        let key = RandomizedNonceKey::new(&AES_256_GCM, &bytes).map_err(|_| anyhow::anyhow!("AES-256-GCM refused the master key"))?;
        Ok(MasterKey { id, key })
    }
}

/// Why a stored value could not be opened.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Unsealable {
    #[error("a secret at rest is sealed under master key {0}, which is not configured (--master-key, --previous-master-keys)")]
    UnknownKey(String),
    #[error("a secret at rest does not open under master key {0}: altered, or moved from another row")]
    Altered(String),
    #[error("a secret at rest is not in the sealed form this version reads")]
    Malformed,
}

/// The master keys this process has: the one that seals, and older ones
/// that still open.
#[derive(Default)]
pub struct Sealing {
    current: Option<MasterKey>,
    previous: Vec<MasterKey>,
}

impl std::fmt::Debug for Sealing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sealing").field("current", &self.current_id()).field("previous", &self.previous.iter().map(|k| &k.id).collect::<Vec<_>>()).finish()
    }
}

impl Sealing {
    /// No master key: values are written in plain.
    pub fn none() -> Sealing {
        Sealing::default()
    }

    /// The configured keys. Previous keys need a current one: they only open.
    pub fn new(current: Option<&str>, previous: &[String]) -> anyhow::Result<Sealing> {
        let previous: Vec<MasterKey> = previous.iter().filter(|k| !k.trim().is_empty()).map(|k| MasterKey::parse(k)).collect::<anyhow::Result<_>>()?;
        let current = current.filter(|k| !k.trim().is_empty()).map(MasterKey::parse).transpose()?;
        if current.is_none() && !previous.is_empty() {
            anyhow::bail!("--previous-master-keys needs --master-key: previous keys only open what the current one will reseal");
        }
        let mut ids: Vec<&str> = current.iter().chain(&previous).map(|k| k.id.as_str()).collect();
        ids.sort_unstable();
        if let Some(twice) = ids.windows(2).find(|w| w[0] == w[1]) {
            anyhow::bail!("two master keys have the id {}: give each key once", twice[0]);
        }
        Ok(Sealing { current, previous })
    }

    /// The id of the key that seals, if any.
    pub fn current_id(&self) -> Option<&str> {
        self.current.as_ref().map(|k| k.id.as_str())
    }

    /// `plain`, sealed for `place` (`table.column:row`) under the current
    /// key; in plain without one.
    pub fn seal(&self, place: &str, plain: &str) -> String {
        let Some(current) = &self.current else { return plain.to_string() };
        let mut in_out = plain.as_bytes().to_vec();
        let nonce = current.key.seal_in_place_append_tag(Aad::from(place.as_bytes()), &mut in_out).expect("AES-GCM seals any length we store");
        let mut payload = nonce.as_ref().to_vec();
        payload.extend_from_slice(&in_out);
        format!("{PREFIX}{}:{}", current.id, URL_SAFE_NO_PAD.encode(payload))
    }

    /// The plain text of `stored`, read from `place`. A plain value (from
    /// before a master key was set) is its own text.
    pub fn open(&self, place: &str, stored: &str) -> Result<String, Unsealable> {
        if !stored.starts_with(SEALED) {
            return Ok(stored.to_string());
        }
        let rest = stored.strip_prefix(PREFIX).ok_or(Unsealable::Malformed)?;
        let (id, payload) = rest.split_once(':').ok_or(Unsealable::Malformed)?;
        let key = self.keys().find(|k| k.id == id).ok_or_else(|| Unsealable::UnknownKey(id.to_string()))?;
        let mut payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| Unsealable::Malformed)?;
        if payload.len() < NONCE_LEN {
            return Err(Unsealable::Malformed);
        }
        let mut in_out = payload.split_off(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(&payload).map_err(|_| Unsealable::Malformed)?;
        let plain = key.key.open_in_place(nonce, Aad::from(place.as_bytes()), &mut in_out).map_err(|_| Unsealable::Altered(id.to_string()))?;
        String::from_utf8(plain.to_vec()).map_err(|_| Unsealable::Malformed)
    }

    /// Whether `stored` should be sealed again: with a current key, it is
    /// plain or sealed under another key.
    pub fn needs_resealing(&self, stored: &str) -> bool {
        self.current_id().is_some_and(|id| sealed_under(stored) != Some(id))
    }

    /// Whether `stored` opens here without being sealed again: a process
    /// without a master key cannot open a sealed value.
    pub fn opens(&self, stored: &str) -> Result<(), Unsealable> {
        match sealed_under(stored) {
            Some(id) if !self.keys().any(|k| k.id == id) => Err(Unsealable::UnknownKey(id.to_string())),
            _ => Ok(()),
        }
    }

    fn keys(&self) -> impl Iterator<Item = &MasterKey> {
        self.current.iter().chain(&self.previous)
    }
}

/// The id of the key `stored` is sealed under; None for a plain value.
pub fn sealed_under(stored: &str) -> Option<&str> {
    stored.strip_prefix(PREFIX).and_then(|rest| rest.split_once(':')).map(|(id, _)| id)
}

/// A new master key, as configuration takes it.
pub fn new_master_key() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; KEY_BYTES];
    rand::rng().fill_bytes(&mut bytes);
    STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(current: &str, previous: &[&str]) -> Sealing {
        Sealing::new(Some(current), &previous.iter().map(|k| k.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn a_sealed_value_opens_in_its_place_only() {
        let a = new_master_key();
        let s = keys(&a, &[]);
        let sealed = s.seal("webhook_endpoints.secret:1", "whsec_abc");
        assert!(sealed.starts_with("sealed:v1:") && !sealed.contains("whsec_abc"), "{sealed}");
        assert_eq!(sealed_under(&sealed), s.current_id());
        assert_eq!(s.open("webhook_endpoints.secret:1", &sealed).unwrap(), "whsec_abc");
        // a fresh nonce each time
        assert_ne!(sealed, s.seal("webhook_endpoints.secret:1", "whsec_abc"));
        let id = s.current_id().unwrap().to_string();
        assert_eq!(s.open("webhook_endpoints.secret:2", &sealed), Err(Unsealable::Altered(id.clone())));
        let mut flipped = sealed.clone().into_bytes();
        let last = flipped.len() - 1;
        flipped[last] = if flipped[last] == b'A' { b'B' } else { b'A' };
        assert!(s.open("webhook_endpoints.secret:1", &String::from_utf8(flipped).unwrap()).is_err());
        assert_eq!(s.open("x", "sealed:v1:nocolon"), Err(Unsealable::Malformed));
        // a later format is refused, not taken for plain text
        assert_eq!(s.open("x", "sealed:v2:abcd:efgh"), Err(Unsealable::Malformed));
    }

    #[test]
    fn rotation_opens_with_the_previous_key_and_reseals_under_the_new() {
        let (a, b) = (new_master_key(), new_master_key());
        let old = keys(&a, &[]);
        let sealed = old.seal("p", "text");
        let rotated = keys(&b, &[&a]);
        assert_eq!(rotated.open("p", &sealed).unwrap(), "text");
        assert!(rotated.needs_resealing(&sealed) && rotated.needs_resealing("plain"));
        let resealed = rotated.seal("p", "text");
        assert!(!rotated.needs_resealing(&resealed));
        let only_b = keys(&b, &[]);
        assert_eq!(only_b.open("p", &sealed), Err(Unsealable::UnknownKey(old.current_id().unwrap().to_string())));
        assert!(!Sealing::none().needs_resealing("plain"));
        assert_eq!(Sealing::none().seal("p", "text"), "text");
    }

    #[test]
    fn a_bad_master_key_is_refused() {
        assert!(Sealing::new(Some("not base64!"), &[]).is_err());
        assert!(Sealing::new(Some(&STANDARD.encode([0u8; 16])), &[]).is_err());
        assert!(Sealing::new(None, &[new_master_key()]).is_err());
        assert!(Sealing::new(None, &[]).unwrap().current_id().is_none());
        let k = new_master_key();
        assert!(Sealing::new(Some(&k), std::slice::from_ref(&k)).unwrap_err().to_string().contains("two master keys have the id"));
        // without keys, a sealed value is named, not read
        let sealed = Sealing::new(Some(&k), &[]).unwrap().seal("p", "text");
        assert!(matches!(Sealing::none().opens(&sealed), Err(Unsealable::UnknownKey(_))));
        assert!(Sealing::none().opens("plain").is_ok());
    }
}
