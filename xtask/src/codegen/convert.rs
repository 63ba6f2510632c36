//! Typed conversions from a revision's shapes to the next-older
//! revision's, generated so that only real differences are written by hand.
//!
//! For every object the two revisions both have but shape differently, the
//! older revision gets `copy::<snake name>(newer) -> older`: each field the
//! two share is moved (converted with `Into` when its type differs only in
//! the types it contains), and each field only the older revision has is
//! `Default::default()`. Where the older shape adds no field, `From` is
//! generated too and calls `copy`. Where it does, the hand-written
//! version-change module (`src/wire/changes/<revision>.rs`) implements
//! `From`, filling in what it adds over `..copy::x(v)`; a missing impl is a
//! compile error where a containing shape converts the field.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use std::collections::{BTreeMap, BTreeSet};

/// The named-field structs of a revision's `types` module, by Rust name.
pub type Structs = BTreeMap<String, Vec<(syn::Ident, syn::Type)>>;

/// The named-field structs of a revision's `types` module, and the names of
/// every type it defines itself (not re-exported from a newer revision).
pub fn structs_of(types: &TokenStream) -> anyhow::Result<(Structs, BTreeSet<String>)> {
    let file: syn::File = syn::parse2(types.clone())?;
    let mut out = Structs::new();
    let mut locals = BTreeSet::new();
    for item in file.items {
        match item {
            syn::Item::Struct(s) => {
                locals.insert(s.ident.to_string());
                if let syn::Fields::Named(named) = s.fields {
                    let fields = named.named.into_iter().map(|f| (f.ident.expect("named"), f.ty)).collect();
                    out.insert(s.ident.to_string(), fields);
                }
            }
            syn::Item::Enum(e) => {
                locals.insert(e.ident.to_string());
            }
            syn::Item::Type(t) => {
                locals.insert(t.ident.to_string());
            }
            _ => {}
        }
    }
    Ok((out, locals))
}

/// A type written the same way whichever revision module it is read in:
/// a bare name of the module's own types is prefixed with the revision,
/// `crate::wire::<rev>::types::X` is shortened to `<rev>::X`.
fn canon(ty: &syn::Type, rev: &str, locals: &BTreeSet<String>) -> String {
    let s = quote!(#ty).to_string().replace(' ', "").replace("crate::wire::", "").replace("::types::", "::");
    // bare local names: tokens not preceded by `::`
    let mut out = String::new();
    let mut ident = String::new();
    let flush = |ident: &mut String, out: &mut String| {
        if !ident.is_empty() {
            let bare = !out.ends_with("::");
            if bare && locals.contains(ident.as_str()) {
                out.push_str(rev);
                out.push_str("::");
            }
            out.push_str(ident);
            ident.clear();
        }
    };
    for c in s.chars() {
        if c.is_alphanumeric() || c == '_' {
            ident.push(c);
        } else {
            flush(&mut ident, &mut out);
            out.push(c);
        }
    }
    flush(&mut ident, &mut out);
    out
}

/// The single generic argument of `ty` if its last path segment is `name`.
fn generic<'a>(ty: &'a syn::Type, name: &str) -> Option<Vec<&'a syn::Type>> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != name {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else { return None };
    Some(args.args.iter().filter_map(|a| if let syn::GenericArgument::Type(t) = a { Some(t) } else { None }).collect())
}

pub struct Side<'a> {
    pub rev: &'a str,
    pub structs: &'a Structs,
    /// every type the revision's module defines itself
    pub locals: &'a BTreeSet<String>,
}

/// The expression turning `x` of the newer type into the older type.
fn convert(x: TokenStream, older: &syn::Type, newer: &syn::Type, o: &Side, n: &Side) -> TokenStream {
    if canon(older, o.rev, o.locals) == canon(newer, n.rev, n.locals) {
        return x;
    }
    for wrapper in ["Option", "Vec", "Box"] {
        if let (Some(a), Some(b)) = (generic(older, wrapper), generic(newer, wrapper)) {
            let inner = convert(quote!(x), a[0], b[0], o, n);
            return match wrapper {
                "Option" => quote!(#x.map(|x| #inner)),
                "Vec" => quote!(#x.into_iter().map(|x| #inner).collect()),
                _ => quote!(::std::boxed::Box::new({ let x = *#x; #inner })),
            };
        }
    }
    if let (Some(a), Some(b)) = (generic(older, "BTreeMap"), generic(newer, "BTreeMap")) {
        let inner = convert(quote!(x), a[1], b[1], o, n);
        return quote!(#x.into_iter().map(|(k, x)| (k, #inner)).collect());
    }
    quote!(#x.into())
}

/// `pub mod copy { ... }` and the generated `From` impls of the older
/// revision `o` from the newer `n`, whose `types` modules are at `o_path`
/// and `n_path`.
pub fn converters(o: &Side, o_path: &TokenStream, n: &Side, n_path: &TokenStream) -> TokenStream {
    let mut fns = vec![];
    let mut froms = vec![];
    for (name, o_fields) in o.structs {
        let Some(n_fields) = n.structs.get(name) else { continue };
        let ident = format_ident!("{name}");
        let fname = format_ident!("{}", heck::ToSnakeCase::to_snake_case(name.as_str()));
        let mut added = false;
        let fields = o_fields.iter().map(|(f, o_ty)| match n_fields.iter().find(|(g, _)| g == f) {
            Some((_, n_ty)) => {
                let e = convert(quote!(v.#f), o_ty, n_ty, o, n);
                quote!(#f: #e)
            }
            None => {
                added = true;
                quote!(#f: ::std::default::Default::default())
            }
        });
        let fields: Vec<TokenStream> = fields.collect();
        let doc = if added {
            format!(
                "`{name}` of the newer revision with the fields it shares; the fields only this revision has are left at their defaults for the hand-written `From` to fill."
            )
        } else {
            format!("`{name}` of the newer revision, field by field.")
        };
        fns.push(quote! {
            #[doc = #doc]
            pub fn #fname(v: #n_path::#ident) -> #o_path::#ident {
                #o_path::#ident { #(#fields),* }
            }
        });
        if !added {
            froms.push(quote! {
                impl ::std::convert::From<#n_path::#ident> for #o_path::#ident {
                    fn from(v: #n_path::#ident) -> Self { copy::#fname(v) }
                }
            });
        }
    }
    quote! {
        /// Copies of the newer revision's shapes into this revision's.
        pub mod copy { #(#fns)* }
        #(#froms)*
    }
}

/// `impl Rendered` for every object of the newest revision: its JSON in any
/// revision, converted down one revision at a time with the same `From`
/// impls the endpoints of older revisions use. `revs` are (name, module
/// path of its `types`, the Rust names it has), oldest first; a type an
/// older revision lacks (new since) is rendered as the newer one has it.
pub fn rendered(revs: &[(String, TokenStream, BTreeSet<String>)], latest_structs: &Structs) -> TokenStream {
    let Some(((latest_name, latest, _), older)) = revs.split_last() else { return quote!() };
    let mut impls = vec![];
    for name in latest_structs.keys() {
        let ident = format_ident!("{name}");
        let mut arms = vec![quote!(#latest_name => ::serde_json::to_value(&self))];
        let mut expr = quote!(self);
        for (rev_name, path, names) in older.iter().rev() {
            if !names.contains(name) {
                break;
            }
            expr = quote!(<#path::#ident as ::std::convert::From<_>>::from(#expr));
            arms.push(quote!(#rev_name => ::serde_json::to_value(&#expr)));
        }
        impls.push(quote! {
            impl crate::wire::Rendered for #latest::#ident {
                fn render(self, revision: &str) -> ::serde_json::Result<::serde_json::Value> {
                    match revision {
                        #(#arms,)*
                        _ => ::serde_json::to_value(&self),
                    }
                }
            }
        });
    }
    quote!(#(#impls)*)
}
