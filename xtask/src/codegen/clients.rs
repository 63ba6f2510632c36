//! The client SDK of each revision: a progenitor crate, with the API key
//! given once, its own revision sent on every call, and enums that read
//! values newer than the client as `Unknown`.

use crate::spec::Revision;
use anyhow::{Context, Result, anyhow, bail};
use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use std::collections::BTreeSet;

/// The document without bodiless error responses (the HTTP layer's 414):
/// progenitor types every error of an operation with one body type, and a
/// response it does not know reaches the client as `UnexpectedResponse`.
fn without_bodiless_errors(spec: &openapiv3::OpenAPI) -> openapiv3::OpenAPI {
    let mut spec = spec.clone();
    let bodiless: Vec<String> = spec
        .components
        .iter()
        .flat_map(|c| c.responses.iter())
        .filter(|(_, r)| r.as_item().is_some_and(|r| r.content.is_empty()))
        .map(|(name, _)| format!("#/components/responses/{name}"))
        .collect();
    for (_, item) in spec.paths.paths.iter_mut() {
        let openapiv3::ReferenceOr::Item(item) = item else { continue };
        for op in [&mut item.get, &mut item.put, &mut item.post, &mut item.delete, &mut item.patch].into_iter().flatten() {
            op.responses.responses.retain(|code, r| {
                let error = matches!(code, openapiv3::StatusCode::Code(c) if c >= &400);
                !(error && matches!(r, openapiv3::ReferenceOr::Reference { reference } if bodiless.contains(reference)))
            });
        }
    }
    spec
}

/// The document without the `Api-Revision` header parameter: the client
/// sends its own revision on every request (`set_headers` below), so no
/// method takes it as an argument.
fn without_revision_parameter(spec: &openapiv3::OpenAPI) -> openapiv3::OpenAPI {
    let mut spec = spec.clone();
    let components = spec.components.clone().unwrap_or_default();
    let is_revision = |p: &openapiv3::ReferenceOr<openapiv3::Parameter>| {
        let p = match p {
            openapiv3::ReferenceOr::Item(p) => Some(p),
            openapiv3::ReferenceOr::Reference { reference } => {
                reference.strip_prefix("#/components/parameters/").and_then(|name| components.parameters.get(name)).and_then(|p| p.as_item())
            }
        };
        p.is_some_and(|p| matches!(p, openapiv3::Parameter::Header { .. }) && p.parameter_data_ref().name.eq_ignore_ascii_case("Api-Revision"))
    };
    for (_, item) in spec.paths.paths.iter_mut() {
        let openapiv3::ReferenceOr::Item(item) = item else { continue };
        item.parameters.retain(|p| !is_revision(p));
        for op in [&mut item.get, &mut item.put, &mut item.post, &mut item.delete, &mut item.patch].into_iter().flatten() {
            op.parameters.retain(|p| !is_revision(p));
        }
    }
    spec
}

/// Lets every simple string enum (typify's unit variants) read a value it
/// does not know, as SERVICE.md convention 6 asks of clients: a last
/// variant `#[serde(other)] Unknown`, and its arm in the `Display` match
/// (writing `Unknown`, as serde names it; `FromStr` keeps refusing what it
/// does not know).
fn tolerate_unknown_enum_values(file: &mut syn::File) -> Result<()> {
    let types = file
        .items
        .iter_mut()
        .find_map(|i| match i {
            syn::Item::Mod(m) if m.ident == "types" => m.content.as_mut().map(|(_, items)| items),
            _ => None,
        })
        .ok_or_else(|| anyhow!("progenitor output without a types module"))?;
    let derives_deserialize =
        |attrs: &[syn::Attribute]| attrs.iter().any(|a| a.path().is_ident("derive") && a.meta.to_token_stream().to_string().contains("Deserialize"));
    let mut patched = BTreeSet::new();
    for item in types.iter_mut() {
        let syn::Item::Enum(e) = item else { continue };
        if e.variants.is_empty() || !e.variants.iter().all(|v| matches!(v.fields, syn::Fields::Unit)) || !derives_deserialize(&e.attrs) {
            continue;
        }
        if e.variants.iter().any(|v| v.ident == "Unknown") {
            bail!("enum {} already has a variant Unknown", e.ident);
        }
        e.variants.push(syn::parse_quote! {
            /// A value newer than this client: additive changes reach every
            /// revision (SERVICE.md convention 6), so an answer may carry a
            /// value added after this client was generated. Only read, never
            /// sent: the server refuses it in a request.
            #[serde(other)]
            Unknown
        });
        patched.insert(e.ident.to_string());
    }
    let mut displayed = BTreeSet::new();
    for item in types.iter_mut() {
        let syn::Item::Impl(imp) = item else { continue };
        let (Some((_, trait_, _)), syn::Type::Path(ty)) = (&imp.trait_, &*imp.self_ty) else { continue };
        let name = ty.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
        if !patched.contains(&name) || trait_.segments.last().is_none_or(|s| s.ident != "Display") {
            continue;
        }
        for f in imp.items.iter_mut() {
            let syn::ImplItem::Fn(f) = f else { continue };
            for stmt in f.block.stmts.iter_mut() {
                if let syn::Stmt::Expr(syn::Expr::Match(m), _) = stmt {
                    m.arms.push(syn::parse_quote!(Self::Unknown => f.write_str("Unknown"),));
                    displayed.insert(name.clone());
                }
            }
        }
    }
    if let Some(missing) = patched.difference(&displayed).next() {
        bail!("enum {missing}: no Display match to extend");
    }
    Ok(())
}

/// Drops progenitor's `Client::new(baseurl, inner)`: the SDK's `new` takes
/// the API key (`client_support`); `new_with_client` stays.
fn without_progenitor_new(file: &mut syn::File) -> Result<()> {
    for item in file.items.iter_mut() {
        let syn::Item::Impl(imp) = item else { continue };
        if imp.trait_.is_some() || imp.self_ty.to_token_stream().to_string() != "Client" {
            continue;
        }
        let before = imp.items.len();
        imp.items.retain(|i| !matches!(i, syn::ImplItem::Fn(f) if f.sig.ident == "new"));
        if imp.items.len() < before {
            return Ok(());
        }
    }
    bail!("progenitor output without Client::new")
}

/// Progenitor's hooks (an empty `impl ClientHooks for &Client`), replaced
/// by one whose `exec` times each call and tells the credentials' observer.
fn with_observing_hooks(file: &mut syn::File) -> Result<()> {
    let observing: syn::Item = syn::parse2(quote! {
        impl ClientHooks<crate::Credentials> for &Client {
            async fn exec(&self, request: reqwest::Request, info: &OperationInfo) -> reqwest::Result<reqwest::Response> {
                let started = ::std::time::Instant::now();
                let result = self.client().execute(request).await;
                if let Some(observer) = &self.inner.observer {
                    let status = result.as_ref().ok().map(|r| r.status().as_u16());
                    observer(&crate::Call { operation_id: info.operation_id, status, elapsed: started.elapsed() });
                }
                result
            }
        }
    })?;
    for item in file.items.iter_mut() {
        let syn::Item::Impl(imp) = item else { continue };
        let is_hooks = imp.trait_.as_ref().is_some_and(|(_, path, _)| path.segments.last().is_some_and(|s| s.ident == "ClientHooks"));
        if is_hooks && imp.items.is_empty() {
            *item = observing;
            return Ok(());
        }
    }
    bail!("progenitor output without an empty impl ClientHooks")
}

/// The hand-written part of every client crate: progenitor's inner type
/// (`Credentials`), its pre hook (`set_headers`) and the constructors.
fn client_support(rev: &Revision) -> TokenStream {
    let name = &rev.name;
    quote! {
        /// Checking that a webhook delivery is Switchboard's (`webhooks::verify`).
        pub mod webhooks;

        /// The revision this client speaks, sent as `Api-Revision` on every request.
        pub const API_REVISION: &str = #name;

        /// What a [`Client`] sends on every request (progenitor's inner type);
        /// build one with [`Client::builder`].
        #[derive(Clone)]
        #[non_exhaustive]
        pub struct Credentials {
            /// Sent as `Api-Revision`: [`API_REVISION`] unless the builder chose another.
            pub revision: String,
            /// Sent as `X-Api-Key`, unless the operation's own `x_api_key` argument gives one.
            pub api_key: Option<String>,
            /// A user's access token (`auth_email_verify`), sent as `Authorization: Bearer`.
            pub bearer_token: Option<String>,
            /// Told of every call's end (see [`ClientBuilder::observer`]).
            pub observer: Option<Observer>,
        }

        /// Told of each call once it has the head of its answer, or failed to
        /// get one (see [`ClientBuilder::observer`]).
        pub type Observer = ::std::sync::Arc<dyn Fn(&Call) + Send + Sync>;

        /// One call, as an [`Observer`] is told of it.
        #[derive(Clone, Debug)]
        #[non_exhaustive]
        pub struct Call {
            /// The operation's id, e.g. `customer_create`.
            pub operation_id: &'static str,
            /// The answer's status; `None` when none came (the connection
            /// failed or timed out).
            pub status: Option<u16>,
            /// From sending the request to the head of the answer (its body
            /// not yet read).
            pub elapsed: ::std::time::Duration,
        }

        impl Default for Credentials {
            fn default() -> Self {
                Credentials { revision: API_REVISION.to_string(), api_key: None, bearer_token: None, observer: None }
            }
        }

        // `Client` derives Debug: keep the secrets out of logs.
        impl ::std::fmt::Debug for Credentials {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct("Credentials")
                    .field("revision", &self.revision)
                    .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
                    .field("bearer_token", &self.bearer_token.as_ref().map(|_| "<redacted>"))
                    .field("observer", &self.observer.as_ref().map(|_| "<fn>"))
                    .finish()
            }
        }

        /// Progenitor's pre hook, run on every request before it is sent:
        /// the credentials' headers instead of progenitor's `api-version`
        /// (which the server ignores). A value that cannot be a header fails
        /// the call with `Error::Custom`.
        async fn set_headers(c: &Credentials, request: &mut reqwest::Request) -> Result<(), String> {
            // the message names the header, never the (maybe secret) value
            fn value(name: &str, text: &str, sensitive: bool) -> Result<reqwest::header::HeaderValue, String> {
                let mut v = reqwest::header::HeaderValue::from_str(text).map_err(|_| format!("{name}: not a valid header value"))?;
                v.set_sensitive(sensitive);
                Ok(v)
            }
            let headers = request.headers_mut();
            headers.remove("api-version");
            headers.insert("api-revision", value("Api-Revision", &c.revision, false)?);
            if let Some(key) = &c.api_key {
                if !headers.contains_key("x-api-key") {
                    headers.insert("x-api-key", value("X-Api-Key", key, true)?);
                }
            }
            if let Some(token) = &c.bearer_token {
                headers.insert(reqwest::header::AUTHORIZATION, value("Authorization", &format!("Bearer {token}"), true)?);
            }
            Ok(())
        }

        impl Client {
            /// A client sending `api_key` and [`API_REVISION`] on every request.
            /// `baseurl` includes the `/api/v2` stem, e.g. `https://switchboard.example/api/v2`.
            pub fn new(baseurl: &str, api_key: impl Into<String>) -> Self {
                Self::builder(baseurl).api_key(api_key).build()
            }

            /// A client with no key (for the open login and health
            /// operations), a user's bearer token, another revision or an own
            /// `reqwest::Client`: `Client::builder(url).api_key(key).build()`.
            pub fn builder(baseurl: &str) -> ClientBuilder {
                ClientBuilder { baseurl: baseurl.to_string(), credentials: Credentials::default(), client: None }
            }
        }

        /// Builds a [`Client`]; see [`Client::builder`].
        #[derive(Debug)]
        pub struct ClientBuilder {
            baseurl: String,
            credentials: Credentials,
            client: Option<reqwest::Client>,
        }

        impl ClientBuilder {
            /// Sends `api_key` as `X-Api-Key`.
            pub fn api_key(mut self, api_key: impl Into<String>) -> Self {
                self.credentials.api_key = Some(api_key.into());
                self
            }

            /// Acts as the user whose access token this is (sent with the API key).
            pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
                self.credentials.bearer_token = Some(token.into());
                self
            }

            /// Sends another revision than [`API_REVISION`]; answers then
            /// have that revision's shape, which this client's types may not read.
            pub fn revision(mut self, revision: impl Into<String>) -> Self {
                self.credentials.revision = revision.into();
                self
            }

            /// Tells `observer` of each call that was sent (its operation, the
            /// answer's status, the time it took), for a program's metrics
            /// and logs; a call refused before sending (a header value that
            /// cannot be sent) is not told. It runs on the calling task as
            /// the answer's head arrives: it must not block, and a panic in
            /// it is the caller's.
            pub fn observer(mut self, observer: impl Fn(&Call) + Send + Sync + 'static) -> Self {
                self.credentials.observer = Some(::std::sync::Arc::new(observer));
                self
            }

            /// Sends through `client` instead of a new one with 15-second timeouts.
            pub fn reqwest_client(mut self, client: reqwest::Client) -> Self {
                self.client = Some(client);
                self
            }

            /// The client; without [`reqwest_client`](Self::reqwest_client), with a new `reqwest::Client`.
            pub fn build(self) -> Client {
                let client = self.client.unwrap_or_else(|| {
                    let timeout = ::std::time::Duration::from_secs(15);
                    reqwest::Client::builder().connect_timeout(timeout).timeout(timeout).build().expect("a reqwest client")
                });
                Client::new_with_client(&self.baseurl, client, self.credentials)
            }
        }
    }
}

/// A standalone client crate (the published SDK) for one revision.
pub fn client_crate(rev: &Revision) -> Result<Vec<(String, String)>> {
    let mut settings = progenitor::GenerationSettings::default();
    settings
        .with_interface(progenitor::InterfaceStyle::Positional)
        .with_tag(progenitor::TagStyle::Merged)
        .with_derive("PartialEq")
        .with_inner_type(quote!(crate::Credentials))
        // async only so that a bad header value can fail the call
        .with_pre_hook_async(quote!(crate::set_headers));
    let mut generator = progenitor::Generator::new(&settings);
    let typed: openapiv3::OpenAPI =
        serde_json::from_value(super::constraints::for_types(&rev.raw)).with_context(|| format!("{} as code generation reads it", rev.name))?;
    let spec = without_revision_parameter(&without_bodiless_errors(&typed));
    let tokens = generator.generate_tokens(&spec).with_context(|| format!("client for {}", rev.name))?;
    let mut ast: syn::File = syn::parse2(tokens)?;
    tolerate_unknown_enum_values(&mut ast).with_context(|| format!("client for {}", rev.name))?;
    without_progenitor_new(&mut ast)?;
    with_observing_hooks(&mut ast)?;
    let support: syn::File = syn::parse2(client_support(rev))?;
    ast.items.splice(0..0, support.items);
    let lib = format!(
        "// @generated by `cargo xtask codegen` from {}. Do not edit.\n//! Rust client for the Switchboard API, revision {}.\n#![cfg_attr(rustfmt, rustfmt::skip)]\n#![allow(clippy::all, unused_imports, irrefutable_let_patterns)]\n\n{}",
        rev.file,
        rev.name,
        prettyplease::unparse(&ast)
    );
    let dir = format!("generated/client-{}", rev.short);
    let manifest = format!(
        r#"# @generated by `cargo xtask codegen` from {file}. Do not edit.
[package]
name = "switchboard-client-{short}"
version = "0.1.0"
edition = "2024"
publish = false
description = "Rust client for the Switchboard API, revision {name}"

[dependencies]
base64 = "0.22"
bytes = "1"
chrono = {{ version = "0.4", default-features = false, features = ["serde", "std"] }}
futures-core = "0.3"
hmac = "0.12"
progenitor-client = "=0.15.1"
regress = "0.10"
reqwest = {{ version = "0.13", default-features = false, features = ["json", "query", "stream"] }}
serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"
sha2 = "0.10"
uuid = {{ version = "1", features = ["serde"] }}
"#,
        file = rev.file,
        short = rev.short,
        name = rev.name
    );
    let webhooks = format!(
        "// @generated by `cargo xtask codegen` from xtask/templates/sdk_webhooks.rs. Do not edit.\n{}",
        include_str!("../../templates/sdk_webhooks.rs").replace("CRATE_NAME", &format!("switchboard_client_{}", rev.short))
    );
    Ok(vec![(format!("{dir}/src/lib.rs"), lib), (format!("{dir}/src/webhooks.rs"), webhooks), (format!("{dir}/Cargo.toml"), manifest)])
}
