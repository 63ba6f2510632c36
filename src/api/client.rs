//! Where a request comes from: the connection's peer, or, when the peer is
//! a proxy the operator trusts (`--trusted-proxies`), the address its
//! X-Forwarded-For names. The limits per client address count this.

use http::HeaderMap;
use ipnet::IpNet;
use std::net::IpAddr;

/// The client of a request from `peer`: `peer` itself unless it is a
/// trusted proxy; then the right-most X-Forwarded-For entry that is not a
/// trusted proxy too (entries to its left were written by the client and
/// prove nothing). A malformed entry stops the walk at the last trusted hop.
pub fn address(peer: IpAddr, headers: &HeaderMap, trusted: &[IpNet]) -> IpAddr {
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|n| n.contains(ip));
    if !is_trusted(&peer) {
        return peer;
    }
    let mut client = peer;
    // a later header line was added by a later proxy: read from the end
    for value in headers.get_all("x-forwarded-for").iter().rev() {
        let Ok(text) = value.to_str() else { return client };
        for entry in text.rsplit(',') {
            match entry.trim().parse::<IpAddr>() {
                Ok(ip) if is_trusted(&ip) => client = ip,
                Ok(ip) => return ip,
                Err(_) => return client,
            }
        }
    }
    client
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append("x-forwarded-for", v.parse().unwrap());
        }
        h
    }

    #[test]
    fn forwarded_addresses_count_only_behind_a_trusted_proxy() {
        let proxies: Vec<IpNet> = vec!["10.0.0.0/8".parse().unwrap()];
        let peer: IpAddr = "10.1.1.1".parse().unwrap();
        let stranger: IpAddr = "198.51.100.9".parse().unwrap();
        // the client wrote 203.0.113.1 itself; the proxy appended 192.0.2.5
        let h = headers(&["203.0.113.1, 192.0.2.5"]);
        assert_eq!(address(peer, &h, &proxies), "192.0.2.5".parse::<IpAddr>().unwrap());
        assert_eq!(address(stranger, &h, &proxies), stranger);
        assert_eq!(address(peer, &h, &[]), peer);
        // two proxies, one header line each
        let h = headers(&["192.0.2.5", "10.2.2.2"]);
        assert_eq!(address(peer, &h, &proxies), "192.0.2.5".parse::<IpAddr>().unwrap());
        // nothing, or garbage, forwarded: the last trusted hop
        assert_eq!(address(peer, &HeaderMap::new(), &proxies), peer);
        assert_eq!(address(peer, &headers(&["nonsense, 10.2.2.2"]), &proxies), "10.2.2.2".parse::<IpAddr>().unwrap());
    }
}
