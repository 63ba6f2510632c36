//! What the generated route trait needs of the server to pick a request's
//! revision, and the header that names it. (The revisions themselves are
//! the wire's: `wire::revision`.)

use http::HeaderMap;

pub use crate::wire::revision::Revision;

/// The header naming a request's revision, and every response's.
pub const API_REVISION: &str = "api-revision";

/// What the server context must offer the generated code.
pub trait ApiContext: Send + Sync + 'static {
    /// The revision a request from `peer` with `headers` is answered in
    /// (see `RevisionPolicy`).
    fn revision_of(&self, headers: &HeaderMap, peer: std::net::IpAddr) -> &'static Revision;
}
