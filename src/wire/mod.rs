//! The wire vocabulary: the models of every revision, generated from
//! `spec/` (`generated/wire.rs`), and the typed conversions from each
//! revision to the one before it. The core names `wire::latest` only; when
//! a revision ships, the `latest` alias and the conversions move, nothing
//! else.

// formatted by the code generator (prettyplease), not rustfmt
#[rustfmt::skip]
#[path = "../../generated/wire.rs"]
mod generated;
mod changes;
pub mod revision;

pub use generated::*;

/// The document's own JSON Schema of an operation's path, query or header
/// parameters, which the server validates them against (one detail per
/// invalid parameter) before reading them into their struct. (Their
/// `JsonSchema` is what dropshot can show, which is less.)
pub trait ParamSchema {
    const SCHEMA: &'static str;
}

/// A value of the newest revision as any revision shows it (an event's
/// payload for a webhook revision): converted with the same `From` impls
/// as the endpoints of older revisions. Generated for every object.
pub trait Rendered: Sized {
    fn render(self, revision: &str) -> serde_json::Result<serde_json::Value>;
}

/// A value of plain data (the wire's models, and the documents the store
/// keeps of them) as JSON: they have no map with keys other than strings
/// and no `Serialize` of their own that can fail, so this cannot fail.
pub fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).expect("plain data serializes")
}
