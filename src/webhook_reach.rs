//! Where webhook receivers are, and which addresses count as public: a
//! receiver's host name resolved to
//! addresses, and the address a connection to one of them is made to. The
//! server asks the system's resolver and connects where it answers; tests
//! put their own `Internet` in the settings, so that a URL they register
//! resolves only in their table and no connection leaves the machine.

use futures::future::BoxFuture;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

/// Resolving and dialing, as webhook deliveries and URL checks see them.
pub trait Reach: Send + Sync + std::fmt::Debug {
    /// The addresses of `host`; the caller bounds how long it may take.
    fn resolve(&self, host: String, port: u16) -> BoxFuture<'static, std::io::Result<Vec<SocketAddr>>>;

    /// Where a connection to `to` (resolved, or written in a URL, and
    /// allowed by the server's policy) is made; an error refuses it.
    fn dial(&self, to: SocketAddr) -> std::io::Result<SocketAddr>;

    /// Whether `ip` counts as an address of the public internet, the only
    /// kind a receiver may have unless the operator allows private ones.
    /// A test's internet declares a few loopback addresses public, so that
    /// its public-looking names never point off the machine.
    fn is_public(&self, ip: IpAddr) -> bool {
        is_public(ip)
    }
}

/// The `Reach` webhooks use: the system's unless a test set its own.
#[derive(Clone, Debug)]
pub struct Internet(pub Arc<dyn Reach>);

impl Default for Internet {
    fn default() -> Self {
        Internet(Arc::new(System))
    }
}

impl std::ops::Deref for Internet {
    type Target = dyn Reach;

    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

/// The system's resolver, and connections where it says.
#[derive(Debug)]
struct System;

impl Reach for System {
    fn resolve(&self, host: String, port: u16) -> BoxFuture<'static, std::io::Result<Vec<SocketAddr>>> {
        Box::pin(async move { Ok(tokio::net::lookup_host((host.as_str(), port)).await?.collect()) })
    }

    fn dial(&self, to: SocketAddr) -> std::io::Result<SocketAddr> {
        Ok(to)
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
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "192.0.2.1",
            "::1",
            "::",
            "fc00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "2001:db8::1",
            "2002:a00:1::1",
            "2001:0:4136:e378::1",
            "fec0::1",
            "feff::1",
            "::ffff:0:a00:1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip} is not public");
        }
        for ip in ["93.184.215.14", "8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8"] {
            assert!(is_public(ip.parse().unwrap()), "{ip} is public");
        }
    }
}
