//! The implementation of the generated route trait, newest revision
//! only, one module per tag of the documents: the generated `impl` calls
//! the function of the operation's name in its tag's module (extract, call
//! the domain core, answer).

use super::error::ApiError;
use super::reply::Reply;

pub mod auth;
pub mod customers;
pub mod inventory;
pub mod invoices;
pub mod licenses;
pub mod operations;
pub mod orders;
pub mod payment_intents;
pub mod payment_links;
pub mod payment_profile_sessions;
pub mod payment_profiles;
pub mod payment_sessions;
pub mod porting;
pub mod product_catalogs;
pub mod reports;
pub mod sandbox;
pub mod subscribers;
pub mod subscription_addons;
pub mod subscriptions;
pub mod users;
pub mod webhooks;

/// The type the generated route trait is implemented for.
pub enum Handlers {}

pub type Result<T> = std::result::Result<Reply<T>, ApiError>;

/// Where the hosted pages are: the public URL the operator gave, else
/// where this server was reached.
pub fn public_url(rqctx: &dropshot::RequestContext<super::context::Context>) -> String {
    match &rqctx.context().settings.public_url {
        Some(u) => u.clone(),
        None => format!("http://{}", rqctx.server.local_addr),
    }
}
