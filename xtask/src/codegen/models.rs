//! The wire models of each revision: typify types whose `JsonSchema` is the
//! document's own schema, an older revision reusing the newer one's type
//! wherever the schema closure is unchanged.

use super::gen_path;
use crate::spec::{Revision, collect_refs};
use anyhow::Result;
use heck::ToSnakeCase;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use typify::{TypeSpace, TypeSpaceSettings};

/// OpenAPI 3.0 schema -> the JSON Schema typify reads, without value
/// constraints (the verbatim validator enforces them).
fn fixup(v: &Value) -> Value {
    const DROP: &[&str] = &[
        "nullable",
        "discriminator",
        "xml",
        "externalDocs",
        "example",
        "deprecated",
        "minLength",
        "maxLength",
        "pattern",
        "minProperties",
        "maxProperties",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "readOnly",
        "writeOnly",
    ];
    const KEPT_FORMATS: &[&str] = &["uuid", "date-time", "date", "int32", "int64"];
    match v {
        Value::Object(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m {
                if DROP.contains(&k.as_str()) {
                    continue;
                }
                if k == "format" && !v.as_str().is_some_and(|f| KEPT_FORMATS.contains(&f)) {
                    continue;
                }
                if k == "properties" {
                    // property names are data here, not keywords
                    let props = v.as_object().cloned().unwrap_or_default();
                    out.insert(k.clone(), Value::Object(props.iter().map(|(n, s)| (n.clone(), fixup(s))).collect()));
                    continue;
                }
                out.insert(k.clone(), fixup(v));
            }
            if m.get("nullable") == Some(&Value::Bool(true))
                && let Some(Value::String(t)) = m.get("type")
            {
                out.insert("type".into(), json!([t, "null"]));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(fixup).collect()),
        _ => v.clone(),
    }
}

/// A parameter's Rust field: snake case, with `_` after a keyword (as
/// typify names `type` in models).
pub fn field_ident(name: &str) -> proc_macro2::Ident {
    let snake = name.to_snake_case();
    if syn::parse_str::<syn::Ident>(&snake).is_ok() { format_ident!("{snake}") } else { format_ident!("{snake}_") }
}

pub struct RevModels {
    pub tokens: TokenStream,
    /// component schema name -> Rust path of its type
    pub paths: BTreeMap<String, TokenStream>,
}

/// Models of `rev`. Types whose schema closure is unchanged in `newer` are
/// not generated again: they are the newer revision's types, re-exported.
pub fn gen_models(rev: &Revision, newer: Option<(&Revision, &RevModels)>) -> Result<RevModels> {
    let schemas = rev.schemas();
    let mut settings = TypeSpaceSettings::default();
    settings.with_type_mod("types").with_struct_builder(false).with_derive("PartialEq".to_string()).with_map_type("::std::collections::BTreeMap");
    let mut shared = BTreeMap::new();
    if let Some((newer, newer_models)) = newer {
        for name in schemas.keys() {
            let wrap = json!({ "$ref": format!("#/components/schemas/{name}") });
            if newer.schemas().contains_key(name) && rev.closure(&wrap) == newer.closure(&wrap) {
                let p = newer_models.paths[name].to_string().replace(' ', "");
                let rust_name = p.rsplit("::").next().unwrap().to_string();
                settings.with_replacement(&rust_name, &p, std::iter::empty());
                shared.insert(name.clone(), newer_models.paths[name].clone());
            }
        }
    }
    let mut ts = TypeSpace::new(&settings);
    ts.add_ref_types(schemas.iter().map(|(k, v)| {
        let s: schemars::schema::Schema = serde_json::from_value(fixup(&super::constraints::for_types(v))).expect("schema");
        (k.clone(), s)
    }))?;
    let short = format_ident!("{}", rev.short);
    let g = gen_path();
    let mut paths = BTreeMap::new();
    let mut reexports = vec![];
    for name in schemas.keys() {
        if let Some(p) = shared.get(name) {
            paths.insert(name.clone(), p.clone());
            reexports.push(quote!(pub use #p;));
            continue;
        }
        let r: schemars::schema::Schema = serde_json::from_value(json!({ "$ref": format!("#/components/schemas/{name}") }))?;
        let id = ts.add_type(&r)?;
        let ident = ts.get_type(&id)?.ident();
        paths.insert(name.clone(), quote!(#g::#short::#ident));
    }
    let mut tokens = ts.to_stream();
    tokens.extend(reexports);
    for (name, raw) in &schemas {
        if shared.contains_key(name) {
            continue;
        }
        tokens.extend(verbatim_schema(&paths[name], name, &format!("spec::{}::{name}", rev.short), raw, &paths));
    }
    Ok(RevModels { tokens, paths })
}

/// `impl JsonSchema` returning `raw` as written in the document; referenced
/// schemas are registered so they land in components.schemas.
pub fn verbatim_schema(ty: &TokenStream, name: &str, id: &str, raw: &Value, paths: &BTreeMap<String, TokenStream>) -> TokenStream {
    let mut r = BTreeSet::new();
    collect_refs(raw, &mut r);
    let refs: Vec<&TokenStream> = r.iter().map(|n| &paths[n]).collect();
    let json = serde_json::to_string(raw).unwrap();
    quote! {
        impl ::schemars::JsonSchema for #ty {
            fn schema_name() -> ::std::string::String { #name.to_string() }
            fn schema_id() -> ::std::borrow::Cow<'static, str> { ::std::borrow::Cow::Borrowed(#id) }
            fn json_schema(g: &mut ::schemars::r#gen::SchemaGenerator) -> ::schemars::schema::Schema {
                #( let _ = g.subschema_for::<#refs>(); )*
                ::serde_json::from_str(#json).expect("verbatim schema")
            }
        }
    }
}
