//! Webhooks: the endpoints an organisation registers for its events, the
//! URLs they may have, their signing secrets, the organisation's webhook
//! revision, the event log, deliveries and their retry schedule.

pub mod address;
pub mod deliveries;
pub mod endpoints;
pub mod log;
pub mod revision;
pub mod schedule;
pub mod secret;
pub mod signature;
