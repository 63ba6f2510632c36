//! Webhooks: the endpoints an organisation registers for its events, the
//! URLs they may have, their signing secrets, and the organisation's
//! webhook revision.

pub mod address;
pub mod endpoints;
pub mod revision;
pub mod secret;
