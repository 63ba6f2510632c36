//! The internet a test's server sees (`TestInternet`): public-looking
//! names resolved to loopback, connections routed or refused and recorded;
//! nothing resolves in DNS and nothing leaves the machine.

/// The internet as a test's server sees it, all of it on this machine. A
/// few public-looking names resolve, to loopback addresses this internet
/// declares public (`TEST_PUBLIC`), so that they pass the server's
/// public-address check; `localhost` resolves as on any machine. A
/// connection to a test-public address goes to the same port on 127.0.0.1
/// (where a receiver listens) if the test routed it, else is refused and
/// recorded; one to any other loopback address goes there; any other is
/// refused and recorded as escaped, which fails the test (`finish`).
/// Nothing resolves in DNS, and no connection leaves the machine.
#[derive(Debug, Default)]
pub struct TestInternet {
    routed: std::sync::Mutex<std::collections::HashSet<std::net::IpAddr>>,
    /// the test-public addresses a connection was refused to
    pub refused: std::sync::Mutex<Vec<std::net::SocketAddr>>,
    /// the addresses off this machine the server tried to connect to
    escaped: std::sync::Mutex<Vec<std::net::SocketAddr>>,
}

/// The loopback addresses the test internet counts as public.
pub const TEST_PUBLIC: [&str; 2] = ["127.0.0.2", "127.0.0.3"];

/// Public-looking names of the test internet, and the address each
/// resolves to (`localhost` resolves as on any machine).
pub const TEST_NAMES: [(&str, &str); 3] = [("hooks.acme.example", TEST_PUBLIC[0]), ("hooks.globex.example", TEST_PUBLIC[1]), ("localhost", "127.0.0.1")];

impl TestInternet {
    /// Connections to the test-public address `public` go to the same port
    /// on 127.0.0.1 instead.
    pub fn route(&self, public: &str) {
        assert!(TEST_PUBLIC.contains(&public), "{public} is not an address of the test internet");
        self.routed.lock().unwrap().insert(public.parse().unwrap());
    }

    /// Panics if the server tried to connect beyond loopback.
    pub fn assert_nothing_escaped(&self) {
        let escaped = self.escaped.lock().unwrap();
        assert!(escaped.is_empty(), "the server tried to connect off this machine: {escaped:?}");
    }
}

impl switchboard::webhook_reach::Reach for TestInternet {
    fn resolve(&self, host: String, port: u16) -> futures::future::BoxFuture<'static, std::io::Result<Vec<std::net::SocketAddr>>> {
        let found = TEST_NAMES.iter().find(|(name, _)| name.eq_ignore_ascii_case(&host)).map(|(_, ip)| std::net::SocketAddr::new(ip.parse().unwrap(), port));
        Box::pin(async move {
            found.map(|a| vec![a]).ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, format!("{host}: no such name on the test internet")))
        })
    }

    fn dial(&self, to: std::net::SocketAddr) -> std::io::Result<std::net::SocketAddr> {
        let refuse = |why: &str| Err(std::io::Error::new(std::io::ErrorKind::ConnectionRefused, format!("{to} {why} (test internet)")));
        if self.is_public(to.ip()) && to.ip().is_loopback() {
            if self.routed.lock().unwrap().contains(&to.ip()) {
                return Ok(std::net::SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), to.port()));
            }
            self.refused.lock().unwrap().push(to);
            return refuse("has no receiver");
        }
        if to.ip().is_loopback() {
            return Ok(to);
        }
        self.escaped.lock().unwrap().push(to);
        refuse("is off this machine")
    }

    fn is_public(&self, ip: std::net::IpAddr) -> bool {
        TEST_PUBLIC.iter().any(|p| p.parse::<std::net::IpAddr>().unwrap() == ip) || switchboard::domain::webhooks::address::is_public(ip)
    }
}
