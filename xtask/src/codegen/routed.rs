//! Operations dropshot's router cannot hold side by side (a literal path
//! segment where another path has a variable), and the one endpoint per
//! revision that serves both.

use super::{Op, api_path, versions_of};
use crate::spec::Revision;
use anyhow::{Result, bail};
use heck::ToSnakeCase;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use std::collections::BTreeMap;

/// Two operations dropshot's router cannot hold side by side: one whose
/// path has a literal segment (`GET /subscriptions/usage`) where the
/// other's, otherwise equal, has a variable (`GET
/// /subscriptions/{subscriptionId}`). Both are served by one endpoint at
/// the variable's path that calls the literal's method when the segment is
/// the literal.
pub(super) struct Routed {
    pub(super) var_op: String,
    pub(super) lit_op: String,
    pub(super) method: String,
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
    for l in &ops {
        let ls: Vec<&str> = l.path.split('/').collect();
        for v in &ops {
            let vs: Vec<&str> = v.path.split('/').collect();
            if vs.len() != ls.len() || l.method != v.method {
                continue;
            }
            let differ: Vec<usize> = (0..ls.len()).filter(|&i| ls[i] != vs[i]).collect();
            if let [i] = differ[..] {
                if vs[i].starts_with('{') && !ls[i].starts_with('{') && !out.iter().any(|r| r.lit_op == l.id) {
                    out.push(Routed {
                        var_op: v.id.clone(),
                        lit_op: l.id.clone(),
                        method: l.method.clone(),
                        var_path: format!("/api/v2{}", v.path),
                        segment: i + 2,
                        literal: ls[i].to_string(),
                    });
                }
            }
        }
    }
    Ok(out)
}

/// The endpoints of a routed pair, one per revision of the variable's
/// operation: the literal's method when the segment is the literal (its
/// parameters read from the request here), else the variable's.
pub(super) fn dispatchers(revs: &[Revision], r: &Routed, emitted: &BTreeMap<String, Vec<Emitted>>) -> Result<Vec<TokenStream>> {
    let a = api_path();
    let in_rev = |op: &str, i: usize| emitted.get(op).and_then(|e| e.iter().find(|e| e.revs.0 <= i && i <= e.revs.1));
    let mut out = vec![];
    for (i, rev) in revs.iter().enumerate() {
        let Some(v) = in_rev(&r.var_op, i) else { continue };
        let fname = format_ident!("{}_routed_{}", r.var_op.to_snake_case(), rev.short);
        let versions = versions_of(revs, i, i);
        let method_tok = format_ident!("{}", r.method);
        let (path, op_id, coded, args, doc, tags) = (&r.var_path, &r.var_op, &v.coded, &v.args, &v.doc, &v.tags);
        let v_fn = &v.fname;
        let v_call: Vec<TokenStream> = v.loc_types.iter().map(|(loc, _)| {
            let arg = format_ident!("{}", if *loc == "header" { "headers" } else { loc });
            quote!(#arg)
        }).collect();
        let v_call = if v.has_body { quote!(#(#v_call,)* body) } else { quote!(#(#v_call),*) };
        let literal_branch = match in_rev(&r.lit_op, i) {
            Some(l) => {
                if l.has_body || l.loc_types.iter().any(|(loc, _)| *loc == "path") {
                    bail!("{}: a routed literal operation takes only query and header parameters", r.lit_op);
                }
                let (seg, lit, l_fn) = (r.segment, &r.literal, &l.fname);
                let reads = l.loc_types.iter().map(|(loc, ty)| {
                    let (arg, wrap) = match *loc {
                        "query" => (format_ident!("query"), quote!(#a::extract::QueryParams)),
                        _ => (format_ident!("headers"), quote!(#a::extract::HeaderParams)),
                    };
                    quote!(let #arg = <#wrap<#ty> as dropshot::SharedExtractor>::from_request(&rqctx).await?;)
                });
                let l_args = l.loc_types.iter().map(|(loc, _)| format_ident!("{}", if *loc == "query" { "query" } else { "headers" }));
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

