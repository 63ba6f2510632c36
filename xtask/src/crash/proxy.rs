//! The multi-instance crash run's way to cut the database: a TCP proxy on
//! loopback in front of PostgreSQL that every server connects through.
//! `cut` closes every open connection and refuses new ones (each is
//! accepted and dropped at once, as a dead network path looks to a client)
//! until `restore`.

use anyhow::Result;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

pub struct Proxy {
    pub port: u16,
    down: Arc<AtomicBool>,
    /// bumped by each cut: connections opened before it end
    cuts: watch::Sender<u64>,
    /// connections forwarded, for the report
    pub opened: Arc<AtomicU64>,
}

impl Proxy {
    /// Listens on a free loopback port, forwarding to `upstream` (host:port).
    pub async fn start(upstream: String) -> Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let down = Arc::new(AtomicBool::new(false));
        let (cuts, _) = watch::channel(0u64);
        let opened = Arc::new(AtomicU64::new(0));
        let (d, c, o) = (down.clone(), cuts.clone(), opened.clone());
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if d.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                o.fetch_add(1, Ordering::Relaxed);
                let (upstream, mut cut) = (upstream.clone(), c.subscribe());
                tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect(&upstream).await else { return };
                    let mut client = client;
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = cut.changed() => {}
                    }
                });
            }
        });
        Ok(Proxy { port, down, cuts, opened })
    }

    /// The database is unreachable from now on: open connections close.
    pub fn cut(&self) {
        self.down.store(true, Ordering::SeqCst);
        self.cuts.send_modify(|n| *n += 1);
    }

    /// The database is reachable again.
    pub fn restore(&self) {
        self.down.store(false, Ordering::SeqCst);
    }

    /// `url`, a PostgreSQL URL, through this proxy.
    pub fn url_through(&self, url: &str) -> Result<String> {
        let (scheme, user, _, rest) = split(url)?;
        Ok(format!("{scheme}://{user}127.0.0.1:{}{rest}", self.port))
    }
}

/// A PostgreSQL URL's scheme, user part (with its `@`), host[:port] and
/// the rest (path and query).
fn split(url: &str) -> Result<(&str, &str, &str, &str)> {
    let (scheme, rest) = url.split_once("://").ok_or_else(|| anyhow::anyhow!("not a URL: the database URL"))?;
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let at = authority.rfind('@').map_or(0, |i| i + 1);
    let (user, host) = authority.split_at(at);
    anyhow::ensure!(!host.is_empty(), "no host in the database URL");
    Ok((scheme, user, host, tail))
}

/// The `host:port` a PostgreSQL URL names (5432 when it names no port).
pub fn upstream_of(url: &str) -> Result<String> {
    let (_, _, host, _) = split(url)?;
    Ok(if host.contains(':') { host.to_string() } else { format!("{host}:5432") })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_upstream_is_the_urls_host_and_port() {
        assert_eq!(super::upstream_of("postgres://postgres@127.0.0.1:5432/test").unwrap(), "127.0.0.1:5432");
        assert_eq!(super::upstream_of("postgres://u:p@localhost/db?x=1").unwrap(), "localhost:5432");
    }
}
