//! Every example of a revision document, placed: the TypeScript type that
//! openapi-typescript gives its place, and the component schema a Python
//! client parses it with. An example in a place this file does not know
//! fails the run, so none goes unchecked.

use anyhow::{Result, bail};
use serde_json::{Value, json};
use std::fmt::Write as _;

/// One example and what each client must accept it as.
pub(crate) struct Example {
    /// for messages: `POST /customers 201 response`
    pub(crate) place: String,
    /// a JSON pointer into the document
    pub(crate) pointer: String,
    /// a type over openapi-typescript's `paths` and `components`
    pub(crate) ts: String,
    /// the component schema its value parses as, if it has one (a scalar
    /// property's example has none: TypeScript alone checks it)
    pub(crate) model: Option<Model>,
    /// a webhook payload's `data`: parsed as this schema as well
    pub(crate) data: Option<Model>,
    pub(crate) value: Value,
}

/// A component schema, or a list of it.
#[derive(Clone)]
pub(crate) struct Model {
    pub(crate) name: String,
    pub(crate) list: bool,
}

/// Every example in `doc`, placed; an error names each one that could not be.
pub(crate) fn collect(doc: &Value) -> Result<Vec<Example>> {
    let mut found = vec![];
    find(doc, &mut vec![], &mut found);
    let (mut placed, mut unplaced) = (vec![], vec![]);
    for segs in found {
        match place(doc, &segs) {
            Ok(e) => placed.push(e),
            Err(why) => unplaced.push(format!("{} ({why:#})", pointer(&segs))),
        }
    }
    if !unplaced.is_empty() {
        bail!("examples in places `cargo xtask clients` cannot type (teach xtask/src/clients/examples.rs): {}", unplaced.join("; "));
    }
    Ok(placed)
}

/// The pointers of every example value: `example`, each `examples` entry's
/// `value` (a media type's or parameter's map) or item (a schema's list).
/// Example values, defaults and enums are not searched (their keys are
/// data), and a property named `example` is a schema, not an example.
fn find(v: &Value, segs: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let Value::Object(m) = v else {
        if let Value::Array(items) = v {
            for (i, item) in items.iter().enumerate() {
                segs.push(i.to_string());
                find(item, segs, out);
                segs.pop();
            }
        }
        return;
    };
    let in_properties = segs.last().is_some_and(|s| s == "properties");
    for (k, child) in m {
        segs.push(k.clone());
        if in_properties {
            find(child, segs, out);
        } else if k == "example" {
            out.push(segs.clone());
        } else if k == "examples" {
            match child {
                Value::Object(named) => {
                    for (name, ex) in named {
                        // `$ref` or `externalValue` entries stay unplaced, so they fail
                        let tail: &[&str] = if ex.get("value").is_some() { &[name, "value"] } else { &[name] };
                        out.push(segs.iter().cloned().chain(tail.iter().map(|s| s.to_string())).collect());
                    }
                }
                Value::Array(items) => (0..items.len()).for_each(|i| out.push([segs.clone(), vec![i.to_string()]].concat())),
                _ => out.push(segs.clone()),
            }
        } else if !matches!(k.as_str(), "default" | "enum" | "const") {
            find(child, segs, out);
        }
        segs.pop();
    }
}

/// The example at `segs`, with its types; an error says why it has none.
fn place(doc: &Value, segs: &[String]) -> Result<Example> {
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    let value = doc.pointer(&pointer(segs)).cloned().unwrap_or(Value::Null);
    let lit = |x: &str| serde_json::to_string(x).unwrap_or_default();
    let example =
        |place: String, ts: String, model: Option<Model>, data: Option<Model>| Example { place, pointer: pointer(segs), ts, model, data, value: value.clone() };
    let (place, ts, node, rest): (String, String, &Value, &[&str]) = match &s[..] {
        ["paths", p, m, "requestBody", "content", ct, rest @ ..] => {
            let ts = format!("NonNullable<paths[{}][{}][\"requestBody\"]>[\"content\"][{}]", lit(p), lit(m), lit(ct));
            return media(doc, &s[..6], rest, ts, format!("{} {p} request body", m.to_uppercase()), example);
        }
        ["paths", p, m, "responses", code, "content", ct, rest @ ..] => {
            let ts = format!("paths[{}][{}][\"responses\"][{}][\"content\"][{}]", lit(p), lit(m), lit(code), lit(ct));
            return media(doc, &s[..7], rest, ts, format!("{} {p} {code} response", m.to_uppercase()), example);
        }
        ["paths", p, m, "responses", code, "headers", h, rest @ ..] => {
            let ts = format!("NonNullable<paths[{}][{}][\"responses\"][{}][\"headers\"]>[{}]", lit(p), lit(m), lit(code), lit(h));
            (format!("{} {p} {code} response header {h}", m.to_uppercase()), ts, at(doc, &s[..7]), rest)
        }
        ["paths", p, "parameters", _, rest @ ..] => {
            let (param, ts) = parameter(doc, &s[..4], &format!("paths[{}]", lit(p)))?;
            (format!("{p} parameter {param}"), ts, at(doc, &s[..4]), rest)
        }
        ["paths", p, m, "parameters", _, rest @ ..] => {
            let (param, ts) = parameter(doc, &s[..5], &format!("paths[{}][{}]", lit(p), lit(m)))?;
            (format!("{} {p} parameter {param}", m.to_uppercase()), ts, at(doc, &s[..5]), rest)
        }
        ["components", "parameters", n, rest @ ..] => (format!("parameter {n}"), format!("components[\"parameters\"][{}]", lit(n)), at(doc, &s[..3]), rest),
        ["components", "headers", n, rest @ ..] => (format!("header {n}"), format!("components[\"headers\"][{}]", lit(n)), at(doc, &s[..3]), rest),
        ["components", "responses", n, "content", ct, rest @ ..] => {
            let ts = format!("components[\"responses\"][{}][\"content\"][{}]", lit(n), lit(ct));
            return media(doc, &s[..5], rest, ts, format!("response {n}"), example);
        }
        ["components", "schemas", n, rest @ ..] => {
            let ts = format!("components[\"schemas\"][{}]", lit(n));
            let (ts, node) = schema_path(at(doc, &s[..3]), rest, ts)?;
            let place = if rest.len() == 1 { format!("schema {n}") } else { format!("schema {n} at {}", rest.join("/")) };
            return Ok(example(place, ts, model_of(node), None));
        }
        ["x-webhooks", e, m, "requestBody", "content", _, "example"] | ["x-webhooks", e, m, "requestBody", "content", _, "examples", _, "value"] => {
            let schema = &at(doc, &s[..6])["schema"];
            let (envelope, data) = webhook_models(schema)?;
            return Ok(example(format!("webhook {e} ({m})"), ts_of(schema)?, Some(envelope), Some(data)));
        }
        _ => bail!("no known place"),
    };
    // a parameter's or header's own example, or one in its schema
    match rest {
        ["example"] | ["examples", _, "value"] => Ok(example(place, ts, model_of(&node["schema"]), None)),
        ["schema", tail @ ..] => {
            let (ts, schema) = schema_path(&node["schema"], tail, ts)?;
            Ok(example(place, ts, model_of(schema), None))
        }
        _ => bail!("no known place in {place}"),
    }
}

/// An example of a media type (`content/<type>`, at `base`): its own, or
/// one inside its schema.
fn media(
    doc: &Value,
    base: &[&str],
    rest: &[&str],
    ts: String,
    place: String,
    example: impl Fn(String, String, Option<Model>, Option<Model>) -> Example,
) -> Result<Example> {
    let schema = &at(doc, base)["schema"];
    match rest {
        ["example"] | ["examples", _, "value"] => Ok(example(place, ts, model_of(schema), None)),
        ["schema", tail @ ..] => {
            let (ts, node) = schema_path(schema, tail, ts)?;
            Ok(example(format!("{place}, schema at {}", tail.join("/")), ts, model_of(node), None))
        }
        _ => bail!("no known place in {place}"),
    }
}

/// An inline parameter's name and its TypeScript type: openapi-typescript
/// groups an operation's parameters by where they go, each group optional
/// when all of its parameters are.
fn parameter(doc: &Value, base: &[&str], owner: &str) -> Result<(String, String)> {
    let p = at(doc, base);
    if p.get("$ref").is_some() {
        bail!("a $ref parameter's example lives in components");
    }
    let (Some(name), Some(place)) = (p["name"].as_str(), p["in"].as_str()) else { bail!("a parameter without name or in") };
    let lit = |x: &str| serde_json::to_string(x).unwrap_or_default();
    Ok((name.to_string(), format!("NonNullable<{owner}[\"parameters\"][{}]>[{}]", lit(place), lit(name))))
}

/// Follows `rest` (ending in the example) through a schema's properties,
/// items and one-element `allOf`s, narrowing the TypeScript type alongside.
fn schema_path<'a>(schema: &'a Value, rest: &[&str], ts: String) -> Result<(String, &'a Value)> {
    match rest {
        ["example"] | ["examples", _] => Ok((ts, schema)),
        ["properties", name, tail @ ..] => {
            let ts = format!("NonNullable<{ts}>[{}]", serde_json::to_string(name)?);
            schema_path(&schema["properties"][*name], tail, ts)
        }
        ["items", tail @ ..] => schema_path(&schema["items"], tail, format!("NonNullable<{ts}>[number]")),
        ["additionalProperties", tail @ ..] => schema_path(&schema["additionalProperties"], tail, format!("NonNullable<{ts}>[string]")),
        // `allOf: [X]` names X beside a description of its own: the same type
        ["allOf", "0", tail @ ..] if schema["allOf"].as_array().is_some_and(|a| a.len() == 1) => schema_path(&schema["allOf"][0], tail, ts),
        _ => bail!("no known place in a schema at {}", rest.join("/")),
    }
}

/// The component a schema names: `$ref`, `allOf: [$ref]`, or a list of one.
fn model_of(schema: &Value) -> Option<Model> {
    if let Some(name) = crate::spec::ref_name(schema) {
        return Some(Model { name, list: false });
    }
    if let Some([only]) = schema["allOf"].as_array().map(Vec::as_slice) {
        return model_of(only);
    }
    if schema["type"] == "array" {
        return model_of(&schema["items"]).filter(|m| !m.list).map(|m| Model { list: true, ..m });
    }
    None
}

/// A webhook payload's envelope and `data` schemas: `allOf: [$ref
/// EventEnvelope, {properties: {type, data}}]`, the shape spec/src/events.yaml
/// gives every event.
fn webhook_models(schema: &Value) -> Result<(Model, Model)> {
    let parts = schema["allOf"].as_array().map(Vec::as_slice).unwrap_or_default();
    let [envelope, own] = parts else { bail!("a webhook payload that is not allOf [envelope, its own part]") };
    let envelope = model_of(envelope).filter(|m| !m.list);
    match (envelope, model_of(&own["properties"]["data"])) {
        (Some(envelope), Some(data)) => Ok((envelope, data)),
        _ => bail!("a webhook payload whose envelope or data names no schema"),
    }
}

/// A TypeScript type for a schema openapi-typescript leaves untyped (the
/// `x-webhooks` of an OpenAPI 3.0 document: its `webhooks` is empty), made
/// the way it types components: `$ref` by name, `allOf` as `&`, objects
/// with `?` on what is not required. Only the keywords a webhook payload
/// uses are known; any other fails rather than being typed loosely.
pub(crate) fn ts_of(schema: &Value) -> Result<String> {
    let Value::Object(m) = schema else { bail!("a schema that is not an object") };
    for k in m.keys() {
        let known = ["$ref", "allOf", "type", "enum", "properties", "required", "items", "nullable", "description", "format", "example"];
        if !known.contains(&k.as_str()) {
            bail!("a webhook schema keyword the check cannot type: {k}");
        }
    }
    let mut ts = if let Some(name) = crate::spec::ref_name(schema) {
        format!("components[\"schemas\"][{}]", serde_json::to_string(&name)?)
    } else if let Some(all) = m.get("allOf").and_then(Value::as_array) {
        let parts: Vec<String> = all.iter().map(|s| ts_of(s).map(|t| format!("({t})"))).collect::<Result<_>>()?;
        parts.join(" & ")
    } else if let Some(values) = m.get("enum").and_then(Value::as_array) {
        let lits: Vec<String> = values.iter().map(Value::to_string).collect();
        lits.join(" | ")
    } else {
        match m.get("type").and_then(Value::as_str) {
            Some("object") | None if m.contains_key("properties") => {
                let required: Vec<&str> = m.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
                let mut out = String::from("{ ");
                for (name, s) in m["properties"].as_object().into_iter().flatten() {
                    let opt = if required.contains(&name.as_str()) { "" } else { "?" };
                    let _ = write!(out, "{}{opt}: {}; ", serde_json::to_string(name)?, ts_of(s)?);
                }
                out + "}"
            }
            Some("array") => format!("({})[]", ts_of(&m["items"])?),
            Some("string") => "string".into(),
            Some("integer" | "number") => "number".into(),
            Some("boolean") => "boolean".into(),
            other => bail!("a webhook schema of type {other:?} the check cannot type"),
        }
    };
    if m.get("nullable") == Some(&Value::Bool(true)) {
        ts = format!("({ts}) | null");
    }
    Ok(ts)
}

/// The lines of the TypeScript file that one example spans, and its place.
pub(crate) type Span = (usize, usize, String);

/// The TypeScript file that assigns every example to its type with
/// `satisfies` (so a missing or an unknown property is an error, and string
/// values stay literals for enums), and for each example the lines it spans,
/// to name the example in tsc's messages.
pub(crate) fn typescript(examples: &[Example]) -> Result<(String, Vec<Span>)> {
    let mut out = String::from(
        "// Made by `cargo xtask clients`: every example of openapi.json as the type\n\
         // openapi-typescript gives its place. Not to be edited.\n\
         import type { components, paths } from \"./schema.js\";\n",
    );
    let mut spans = vec![];
    for (i, e) in examples.iter().enumerate() {
        let _ = writeln!(out, "\n// {} (#{})", e.place, e.pointer);
        let start = out.lines().count() + 1;
        let _ = writeln!(out, "export const example{i} = {} satisfies {};", serde_json::to_string_pretty(&e.value)?, e.ts);
        spans.push((start, out.lines().count(), format!("{} (#{})", e.place, e.pointer)));
    }
    Ok((out, spans))
}

/// What the Python clients parse: each example with its models (the
/// examples without one are left out; TypeScript has checked them). A model
/// that is a map (an object schema without properties, as OpenApiDocument)
/// says so: openapi-generator makes no class for it, only `Dict`.
pub(crate) fn manifest(doc: &Value, examples: &[Example]) -> Value {
    let model = |m: &Option<Model>| {
        m.as_ref().map(|m| {
            let schema = &doc["components"]["schemas"][&m.name];
            let map = schema["type"] == "object" && ["properties", "allOf", "oneOf", "anyOf"].iter().all(|k| schema.get(k).is_none());
            json!({"name": m.name, "list": m.list, "map": map})
        })
    };
    Value::Array(
        examples
            .iter()
            .filter(|e| e.model.is_some() || e.data.is_some())
            .map(|e| {
                let (model, data) = (model(&e.model), model(&e.data));
                json!({"place": e.place, "pointer": e.pointer, "model": model, "data": data, "value": e.value})
            })
            .collect(),
    )
}

fn at<'a>(doc: &'a Value, segs: &[&str]) -> &'a Value {
    let p: Vec<String> = segs.iter().map(|s| s.to_string()).collect();
    doc.pointer(&pointer(&p)).unwrap_or(&Value::Null)
}

/// RFC 6901: `~` and `/` escaped in each segment.
fn pointer(segs: &[String]) -> String {
    segs.iter().map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1"))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kind of place gets the type openapi-typescript gives it, and
    /// an example in no known place is refused.
    #[test]
    fn places() {
        let doc = json!({
            "paths": {"/customers": {"post": {
                "parameters": [{"in": "query", "name": "q", "schema": {"type": "string", "example": "x"}}],
                "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/New"}, "example": {"a": 1}}}},
                "responses": {"201": {"content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/C"}, "examples": {"one": {"value": {"b": 2}}}}}}}
            }}},
            "components": {"schemas": {"C": {"type": "object", "properties": {"example": {"type": "string", "example": "e"}}}}},
            "x-webhooks": {"c.made": {"post": {"requestBody": {"content": {"application/json": {
                "schema": {"allOf": [{"$ref": "#/components/schemas/Env"}, {"type": "object", "properties": {
                    "type": {"type": "string", "enum": ["c.made"]}, "data": {"allOf": [{"$ref": "#/components/schemas/C"}]}}}]},
                "example": {"type": "c.made"}}}}}}}
        });
        let examples = collect(&doc).unwrap();
        let ts: Vec<&str> = examples.iter().map(|e| e.ts.as_str()).collect();
        // serde_json keeps keys sorted: components, paths, x-webhooks
        assert_eq!(
            ts,
            [
                "NonNullable<components[\"schemas\"][\"C\"]>[\"example\"]",
                "NonNullable<paths[\"/customers\"][\"post\"][\"parameters\"][\"query\"]>[\"q\"]",
                "NonNullable<paths[\"/customers\"][\"post\"][\"requestBody\"]>[\"content\"][\"application/json\"]",
                "paths[\"/customers\"][\"post\"][\"responses\"][\"201\"][\"content\"][\"application/json\"]",
                "(components[\"schemas\"][\"Env\"]) & ({ \"data\"?: (components[\"schemas\"][\"C\"]); \"type\"?: \"c.made\"; })",
            ]
        );
        assert_eq!(examples[2].model.as_ref().unwrap().name, "New");
        assert_eq!(examples[4].data.as_ref().unwrap().name, "C");
        assert!(examples[0].model.is_none() && examples[1].model.is_none());

        // an example nowhere the check knows, and one by reference
        let odd = json!({"info": {"example": 1}});
        assert!(collect(&odd).is_err());
        let by_ref = json!({"components": {"responses": {"R": {"content": {"application/json": {
            "schema": {"type": "object"}, "examples": {"r": {"$ref": "#/components/examples/X"}}}}}}}});
        assert!(collect(&by_ref).is_err());
    }
}
