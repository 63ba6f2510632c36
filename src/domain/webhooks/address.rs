//! Which URLs a webhook endpoint may have. The server will POST to it, so
//! a URL whose host is (or resolves to) an address inside the network the
//! server runs in is refused unless the operator allows private addresses:
//! otherwise any integrator could make the server call its neighbours.

use crate::config::WebhookUrls;
use crate::error::{Error, Result};
use crate::webhook_reach::Internet;
pub use crate::webhook_reach::is_public;
use std::net::{IpAddr, SocketAddr};

/// A host that has not resolved by then is refused as unresolvable.
const RESOLVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// `url` if an endpoint may have it, else a 400 naming `property`.
pub async fn check(property: &str, url: &str, policy: &WebhookUrls) -> Result<url::Url> {
    let invalid = |code: &'static str, message: String| Error::invalid(property, code, message);
    let parsed = url::Url::parse(url).map_err(|e| invalid("invalid_url", format!("must be an absolute https URL ({e})")))?;
    match parsed.scheme() {
        "https" => {}
        "http" if policy.allow_http => {}
        "http" => return Err(invalid("insecure_url", "must be an https URL (this server does not accept http)".into())),
        other => return Err(invalid("invalid_url", format!("must be an https URL, not {other}:"))),
    }
    let host = parsed.host().ok_or_else(|| invalid("invalid_url", "must name a host".into()))?;
    if policy.allow_private {
        return Ok(parsed);
    }
    let with_port_checked = || match port_allowed(&parsed, policy) {
        true => Ok(parsed.clone()),
        false => Err(invalid("port_not_allowed", format!("must use the port of its scheme ({}); this server accepts no other", parsed.scheme()))),
    };
    // a name is the egress proxy's to resolve and judge, when there is one
    if policy.proxy.is_some() && matches!(host, url::Host::Domain(_)) {
        return with_port_checked();
    }
    let port = parsed.port_or_known_default().unwrap_or(443);
    let addresses: Vec<IpAddr> = match host {
        url::Host::Ipv4(ip) => vec![IpAddr::V4(ip)],
        url::Host::Ipv6(ip) => vec![IpAddr::V6(ip)],
        url::Host::Domain(name) => {
            let unresolved = || invalid("unresolvable_host", format!("the host {name} does not resolve"));
            tokio::time::timeout(RESOLVE_TIMEOUT, policy.internet.resolve(name.to_string(), port))
                .await
                .map_err(|_| unresolved())?
                .map_err(|_| unresolved())?
                .into_iter()
                .map(|a| a.ip())
                .collect()
        }
    };
    if addresses.is_empty() {
        return Err(invalid("unresolvable_host", format!("the host {host} does not resolve")));
    }
    if let Some(ip) = addresses.iter().find(|ip| !policy.internet.is_public(**ip)) {
        // (what a name resolves to inside the server's network is not the
        // tenant's to learn: the message names only what the URL says)
        let what = match host {
            url::Host::Domain(name) => format!("the host {name} does not resolve to public addresses only"),
            _ => format!("{ip} is a loopback, private, link-local or reserved address"),
        };
        return Err(invalid("private_address", format!("{what}; webhooks go to public addresses only")));
    }
    with_port_checked()
}

/// Whether `url`'s port may be called: its scheme's own (443, or 80 for
/// http), one the operator listed, or any when private addresses are
/// allowed (local development). A public address's other ports are often
/// an admin console or a database, which a webhook has no business with.
fn port_allowed(url: &url::Url, policy: &WebhookUrls) -> bool {
    // (the url crate leaves out a port that is its scheme's own)
    match url.port() {
        None => true,
        Some(port) => policy.allow_private || policy.allow_ports.contains(&port),
    }
}

/// Where a delivery to `url` goes now, as far as the URL itself tells (its
/// scheme, an address written in it): the server's policy may have changed
/// since the endpoint was registered. A host name is checked as it
/// resolves, by `Resolving`; an address written in the URL is dialed here,
/// since the client resolves nothing for it. The URL to send to: `url`,
/// unless the `Internet` dials that address elsewhere (a test's stand-in).
pub fn route(url: &str, policy: &WebhookUrls) -> std::result::Result<String, String> {
    let mut parsed = url::Url::parse(url).map_err(|e| format!("invalid URL: {e}"))?;
    if parsed.scheme() == "http" && !policy.allow_http {
        return Err("http URLs are not allowed on this server".into());
    }
    if !port_allowed(&parsed, policy) {
        return Err("the URL's port is not allowed on this server".into());
    }
    let ip = match parsed.host() {
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
        _ => return Ok(url.to_string()),
    };
    if !policy.allow_private && !policy.internet.is_public(ip) {
        return Err(format!("{ip} is not a public address"));
    }
    let to = SocketAddr::new(ip, parsed.port_or_known_default().unwrap_or(443));
    let dialed = policy.internet.dial(to).map_err(|e| format!("{to}: {e}"))?;
    if dialed == to {
        return Ok(url.to_string());
    }
    // (setting an address and port on an http(s) URL cannot fail)
    let _ = parsed.set_ip_host(dialed.ip());
    let _ = parsed.set_port(Some(dialed.port()));
    Ok(parsed.into())
}

/// The resolver of webhook deliveries: a host is resolved at the moment of
/// each connection, by the `Internet`, and unless private addresses are
/// allowed, refused if any of its addresses is not public, so a name that
/// resolved to a public address at registration cannot be pointed inside
/// the network later (DNS rebinding). The connection goes to the addresses
/// checked here (as the `Internet` dials them), not to a second lookup.
#[derive(Debug)]
pub struct Resolving {
    pub internet: Internet,
    pub allow_private: bool,
}

impl reqwest::dns::Resolve for Resolving {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        let (internet, allow_private) = (self.internet.clone(), self.allow_private);
        Box::pin(async move {
            let addresses: Vec<SocketAddr> =
                tokio::time::timeout(RESOLVE_TIMEOUT, internet.resolve(host.clone(), 0)).await.map_err(|_| format!("{host} did not resolve in time"))??;
            if addresses.is_empty() {
                return Err(format!("{host} does not resolve").into());
            }
            if !allow_private && addresses.iter().any(|a| !internet.is_public(a.ip())) {
                // (the attempt's error is the tenant's to read: no address)
                return Err(format!("{host} does not resolve to public addresses only").into());
            }
            let dialed = addresses.into_iter().map(|a| internet.dial(a)).collect::<std::io::Result<Vec<_>>>()?;
            Ok(Box::new(dialed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}
