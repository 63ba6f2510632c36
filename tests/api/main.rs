//! Integration tests: a real server driven through the generated clients.

mod coverage;
mod databases;
mod harness;

mod access;
mod addons;
mod catalog;
mod customers;
mod delivery;
mod events;
mod guessing;
mod idempotency;
mod jobs;
mod license_terms;
mod licenses;
mod lifecycle;
mod listen;
mod login;
mod orders;
mod pagination;
mod payment_providers;
mod races;
mod permissions;
mod receiver;
mod renewals;
mod revisions;
mod sandbox;
mod secrets;
mod store;
mod subscribers;
mod subscriptions;
mod tenancy;
mod sweeps;
mod usage;
mod users;
mod webhooks;
