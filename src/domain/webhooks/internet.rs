//! Where webhook receivers are: a receiver's host name resolved to
//! addresses, and the address a connection to one of them is made to. The
//! server asks the system's resolver and connects where it answers; tests
//! put their own `Internet` in the settings, so that a URL they register
//! resolves only in their table and no connection leaves the machine.

use futures::future::BoxFuture;
use std::net::{IpAddr, SocketAddr};
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
        super::address::is_public(ip)
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
