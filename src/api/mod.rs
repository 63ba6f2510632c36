//! The HTTP face: the generated route trait, the glue it relies on
//! (revisions, replies, errors, extractors), and the handlers that
//! implement it over the domain core.

mod client;
pub mod context;
pub mod error;
pub mod extract;
pub mod handlers;
mod headers;
pub mod idempotency;
pub mod paths;
pub mod reply;
pub mod request;
pub mod revision;
// formatted by the code generator (prettyplease), not rustfmt
#[rustfmt::skip]
#[path = "../../generated/api.rs"]
pub mod routes;
pub mod validate;

pub use context::{Context, RevisionPolicy};
pub use handlers::Handlers;
