//! Schemas on the reference page: a schema's type in a line (its `$ref`s
//! links to `#schema-Name`), its limits, its properties as a table, and
//! the section of every schema under `components`.

use super::{Doc, markdown, ref_name};
use crate::markup::escape;
use serde_json::Value;

/// How deep inline objects are drawn inside a property's row before they
/// are only named (the documents nest two levels at most).
const DEPTH: usize = 4;

/// Every component schema, each under its anchor, with an index first.
pub fn render(doc: &Doc) -> String {
    let Some(schemas) = doc.raw["components"]["schemas"].as_object() else {
        return String::new();
    };
    let mut names: Vec<&String> = schemas.keys().collect();
    names.sort_by_key(|n| n.to_ascii_lowercase());
    let index: String = names.iter().map(|n| format!("<li><a href=\"#schema-{0}\">{0}</a></li>", escape(n))).collect();
    let mut out = format!("<section id=\"schemas\"><h2>Schemas</h2><ul class=\"index\">{index}</ul>");
    for name in names {
        let schema = &schemas[name.as_str()];
        out.push_str(&format!(
            "<section class=\"schema\" id=\"schema-{0}\"><h3>{0}{1}</h3><div class=\"facts\">{2}</div>{3}{4}</section>",
            escape(name),
            badges(schema),
            type_line(schema),
            markdown(schema["description"].as_str().unwrap_or("")),
            body(schema, 0),
        ));
    }
    out.push_str("</section>");
    out
}

/// A schema's type and limits in a line.
pub fn type_line(schema: &Value) -> String {
    let limits = limits(schema);
    if limits.is_empty() { type_of(schema) } else { format!("{} <span class=\"limits\">{}</span>", type_of(schema), limits) }
}

/// A schema's type, short: a `$ref` is a link, an array names its items.
pub fn type_of(schema: &Value) -> String {
    if let Some(name) = ref_name(schema) {
        return format!("<a href=\"#schema-{0}\">{0}</a>", escape(name));
    }
    for (key, word, joint) in [("allOf", "all of", " &amp; "), ("oneOf", "one of", " | "), ("anyOf", "any of", " | ")] {
        if let Some(parts) = schema[key].as_array() {
            // `allOf: [$ref]` beside a description is how a property names a
            // schema and says something of its own: it is that schema
            if parts.len() == 1 {
                return type_of(&parts[0]);
            }
            let named: Vec<String> = parts.iter().map(type_of).collect();
            return format!("{word} {}", named.join(joint));
        }
    }
    let format = schema["format"].as_str().map(|f| format!(" <span class=\"limits\">({})</span>", escape(f))).unwrap_or_default();
    match schema["type"].as_str() {
        Some("array") => format!("array of {}", type_of(&schema["items"])),
        Some("object") if schema["properties"].is_null() && schema["additionalProperties"].is_object() => {
            format!("map of string to {}", type_of(&schema["additionalProperties"]))
        }
        Some(t) => format!("<code>{}</code>{format}", escape(t)),
        None if schema.as_object().is_some_and(|o| o.contains_key("properties")) => "<code>object</code>".to_string(),
        None => "any".to_string(),
    }
}

/// Required, deprecated and the like, as badges.
pub fn badges(schema: &Value) -> String {
    let mut out = String::new();
    for (key, label) in [("deprecated", "deprecated"), ("nullable", "nullable"), ("readOnly", "read-only"), ("writeOnly", "write-only")] {
        if schema[key] == true {
            out.push_str(&format!("<span class=\"badge {key}\">{label}</span>"));
        }
    }
    out
}

/// What a value must be beyond its type: enum values, lengths, bounds,
/// pattern, item counts, the default. An array's items' own, after "items".
pub fn limits(schema: &Value) -> String {
    let mut out: Vec<String> = vec![];
    if let Some(values) = schema["enum"].as_array() {
        let values: Vec<String> = values.iter().map(|v| format!("<code>{}</code>", escape(&plain(v)))).collect();
        out.push(format!("one of {}", values.join(", ")));
    }
    let number = |key: &str| schema[key].as_f64().map(|_| plain(&schema[key]));
    let pairs = [("minLength", "maxLength", "characters"), ("minItems", "maxItems", "items"), ("minProperties", "maxProperties", "properties")];
    for (min, max, what) in pairs {
        match (number(min), number(max)) {
            (Some(a), Some(b)) if a == b => out.push(format!("exactly {a} {what}")),
            (Some(a), Some(b)) => out.push(format!("{a} to {b} {what}")),
            (Some(a), None) => out.push(format!("at least {a} {what}")),
            (None, Some(b)) => out.push(format!("at most {b} {what}")),
            (None, None) => {}
        }
    }
    if let Some(min) = number("minimum") {
        out.push(format!("{} {min}", if schema["exclusiveMinimum"] == true { "&gt;" } else { "&ge;" }));
    }
    if let Some(max) = number("maximum") {
        out.push(format!("{} {max}", if schema["exclusiveMaximum"] == true { "&lt;" } else { "&le;" }));
    }
    if let Some(m) = number("multipleOf") {
        out.push(format!("a multiple of {m}"));
    }
    if schema["uniqueItems"] == true {
        out.push("unique items".into());
    }
    if let Some(p) = schema["pattern"].as_str() {
        out.push(format!("pattern <code>{}</code>", escape(p)));
    }
    if !schema["default"].is_null() {
        out.push(format!("default <code>{}</code>", escape(&plain(&schema["default"]))));
    }
    if schema["additionalProperties"] == false {
        out.push("no other properties".into());
    }
    let items = if schema["type"] == "array" { limits(&schema["items"]) } else { String::new() };
    if !items.is_empty() {
        out.push(format!("items: {items}"));
    }
    out.join("; ")
}

/// A JSON value as its text: a string without quotes.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// What a schema holds, drawn as blocks: its properties as a table, the
/// members of a composition each in turn, an array's inline items.
pub fn body(schema: &Value, depth: usize) -> String {
    if depth > DEPTH || ref_name(schema).is_some() {
        return String::new();
    }
    let mut out = String::new();
    for (key, word) in [("allOf", "All of"), ("oneOf", "One of"), ("anyOf", "Any of")] {
        let Some(parts) = schema[key].as_array() else {
            continue;
        };
        if parts.len() == 1 && ref_name(&parts[0]).is_some() {
            continue;
        }
        out.push_str(&format!("<p class=\"facts\">{word}:</p><ul>"));
        for part in parts {
            let drawn = body(part, depth + 1);
            let described = part["description"].as_str().map(markdown).unwrap_or_default();
            out.push_str(&format!("<li>{}{described}{drawn}</li>", type_line(part)));
        }
        out.push_str("</ul>");
        if let Some(d) = schema["discriminator"]["propertyName"].as_str() {
            out.push_str(&format!("<p class=\"facts\">Told apart by <code>{}</code>.</p>", escape(d)));
        }
    }
    if let Some(properties) = schema["properties"].as_object() {
        let required: Vec<&str> = schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        out.push_str("<table class=\"properties\"><thead><tr><th>Property</th><th>Type</th><th>Description</th></tr></thead><tbody>");
        // the required first, each part by name (the order the parsed
        // document keeps)
        let mut names: Vec<(&String, &Value)> = properties.iter().collect();
        names.sort_by_key(|(name, _)| !required.contains(&name.as_str()));
        for (name, property) in names {
            let badge = if required.contains(&name.as_str()) { "<span class=\"badge required\">required</span>" } else { "" };
            let limits = limits(property);
            let limits = if limits.is_empty() { String::new() } else { format!("<div class=\"limits\">{limits}</div>") };
            out.push_str(&format!(
                "<tr><td><code>{}</code>{badge}{}</td><td>{}</td><td>{}{limits}{}</td></tr>",
                escape(name),
                badges(property),
                type_of(property),
                markdown(property["description"].as_str().unwrap_or("")),
                body(inline_part(property), depth + 1),
            ));
        }
        out.push_str("</tbody></table>");
    }
    if schema["type"] == "array" && ref_name(&schema["items"]).is_none() && schema["properties"].is_null() {
        out.push_str(&body(&schema["items"], depth + 1));
    }
    if let Some(extra) = schema["additionalProperties"].as_object().filter(|_| schema["properties"].is_object()) {
        out.push_str(&format!("<p class=\"facts\">Other properties: {}</p>", type_line(&Value::Object(extra.clone()))));
    }
    out
}

/// What of a property is drawn beneath it: an array's items, else itself.
fn inline_part(property: &Value) -> &Value {
    if property["type"] == "array" { &property["items"] } else { property }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn types_name_and_link_their_schemas() {
        assert_eq!(type_of(&json!({"$ref": "#/components/schemas/Customer"})), "<a href=\"#schema-Customer\">Customer</a>");
        assert_eq!(type_of(&json!({"allOf": [{"$ref": "#/components/schemas/Money"}], "description": "x"})), "<a href=\"#schema-Money\">Money</a>");
        assert_eq!(type_of(&json!({"type": "array", "items": {"$ref": "#/components/schemas/Line"}})), "array of <a href=\"#schema-Line\">Line</a>");
        assert!(type_of(&json!({"oneOf": [{"$ref": "#/components/schemas/A"}, {"type": "string"}]})).starts_with("one of <a href=\"#schema-A\">A</a> | "));
        assert_eq!(type_of(&json!({"type": "string", "format": "uuid"})), "<code>string</code> <span class=\"limits\">(uuid)</span>");
    }

    #[test]
    fn limits_are_spelled_out() {
        let s = json!({"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[a-z]+$", "enum": ["a", "<b>"]});
        assert_eq!(limits(&s), "one of <code>a</code>, <code>&lt;b&gt;</code>; 1 to 64 characters; pattern <code>^[a-z]+$</code>");
        assert_eq!(limits(&json!({"type": "integer", "minimum": 1, "maximum": 100, "default": 20})), "&ge; 1; &le; 100; default <code>20</code>");
        assert_eq!(
            limits(&json!({"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 5}})),
            "at most 10 items; items: at most 5 characters"
        );
    }
}
