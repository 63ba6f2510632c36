//! What of a document shapes generated code: a document without its
//! examples and without its parameters' defaults, so that revisions whose
//! operations differ in those alone share their generated code.

use serde_json::Value;

/// `v` without its `example` and `examples` keywords, and without the
/// `default` of a parameter's schema: a parameter struct has no defaults
/// (each revision's `Api-Revision` defaults to itself; left out, the key's
/// pin decides, not the default).
pub fn code_shape(v: &Value) -> Value {
    let parameter = v.get("in").is_some();
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "example" | "examples"))
                .map(|(k, v)| match (k.as_str(), v) {
                    ("schema", Value::Object(s)) if parameter => {
                        let s = s.iter().filter(|(k, _)| k.as_str() != "default").map(|(k, v)| (k.clone(), v.clone())).collect();
                        (k.clone(), code_shape(&Value::Object(s)))
                    }
                    _ => (k.clone(), code_shape(v)),
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(code_shape).collect()),
        other => other.clone(),
    }
}
