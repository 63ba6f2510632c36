//! Checks request JSON against the document's own schema (what a type's
//! verbatim `JsonSchema` returns), collecting one detail per invalid field.

use crate::error::Detail;
use schemars::JsonSchema;
use serde_json::{Map, Value};
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, RwLock};

/// A type's schema with every component it refers to.
pub struct Compiled {
    pub root: Value,
    pub defs: Map<String, Value>,
}

impl Compiled {
    /// The schema `root` points at, with a `$ref` root resolved.
    pub fn resolved_root(&self) -> &Value {
        self.resolve(&self.root)
    }

    fn resolve<'a>(&'a self, s: &'a Value) -> &'a Value {
        let mut s = s;
        for _ in 0..16 {
            match s.get("$ref").and_then(Value::as_str) {
                Some(r) => match r.rsplit('/').next().and_then(|n| self.defs.get(n)) {
                    Some(t) => s = t,
                    None => return s,
                },
                None => return s,
            }
        }
        s
    }
}

static PARAM_CACHE: LazyLock<RwLock<HashMap<TypeId, Arc<Compiled>>>> = LazyLock::new(Default::default);
static CACHE: LazyLock<RwLock<HashMap<TypeId, Arc<Compiled>>>> = LazyLock::new(Default::default);

/// The compiled schema of `T`, built once per type.
pub fn schema_of<T: JsonSchema + 'static>() -> Arc<Compiled> {
    if let Some(c) = CACHE.read().expect("schema cache").get(&TypeId::of::<T>()) {
        return c.clone();
    }
    let mut g = schemars::r#gen::SchemaSettings::openapi3().into_generator();
    let root = serde_json::to_value(g.subschema_for::<T>()).expect("schema is JSON");
    let defs = g.definitions().iter().map(|(k, v)| (k.clone(), serde_json::to_value(v).expect("schema is JSON"))).collect();
    let c = Arc::new(Compiled { root, defs });
    CACHE.write().expect("schema cache").insert(TypeId::of::<T>(), c.clone());
    c
}

/// The document's own schema of a parameter struct, built once per type.
pub fn param_schema_of<T: crate::wire::ParamSchema + 'static>() -> Arc<Compiled> {
    if let Some(c) = PARAM_CACHE.read().expect("schema cache").get(&TypeId::of::<T>()) {
        return c.clone();
    }
    let root: Value = serde_json::from_str(T::SCHEMA).expect("parameter schema is JSON");
    let c = Arc::new(Compiled { root, defs: Map::new() });
    PARAM_CACHE.write().expect("schema cache").insert(TypeId::of::<T>(), c.clone());
    c
}

pub fn validate_params<T: crate::wire::ParamSchema + 'static>(v: &Value) -> Vec<Detail> {
    let c = param_schema_of::<T>();
    let mut out = vec![];
    check(&c, &c.root, v, "", &mut out);
    out
}

/// Validates `v` against `T`'s schema.
pub fn validate<T: JsonSchema + 'static>(v: &Value) -> Vec<Detail> {
    let c = schema_of::<T>();
    let mut out = vec![];
    check(&c, &c.root, v, "", &mut out);
    out
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() { field.to_string() } else { format!("{path}.{field}") }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn check(c: &Compiled, schema: &Value, v: &Value, path: &str, out: &mut Vec<Detail>) {
    let s = c.resolve(schema);
    if let Some(all) = s.get("allOf").and_then(Value::as_array) {
        for sub in all {
            check(c, sub, v, path, out);
        }
    }
    for key in ["oneOf", "anyOf"] {
        // (an empty list reads as no rule)
        if let Some(alts) = s.get(key).and_then(Value::as_array).filter(|alts| !alts.is_empty()) {
            // no more than two: whether none, one or several fit
            let fitting = alts.iter().filter(|alt| fits(c, alt, v, path)).take(2).count();
            if fitting == 0 {
                out.push(Detail::new(path, "invalid_value", "matches none of the allowed shapes"));
            } else if fitting > 1 && key == "oneOf" {
                out.push(Detail::new(path, "ambiguous", "matches more than one of the allowed shapes: give the fields of one"));
            }
        }
    }
    if let Some(not) = s.get("not")
        && fits(c, not, v, path)
    {
        out.push(Detail::new(path, "ambiguous", "has fields that exclude each other: give the fields of one shape"));
    }
    if v.is_null() {
        if s.get("nullable") != Some(&Value::Bool(true)) && s.get("type").is_some() {
            out.push(Detail::new(path, "invalid_type", "must not be null"));
        }
        return;
    }
    if let Some(t) = s.get("type").and_then(Value::as_str) {
        let actual = type_name(v);
        let ok = actual == t || (t == "number" && actual == "integer");
        if !ok {
            out.push(Detail::new(path, "invalid_type", format!("must be {} {t}", article(t))));
            return;
        }
    }
    if let Some(allowed) = s.get("enum").and_then(Value::as_array)
        && !allowed.contains(v)
    {
        let names: Vec<String> = allowed.iter().map(|a| a.to_string()).collect();
        out.push(Detail::new(path, "invalid_value", format!("must be one of {}", names.join(", "))));
        return;
    }
    match v {
        Value::String(text) => check_string(s, text, path, out),
        Value::Number(n) => check_number(s, n, path, out),
        Value::Array(items) => {
            let count = items.len() as u64;
            if let Some(max) = s.get("maxItems").and_then(Value::as_u64)
                && count > max
            {
                out.push(Detail::new(path, "too_many_items", format!("must have at most {max} items")));
            }
            if let Some(min) = s.get("minItems").and_then(Value::as_u64)
                && count < min
            {
                out.push(Detail::new(path, "too_few_items", format!("must have at least {min} items")));
            }
            if s.get("uniqueItems").and_then(Value::as_bool) == Some(true) {
                let mut seen = std::collections::HashSet::new();
                if let Some(i) = items.iter().position(|item| !seen.insert(item.to_string())) {
                    out.push(Detail::new(format!("{path}[{i}]"), "duplicate_item", "must not repeat an earlier item"));
                }
            }
            if let Some(item_schema) = s.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(c, item_schema, item, &format!("{path}[{i}]"), out);
                }
            }
        }
        Value::Object(fields) => check_object(c, s, fields, path, out),
        Value::Bool(_) | Value::Null => {}
    }
}

/// Whether `v` meets `schema` with no detail.
fn fits(c: &Compiled, schema: &Value, v: &Value, path: &str) -> bool {
    let mut errs = vec![];
    check(c, schema, v, path, &mut errs);
    errs.is_empty()
}

fn article(t: &str) -> &'static str {
    if t.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" }
}

fn check_object(c: &Compiled, s: &Value, fields: &Map<String, Value>, path: &str, out: &mut Vec<Detail>) {
    for r in s.get("required").and_then(Value::as_array).into_iter().flatten() {
        if let Some(name) = r.as_str()
            && !fields.contains_key(name)
        {
            out.push(Detail::new(join(path, name), "required", "is required"));
        }
    }
    if let Some(max) = s.get("maxProperties").and_then(Value::as_u64)
        && fields.len() as u64 > max
    {
        out.push(Detail::new(path, "too_many_properties", format!("must have at most {max} entries")));
    }
    let props = s.get("properties").and_then(Value::as_object);
    for (name, value) in fields {
        match props.and_then(|p| p.get(name)) {
            Some(ps) => check(c, ps, value, &join(path, name), out),
            None => match s.get("additionalProperties") {
                Some(Value::Bool(false)) => out.push(Detail::new(join(path, name), "unknown_field", "is not a known field")),
                Some(extra @ Value::Object(_)) => check(c, extra, value, &join(path, name), out),
                // unknown fields are ignored, as clients ignore unknown response fields
                _ => {}
            },
        }
    }
}

fn check_string(s: &Value, text: &str, path: &str, out: &mut Vec<Detail>) {
    let len = text.chars().count() as u64;
    if let Some(max) = s.get("maxLength").and_then(Value::as_u64)
        && len > max
    {
        out.push(Detail::new(path, "too_long", format!("must be at most {max} characters")));
    }
    if let Some(min) = s.get("minLength").and_then(Value::as_u64)
        && len < min
    {
        let msg = if min == 1 { "must not be empty".to_string() } else { format!("must be at least {min} characters") };
        out.push(Detail::new(path, "too_short", msg));
    }
    if let Some(p) = s.get("pattern").and_then(Value::as_str)
        && !pattern_matches(p, text)
    {
        out.push(Detail::new(path, "invalid_format", format!("must match the pattern {p}")));
    }
    let bad = match s.get("format").and_then(Value::as_str) {
        Some("email") => (!email_address::EmailAddress::is_valid(text)).then_some(("invalid_email", "must be a valid email address")),
        Some("uuid") => uuid::Uuid::parse_str(text).is_err().then_some(("invalid_format", "must be a UUID")),
        Some("date-time") => chrono::DateTime::parse_from_rfc3339(text).is_err().then_some(("invalid_format", "must be an RFC 3339 date-time")),
        Some("date") => text.parse::<chrono::NaiveDate>().is_err().then_some(("invalid_format", "must be a date (YYYY-MM-DD)")),
        _ => None,
    };
    if let Some((code, msg)) = bad {
        out.push(Detail::new(path, code, msg));
    }
}

static PATTERNS: LazyLock<RwLock<HashMap<String, Option<regress::Regex>>>> = LazyLock::new(Default::default);

fn pattern_matches(pattern: &str, text: &str) -> bool {
    if let Some(re) = PATTERNS.read().expect("pattern cache").get(pattern) {
        return re.as_ref().is_none_or(|re| re.find(text).is_some());
    }
    let re = regress::Regex::new(pattern).ok();
    let ok = re.as_ref().is_none_or(|re| re.find(text).is_some());
    PATTERNS.write().expect("pattern cache").insert(pattern.to_string(), re);
    ok
}

fn check_number(s: &Value, n: &serde_json::Number, path: &str, out: &mut Vec<Detail>) {
    let Some(x) = n.as_f64() else { return };
    if s.get("type").and_then(Value::as_str) == Some("integer")
        && s.get("format").and_then(Value::as_str) == Some("int32")
        && !(i32::MIN as f64..=i32::MAX as f64).contains(&x)
    {
        out.push(Detail::new(path, "out_of_range", "must fit in 32 bits"));
    }
    if let Some(min) = s.get("minimum").and_then(Value::as_f64)
        && x < min
    {
        out.push(Detail::new(path, "out_of_range", format!("must be at least {min}")));
    }
    if let Some(max) = s.get("maximum").and_then(Value::as_f64)
        && x > max
    {
        out.push(Detail::new(path, "out_of_range", format!("must be at most {max}")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn details(schema: Value, v: Value) -> Vec<(String, String)> {
        let c = Compiled { root: schema, defs: Map::new() };
        let mut out = vec![];
        check(&c, &c.root, &v, "", &mut out);
        out.into_iter().map(|d| (d.property, d.code.to_string())).collect()
    }

    fn pair(p: &str, c: &str) -> (String, String) {
        (p.to_string(), c.to_string())
    }

    #[test]
    fn a_one_of_of_required_fields_is_any_one_of_and_an_empty_one_no_rule() {
        // (the documents keep none such: docs/api.md, the client generators)
        let s = json!({"type": "object", "oneOf": [{"type": "object", "required": ["orderId"]}, {"type": "object", "required": ["invoiceId"]}],
                       "properties": {"orderId": {"type": "string"}, "invoiceId": {"type": "string"}}});
        assert_eq!(details(s.clone(), json!({"orderId": "o"})), []);
        assert_eq!(details(s.clone(), json!({"invoiceId": "i"})), []);
        assert_eq!(details(s.clone(), json!({})), [pair("", "invalid_value")]);
        assert_eq!(details(s, json!({"orderId": "o", "invoiceId": "i"})), [pair("", "ambiguous")]);
        assert_eq!(details(json!({"type": "object", "oneOf": []}), json!({})), []);
    }

    #[test]
    fn one_of_is_exactly_one_and_not_refuses_what_it_matches() {
        let us = json!({"type": "object", "required": ["firstName"], "not": {"required": ["identity"]}});
        let se = json!({"type": "object", "required": ["identity"], "not": {"anyOf": [{"required": ["firstName"]}]}});
        let either = json!({"oneOf": [us.clone(), se]});
        assert_eq!(details(either.clone(), json!({"firstName": "Ann"})), []);
        assert_eq!(details(either.clone(), json!({"identity": "1"})), []);
        assert_eq!(details(either.clone(), json!({"identity": "1", "firstName": "Ann"})), [pair("", "invalid_value")]);
        assert_eq!(details(us, json!({"identity": "1", "firstName": "Ann"})), [pair("", "ambiguous")]);
        // branches that overlap: a body of both is ambiguous, anyOf takes it
        let overlapping = [
            json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}}),
            json!({"type": "object", "required": ["b"], "properties": {"b": {"type": "integer"}}}),
        ];
        assert_eq!(details(json!({"oneOf": overlapping}), json!({"a": 1, "b": 2})), [pair("", "ambiguous")]);
        assert_eq!(details(json!({"anyOf": overlapping}), json!({"a": 1, "b": 2})), []);
        // a reference or null (3.0.3's nullable oneOf)
        let nullable = json!({"oneOf": [{"type": "object"}, {"type": "string", "nullable": true, "enum": [null]}]});
        assert_eq!(details(nullable.clone(), json!(null)), []);
        assert_eq!(details(nullable, json!({})), []);
    }
}
