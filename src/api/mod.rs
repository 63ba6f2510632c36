//! The HTTP face: the generated route trait and models, the glue they rely
//! on, and the handlers that implement the trait over the domain core.

mod auk;
pub mod context;
pub mod extract;
#[path = "../../generated/api.rs"]
pub mod generated;
mod idempotency;
mod handlers;
pub mod request;
pub mod support;
pub mod validate;

pub use context::{Context, RevisionPolicy};
pub use handlers::Handlers;
