//! A report file's download URL: `{public URL}/report-files/{reportRunId}
//! ?expires={unix seconds}&signature={hex}`, the signature an HMAC-SHA256
//! of the run and the expiry under the server's download key. Whoever
//! holds the URL may fetch the file until it expires; nothing else about
//! it can be changed without the signature failing. Expiry is by the
//! server's clock: the URL protects the server's data, whatever a sandbox
//! organisation's clock says.

use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use uuid::Uuid;

/// What signs a run's download URL, for one request.
#[derive(Clone)]
pub struct Signer {
    pub key: Vec<u8>,
    /// the server's public URL, without a trailing slash
    pub base: String,
    /// how long a URL works
    pub lifetime: chrono::Duration,
    /// the server's time
    pub now: DateTime<Utc>,
}

/// The path of a run's file, under the public URL.
pub const PATH: &str = "/report-files/";

/// The MAC of `run`'s URL expiring at `expires` (unix seconds).
fn mac(key: &[u8], run: Uuid, expires: i64) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(format!("{run}.{expires}").as_bytes());
    mac
}

impl Signer {
    /// A fresh URL of `run`'s file, and when it stops working.
    pub fn url(&self, run: Uuid) -> (String, DateTime<Utc>) {
        // whole seconds, as the URL carries it
        let expires = chrono::SubsecRound::trunc_subsecs(self.now + self.lifetime, 0);
        let sig = hex::encode(mac(&self.key, run, expires.timestamp()).finalize().into_bytes());
        (format!("{}{PATH}{run}?expires={}&signature={sig}", self.base, expires.timestamp()), expires)
    }
}

/// Whether `signature` (hex) signs `run` until `expires`, and that is
/// after `now`. The comparison takes the same time wherever they differ.
pub fn valid(key: &[u8], run: Uuid, expires: i64, signature_hex: &str, now: DateTime<Utc>) -> bool {
    let Ok(given) = hex::decode(signature_hex) else { return false };
    mac(key, run, expires).verify_slice(&given).is_ok() && now.timestamp() < expires
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signer(now: DateTime<Utc>) -> Signer {
        Signer { key: b"k".to_vec(), base: "http://x".into(), lifetime: chrono::Duration::minutes(15), now }
    }

    fn parts(url: &str) -> (i64, String) {
        let query = url.split_once('?').unwrap().1;
        let (e, s) = query.split_once('&').unwrap();
        (e.trim_start_matches("expires=").parse().unwrap(), s.trim_start_matches("signature=").to_string())
    }

    #[test]
    fn a_url_works_until_it_expires_and_not_for_another_run_or_time() {
        let now = "2026-11-02T09:00:00Z".parse().unwrap();
        let run = Uuid::new_v4();
        let (url, until) = signer(now).url(run);
        let (expires, sig) = parts(&url);
        assert_eq!(expires, until.timestamp());
        assert!(valid(b"k", run, expires, &sig, now));
        assert!(valid(b"k", run, expires, &sig, until - chrono::Duration::seconds(1)));
        assert!(!valid(b"k", run, expires, &sig, until));
        assert!(!valid(b"k", Uuid::new_v4(), expires, &sig, now));
        assert!(!valid(b"k", run, expires + 3600, &sig, now));
        assert!(!valid(b"other", run, expires, &sig, now));
        assert!(!valid(b"k", run, expires, "zz", now));
    }
}
