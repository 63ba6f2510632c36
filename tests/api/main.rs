//! Integration tests: a real server driven through the generated clients.

mod harness;

mod access;
mod catalog;
mod customers;
mod events;
mod idempotency;
mod jobs;
mod login;
mod orders;
mod pagination;
mod permissions;
mod revisions;
mod subscriptions;
mod store;
mod sweeps;
mod users;
mod webhooks;

