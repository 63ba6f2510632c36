//! Operations dropshot's router cannot hold side by side (a literal path
//! segment where another path has a variable), and the one endpoint per
//! revision that serves them.

use super::{Op, api_path, versions_of};
use crate::spec::Revision;
use anyhow::{Result, bail};
use heck::{ToSnakeCase, ToUpperCamelCase};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use std::collections::BTreeMap;

/// An operation whose path has a literal segment where another path, equal
/// before it, has a variable (`GET /subscriptions/usage` beside `GET
/// /subscriptions/{subscriptionId}`; `POST /payment-profiles/sessions`
/// beside `GET /payment-profiles/{paymentProfileId}`): dropshot's router
/// holds no literal beside a variable, whatever the methods. It is served
/// by an endpoint at its path with the segment made the variable, which
/// calls it when the segment is the literal. When an operation has that
/// path and method (`var_op`), the endpoint is that operation's and serves
/// both; otherwise it is the literal's own, unpublished (the version
/// policy lets only the documents' paths through, so it sees no other but
/// a `%`-escaped one, which it answers 404 `no_route`).
pub(super) struct Routed {
    pub(super) var_op: Option<String>,
    pub(super) lit_op: String,
    pub(super) method: String,
    /// the literal's path with the segment made the variable, `/api/v2...`
    pub(super) var_path: String,
    /// the segment's index in the request path (`/api/v2/...` split on `/`)
    pub(super) segment: usize,
    pub(super) literal: String,
}

/// One range of revisions of an operation of a routed pair, as emitted.
pub(super) struct Emitted {
    pub(super) revs: (usize, usize),
    pub(super) fname: syn::Ident,
    pub(super) args: Vec<TokenStream>,
    pub(super) loc_types: Vec<(&'static str, TokenStream)>,
    pub(super) coded: TokenStream,
    pub(super) doc: Vec<TokenStream>,
    pub(super) tags: TokenStream,
    pub(super) has_body: bool,
}

pub(super) fn routed_ops(all_ops: &[Vec<Op>]) -> Result<Vec<Routed>> {
    let mut out: Vec<Routed> = vec![];
    let ops: Vec<&Op> = all_ops.iter().flatten().collect();
    let variable = |s: &str| s.starts_with('{');
    for l in &ops {
        if out.iter().any(|r| r.lit_op == l.id) {
            continue;
        }
        let ls: Vec<&str> = l.path.split('/').collect();
        // the first segment where another path, equal before it, has a variable
        let beside = ops.iter().find_map(|v| {
            let vs: Vec<&str> = v.path.split('/').collect();
            let i = (0..ls.len().min(vs.len())).find(|&i| ls[i] != vs[i])?;
            (!variable(ls[i]) && variable(vs[i])).then(|| (i, vs[i]))
        });
        let Some((i, var)) = beside else { continue };
        let mut segments = ls.clone();
        segments[i] = var;
        let path = segments.join("/");
        let var_op = ops.iter().find(|o| o.method == l.method && o.path == path).map(|o| o.id.clone());
        out.push(Routed {
            var_op,
            lit_op: l.id.clone(),
            method: l.method.clone(),
            var_path: format!("/api/v2{path}"),
            segment: i + 2,
            literal: ls[i].to_string(),
        });
    }
    // what is registered must hold together: a routed path may itself
    // put a variable beside another path's literal (a later `POST
    // /payment-profiles/{id}/disable` beside `.../{sessionId}/cancel`)
    let mut registered: Vec<String> = ops.iter().filter(|o| !out.iter().any(|r| r.lit_op == o.id)).map(|o| o.path.clone()).collect();
    registered.extend(out.iter().map(|r| r.var_path.trim_start_matches("/api/v2").to_string()));
    for p in &registered {
        for q in &registered {
            let (ps, qs): (Vec<&str>, Vec<&str>) = (p.split('/').collect(), q.split('/').collect());
            if let Some(i) = (0..ps.len().min(qs.len())).find(|&i| ps[i] != qs[i])
                && variable(ps[i]) != variable(qs[i])
            {
                bail!("{p} and {q} put a literal beside a variable that routing cannot resolve (segment {i}); give the paths one shape");
            }
        }
    }
    Ok(out)
}

/// The Rust name of the path a routed literal's own endpoint takes.
fn routed_path_ident(r: &Routed) -> syn::Ident {
    format_ident!("{}RoutedPath", r.lit_op.to_upper_camel_case())
}

/// The path parameters of a literal's own endpoint: every variable of its
/// routed path, as strings (the literal's method reads its own from the
/// request), with the schema dropshot needs to see them consumed.
pub(super) fn routed_paths(routed: &[Routed]) -> Vec<TokenStream> {
    routed
        .iter()
        .filter(|r| r.var_op.is_none())
        .map(|r| {
            let ident = routed_path_ident(r);
            let names: Vec<&str> = r.var_path.split('/').filter_map(|s| s.strip_prefix('{')?.strip_suffix('}')).collect();
            let fields = names.iter().enumerate().map(|(i, n)| {
                let f = format_ident!("_{i}");
                quote!(#[serde(rename = #n)] pub #f: ::std::string::String,)
            });
            let props: serde_json::Map<String, serde_json::Value> = names.iter().map(|n| (n.to_string(), serde_json::json!({"type": "string"}))).collect();
            let schema = serde_json::to_string(&serde_json::json!({"type": "object", "properties": props, "required": names})).unwrap();
            let name = ident.to_string();
            quote! {
                /// The variables of an unpublished routed endpoint's path.
                #[derive(::serde::Deserialize, Debug)]
                pub struct #ident { #(#fields)* }
                impl ::schemars::JsonSchema for #ident {
                    fn schema_name() -> ::std::string::String { #name.to_string() }
                    fn json_schema(_: &mut ::schemars::r#gen::SchemaGenerator) -> ::schemars::schema::Schema {
                        ::serde_json::from_str(#schema).expect("routed path schema")
                    }
                }
            }
        })
        .collect()
}

/// The endpoints of a routed operation, one per revision: for a pair, the
/// variable's operation's, calling the literal's method when the segment is
/// the literal (its parameters read from the request here); for a literal
/// alone, its own.
pub(super) fn dispatchers(revs: &[Revision], r: &Routed, emitted: &BTreeMap<String, Vec<Emitted>>) -> Result<Vec<TokenStream>> {
    let Some(var_op) = &r.var_op else { return Ok(alone(revs, r, emitted)) };
    let a = api_path();
    let in_rev = |op: &str, i: usize| emitted.get(op).and_then(|e| e.iter().find(|e| e.revs.0 <= i && i <= e.revs.1));
    let mut out = vec![];
    for (i, rev) in revs.iter().enumerate() {
        let Some(v) = in_rev(var_op, i) else { continue };
        let fname = format_ident!("{}_routed_{}", var_op.to_snake_case(), rev.short);
        let versions = versions_of(revs, i, i);
        let method_tok = format_ident!("{}", r.method);
        let (path, op_id, coded, args, doc, tags) = (&r.var_path, var_op, &v.coded, &v.args, &v.doc, &v.tags);
        let v_fn = &v.fname;
        let v_call: Vec<TokenStream> = v
            .loc_types
            .iter()
            .map(|(loc, _)| {
                let arg = format_ident!("{}", if *loc == "header" { "headers" } else { loc });
                quote!(#arg)
            })
            .collect();
        let v_call = if v.has_body { quote!(#(#v_call,)* body) } else { quote!(#(#v_call),*) };
        let literal_branch = match in_rev(&r.lit_op, i) {
            Some(l) => {
                if l.has_body || l.loc_types.iter().any(|(loc, _)| *loc == "path") {
                    bail!("{}: a routed literal operation beside another's variable takes only query and header parameters", r.lit_op);
                }
                let (seg, lit, l_fn) = (r.segment, &r.literal, &l.fname);
                let reads = l.loc_types.iter().map(|(loc, ty)| read_param(loc, ty));
                let l_args = l.loc_types.iter().map(|(loc, _)| param_arg(loc));
                quote! {
                    if rqctx.request.uri().path().split('/').nth(#seg) == Some(#lit) {
                        #(#reads)*
                        return #a::reply::Reply::rerouted(Self::#l_fn(rqctx, #(#l_args),*).await?);
                    }
                }
            }
            None => quote!(),
        };
        out.push(quote! {
            #(#doc)*
            #[endpoint { method = #method_tok, path = #path, operation_id = #op_id, #tags versions = #versions }]
            async fn #fname(
                rqctx: dropshot::RequestContext<Self::Context>,
                #(#args),*
            ) -> ::std::result::Result<#a::reply::Reply<#coded>, #a::error::ApiError> {
                #literal_branch
                Self::#v_fn(rqctx, #v_call).await
            }
        });
    }
    Ok(out)
}

/// The argument an extracted parameter struct is passed as.
fn param_arg(loc: &str) -> syn::Ident {
    format_ident!("{}", if loc == "header" { "headers" } else { loc })
}

/// Reads a parameter struct from the request, as its extractor would.
fn read_param(loc: &str, ty: &TokenStream) -> TokenStream {
    let a = api_path();
    let wrap = match loc {
        "path" => quote!(dropshot::Path),
        "query" => quote!(#a::extract::QueryParams),
        _ => quote!(#a::extract::HeaderParams),
    };
    let arg = param_arg(loc);
    quote!(
        let #arg = match <#wrap<#ty> as dropshot::SharedExtractor>::from_request(&rqctx).await {
            Ok(read) => read,
            Err(e) => return Ok(#a::reply::refused(&rqctx, e.into())),
        };
    )
}

/// The unpublished endpoints of a literal no operation has the variable's
/// path and method beside: the routed path's variables consumed, its own
/// path parameters read from the request, everything else extracted as
/// its method takes it.
fn alone(revs: &[Revision], r: &Routed, emitted: &BTreeMap<String, Vec<Emitted>>) -> Vec<TokenStream> {
    let a = api_path();
    let routed_path = routed_path_ident(r);
    let mut out = vec![];
    for l in emitted.get(&r.lit_op).into_iter().flatten() {
        let fname = format_ident!("{}_routed_{}", r.lit_op.to_snake_case(), revs[l.revs.1].short);
        let versions = versions_of(revs, l.revs.0, l.revs.1);
        let method_tok = format_ident!("{}", r.method);
        let (path, op_id, coded, l_fn, seg, lit) = (&r.var_path, &r.lit_op, &l.coded, &l.fname, r.segment, &r.literal);
        // the arguments are in the order of `loc_types`, then the body
        let own_path = l.loc_types.first().filter(|(loc, _)| *loc == "path");
        let args = &l.args[usize::from(own_path.is_some())..];
        let read_path = own_path.map(|(loc, ty)| read_param(loc, ty));
        let mut call: Vec<TokenStream> = l
            .loc_types
            .iter()
            .map(|(loc, _)| {
                let arg = param_arg(loc);
                quote!(#arg)
            })
            .collect();
        if l.has_body {
            call.push(quote!(body));
        }
        out.push(quote! {
            #[endpoint { method = #method_tok, path = #path, operation_id = #op_id, versions = #versions, unpublished = true }]
            async fn #fname(
                rqctx: dropshot::RequestContext<Self::Context>,
                _routed: dropshot::Path<#a::routes::#routed_path>,
                #(#args),*
            ) -> ::std::result::Result<#a::reply::Reply<#coded>, #a::error::ApiError> {
                if rqctx.request.uri().path().split('/').nth(#seg) != Some(#lit) {
                    return Ok(#a::reply::refused(&rqctx, #a::error::ApiError::no_route()));
                }
                #read_path
                Self::#l_fn(rqctx, #(#call),*).await
            }
        });
    }
    out
}
