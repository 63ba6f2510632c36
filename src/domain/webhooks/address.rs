//! Which URLs a webhook endpoint may have. The server will POST to it, so
//! a URL whose host is (or resolves to) an address inside the network the
//! server runs in is refused unless the operator allows private addresses:
//! otherwise any integrator could make the server call its neighbours.

use super::internet::Internet;
use crate::config::WebhookUrls;
use crate::error::{Error, Result};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

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
    // a name is the egress proxy's to resolve and judge, when there is one
    let proxied_name = policy.proxy.is_some() && matches!(host, url::Host::Domain(_));
    if policy.allow_private || proxied_name {
        return Ok(parsed);
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
    Ok(parsed)
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
            let addresses: Vec<SocketAddr> = tokio::time::timeout(RESOLVE_TIMEOUT, internet.resolve(host.clone(), 0))
                .await
                .map_err(|_| format!("{host} did not resolve in time"))??;
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

/// Whether `ip` is an address of the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        // shared address space of carrier-grade NAT, 100.64.0.0/10
        || (a == 100 && (64..128).contains(&b))
        // IETF protocol assignments, 192.0.0.0/24
        || (a == 192 && b == 0 && c == 0)
        // benchmarking, 198.18.0.0/15
        || (a == 198 && (18..20).contains(&b))
        // reserved, 240.0.0.0/4
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || ip.is_unique_local()
        || ip.is_unicast_link_local()
        // documentation, 2001:db8::/32
        || (first == 0x2001 && ip.segments()[1] == 0x0db8)
        // NAT64 (64:ff9b::/96) and IPv4-compatible (::/96) forms hide an
        // IPv4 address that may be private
        || (first == 0x0064 && ip.segments()[1] == 0xff9b)
        || ip.segments()[..6].iter().all(|s| *s == 0)
        // IPv4-translated, ::ffff:0:0:0/96 (SIIT)
        || (ip.segments()[..4].iter().all(|s| *s == 0) && ip.segments()[4] == 0xffff && ip.segments()[5] == 0)
        // 6to4 (2002::/16) and Teredo (2001::/32) tunnel to an IPv4
        // address written inside, which may be private
        || first == 0x2002
        || (first == 0x2001 && ip.segments()[1] == 0)
        // site-local, fec0::/10 (deprecated, still routed inside some networks)
        || (first & 0xffc0) == 0xfec0)
}

#[cfg(test)]
mod tests {
    use super::is_public;

    #[test]
    fn private_loopback_link_local_and_reserved_addresses_are_not_public() {
        for ip in [
            "127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "0.0.0.0", "100.64.0.1",
            "224.0.0.1", "255.255.255.255", "192.0.2.1", "::1", "::", "fc00::1", "fe80::1", "::ffff:127.0.0.1",
            "::ffff:10.0.0.1", "64:ff9b::a00:1", "2001:db8::1", "2002:a00:1::1", "2001:0:4136:e378::1", "fec0::1",
            "feff::1", "::ffff:0:a00:1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip} is not public");
        }
        for ip in ["93.184.215.14", "8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8"] {
            assert!(is_public(ip.parse().unwrap()), "{ip} is public");
        }
    }
}
