//! What typify and progenitor see of a document: its schemas without the
//! keywords that only constrain values across fields (`not`, a `oneOf` of
//! `required` lists), which the server's verbatim validator enforces and a
//! Rust type cannot, and a nullable reference in the one shape typify
//! reads as an `Option`.

use serde_json::{Map, Value, json};

/// `v` (an OpenAPI 3.0 schema, or any part of a document) as code
/// generation reads it; the document itself keeps every keyword.
pub fn for_types(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                if k == "properties" {
                    // property names are data here, not keywords
                    let props = v.as_object().cloned().unwrap_or_default();
                    out.insert(k.clone(), Value::Object(props.iter().map(|(n, s)| (n.clone(), for_types(s))).collect()));
                    continue;
                }
                let dropped = k == "not" || (matches!(k.as_str(), "oneOf" | "anyOf") && only_required(v));
                if !dropped {
                    out.insert(k.clone(), for_types(v));
                }
            }
            if let Some(reference) = nullable_reference(m) {
                // `oneOf: [X, {type, nullable, enum: [null]}]`, the 3.0.3
                // way to say "X or null", as the older `nullable` beside
                // `allOf` that typify types as `Option<X>`
                out.remove("oneOf");
                out.insert("type".into(), json!("object"));
                out.insert("nullable".into(), json!(true));
                out.insert("allOf".into(), json!([reference]));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(for_types).collect()),
        _ => v.clone(),
    }
}

/// Branches that each only list required fields (of an object): "one of
/// these fields".
fn only_required(branches: &Value) -> bool {
    let required_only = |s: &Value| s.as_object().is_some_and(|s| s.contains_key("required") && s.keys().all(|k| k == "required" || k == "type"));
    branches.as_array().is_some_and(|b| !b.is_empty() && b.iter().all(required_only))
}

/// The reference of `oneOf: [{$ref}, null]`, if `m` is that.
fn nullable_reference(m: &Map<String, Value>) -> Option<Value> {
    let [a, b] = m.get("oneOf")?.as_array()?.as_slice() else { return None };
    let is_null = |s: &Value| s.get("nullable") == Some(&json!(true)) && s.get("enum") == Some(&json!([null]));
    match (is_null(a), is_null(b)) {
        (false, true) if a.get("$ref").is_some() => Some(a.clone()),
        (true, false) if b.get("$ref").is_some() => Some(b.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cross_field_constraints_go_and_a_nullable_reference_is_typifys_shape() {
        let s = json!({
            "type": "object",
            "oneOf": [{"required": ["a"]}, {"type": "object", "required": ["b"]}],
            "properties": {
                "not": {"type": "string", "not": {"required": ["x"]}},
                "p": {"description": "d", "oneOf": [{"$ref": "#/components/schemas/P"}, {"type": "string", "nullable": true, "enum": [null]}]},
                "q": {"oneOf": [{"$ref": "#/components/schemas/P"}, {"$ref": "#/components/schemas/Q"}]}
            }
        });
        assert_eq!(
            for_types(&s),
            json!({
                "type": "object",
                "properties": {
                    "not": {"type": "string"},
                    "p": {"description": "d", "type": "object", "nullable": true, "allOf": [{"$ref": "#/components/schemas/P"}]},
                    "q": {"oneOf": [{"$ref": "#/components/schemas/P"}, {"$ref": "#/components/schemas/Q"}]}
                }
            })
        );
    }
}
