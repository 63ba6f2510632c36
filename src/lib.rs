//! Switchboard: a self-hostable server for the Telecom Subscription
//! Management API.

pub mod admin;
pub mod api;
pub mod carrier;
pub mod cli;
pub mod clock;
pub mod config;
pub mod config_file;
pub mod demo;
pub mod domain;
pub mod error;
pub mod events;
pub mod hosted;
pub mod jobs;
pub mod keys;
pub mod kinds;
pub mod limits;
pub mod listen;
pub mod markup;
pub mod metrics;
pub mod money;
pub mod network;
pub mod payment_providers;
pub mod reference;
pub mod report_files;
pub mod sealing;
pub mod server;
pub mod startup_pages;
pub mod states;
pub mod store;
pub mod telemetry;
pub mod tokens;
pub mod webhook_reach;
pub mod wire;

/// The README's and the documents' Rust examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

#[cfg(doctest)]
#[doc = include_str!("../docs/webhooks.md")]
pub struct WebhooksDoctests;

#[cfg(doctest)]
#[doc = include_str!("../docs/clients.md")]
pub struct ClientsDoctests;
