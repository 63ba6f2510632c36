//! The OpenAPI document dropshot derives from the route trait equals the
//! document in spec/, for every revision, after a normalisation whose every
//! allowance is listed (and explained) in `normalise_spec` / `normalise_derived`.

use serde_json::{Map, Value, json};
use switchboard::api::revision::Revision;
use switchboard::api::routes::switchboard_api_mod;

/// Resolves `#/components/{parameters,headers,responses}/..` references.
fn inline(doc: &Value, v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref") {
                for kind in ["parameters", "headers", "responses"] {
                    if let Some(n) = r.strip_prefix(&format!("#/components/{kind}/")) {
                        return inline(doc, &doc["components"][kind][n]);
                    }
                }
            }
            Value::Object(m.iter().map(|(k, v)| (k.clone(), inline(doc, v))).collect())
        }
        Value::Array(a) => Value::Array(a.iter().map(|v| inline(doc, v)).collect()),
        _ => v.clone(),
    }
}

fn operations(doc: &mut Value) -> impl Iterator<Item = &mut Map<String, Value>> {
    doc["paths"].as_object_mut().unwrap().values_mut().flat_map(|item| item.as_object_mut().unwrap().values_mut()).map(|op| op.as_object_mut().unwrap())
}

/// The component schemas `v` refers to, directly or through others.
fn schemas_reached(v: &Value, components: &Value) -> std::collections::BTreeSet<String> {
    fn walk(v: &Value, components: &Value, seen: &mut std::collections::BTreeSet<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    let target = r.rsplit('/').next().unwrap().to_string();
                    let kind = r.trim_start_matches("#/components/").split('/').next().unwrap();
                    let fresh = kind != "schemas" || seen.insert(target.clone());
                    if fresh {
                        walk(&components[kind][&target], components, seen);
                    }
                }
                m.values().for_each(|v| walk(v, components, seen));
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, components, seen)),
            _ => {}
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    walk(v, components, &mut seen);
    seen
}

/// What dropshot cannot say, removed from the document in spec/.
fn normalise_spec(spec: &Value) -> Value {
    let mut doc = spec.clone();
    let components = doc["components"].clone();
    let obj = doc.as_object_mut().unwrap();
    // 1. dropshot emits no top-level `servers`, `security`, `tags`, and no
    //    `securitySchemes`: these are the document's alone.
    for k in ["servers", "security"] {
        obj.remove(k);
    }
    // 2. of `info`, dropshot knows only the title and version we give it.
    obj["info"] = json!({"title": spec["info"]["title"], "version": spec["info"]["version"]});
    // 18. dropshot knows no webhooks: `x-webhooks`, and the schemas only
    //     the events use, are the document's alone.
    obj.remove("x-webhooks");
    // 20. an operation whose path has a literal segment where another's,
    //     equal before it, has a variable (GET /subscriptions/usage beside
    //     /subscriptions/{subscriptionId}, POST /payment-profiles/sessions
    //     beside /payment-profiles/{paymentProfileId}) is served through an
    //     endpoint at the variable's path, as dropshot's router needs (the
    //     codegen's `Routed`): its documentation is the document's own.
    let paths: Vec<String> = obj["paths"].as_object().unwrap().keys().cloned().collect();
    let beside_variable = |p: &str| {
        let ps: Vec<&str> = p.split('/').collect();
        paths.iter().any(|q| {
            let qs: Vec<&str> = q.split('/').collect();
            let first_difference = (0..ps.len().min(qs.len())).find(|&i| ps[i] != qs[i]);
            first_difference.is_some_and(|i| qs[i].starts_with('{') && !ps[i].starts_with('{'))
        })
    };
    obj["paths"].as_object_mut().unwrap().retain(|p, _| !beside_variable(p));
    // ... and of tags only the names of those the published endpoints
    //     have (the operations of a tag may all be routed, as above).
    let used: Vec<&Value> = obj["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|item| item.as_object().unwrap().values())
        .flat_map(|op| op["tags"].as_array().into_iter().flatten())
        .collect();
    let names: Vec<Value> = spec["tags"].as_array().into_iter().flatten().filter(|t| used.contains(&&t["name"])).map(|t| json!({"name": t["name"]})).collect();
    obj.insert("tags".into(), Value::Array(names));
    let used_by_operations = schemas_reached(&json!({"paths": obj["paths"]}), &components);
    let schemas = obj["components"]["schemas"].as_object_mut().unwrap();
    schemas.retain(|name, _| used_by_operations.contains(name));
    // 3. dropshot writes parameters, headers and responses inline.
    let mut doc = inline(&json!({"components": components}), &doc);
    let c = doc["components"].as_object_mut().unwrap();
    for k in ["securitySchemes", "parameters", "headers", "responses"] {
        c.remove(k);
    }
    for op in operations(&mut doc) {
        // 4. dropshot documents every error as `4XX`/`5XX` with the Error
        //    body; the document lists the statuses each operation uses,
        //    among them the HTTP layer's bodiless 414 (components/responses/
        //    UriTooLong, on every operation), which no handler answers.
        let responses = op["responses"].as_object_mut().unwrap();
        let error = responses.values().find(|r| r["content"]["application/json"]["schema"]["$ref"] == "#/components/schemas/Error").cloned();
        responses.retain(|code, _| code.starts_with('2'));
        if let Some(mut e) = error {
            // 5. dropshot's error responses carry no headers.
            e.as_object_mut().unwrap().remove("headers");
            e["description"] = json!("Error");
            e.as_object_mut().unwrap().get_mut("content").unwrap()["application/json"].as_object_mut().unwrap().remove("example");
            responses.insert("4XX".into(), e.clone());
            responses.insert("5XX".into(), e);
        }
        // 6. examples on media types, and the descriptions of success
        //    responses (see 15), are the document's own.
        for (code, r) in responses.iter_mut() {
            if code.starts_with('2') {
                r.as_object_mut().unwrap().remove("description");
                // 16. OpenAPI links (what a response leads to, for clients
                //     and schemathesis's stateful phase) are the document's own.
                r.as_object_mut().unwrap().remove("links");
                // 17. `Idempotent-Replayed` on the answers of operations
                //     marked (I) is the document's own: dropshot's response
                //     headers belong to the response type, not the operation.
                if let Some(h) = r.get_mut("headers").and_then(Value::as_object_mut) {
                    h.remove("Idempotent-Replayed");
                }
                // 23. a success body in another media type than JSON (the
                //     reference page's `text/html`) is a string: codegen
                //     types it `String`, which dropshot documents as JSON,
                //     titled as schemars titles it and without the
                //     schema's description; the handler sends it in its
                //     own media type.
                let other = r["content"].as_object().filter(|c| !c.contains_key("application/json")).and_then(|c| c.values().next()).cloned();
                if other.is_some_and(|m| m["schema"]["type"] == "string") {
                    r["content"] = json!({"application/json": {"schema": {"title": "String", "type": "string"}}});
                }
            }
            if let Some(m) = r.pointer_mut("/content/application~1json").and_then(Value::as_object_mut) {
                m.remove("example");
            }
        }
        if let Some(m) = op.get_mut("requestBody").and_then(|b| b.pointer_mut("/content/application~1json")).and_then(Value::as_object_mut) {
            m.remove("example");
        }
        // 21. dropshot writes every request body `required: true`. Where the
        //     document says a body may be left out, codegen reads that same
        //     flag for the extractor (`JsonBody<T, true>`), so the two agree.
        if let Some(body) = op.get_mut("requestBody").and_then(Value::as_object_mut) {
            body.insert("required".into(), Value::Bool(true));
        }
        // 7. per-operation `security: []` (open operations) is the document's own.
        op.remove("security");
        // 19. `x-events` (the events an operation records) is the
        //     document's own: dropshot knows no events.
        op.remove("x-events");
        // 8. dropshot accepts only scalar query parameters: an array parameter
        //    (repeated key) is documented to dropshot as a string.
        for p in op.get_mut("parameters").and_then(Value::as_array_mut).into_iter().flatten() {
            if p["schema"]["type"] == "array" {
                p["schema"] = json!({"type": "string"});
            }
            // 13. `required: false` is the default; dropshot leaves it out.
            if p["required"] == false {
                p.as_object_mut().unwrap().remove("required");
            }
            // 14. dropshot keeps no `default` in a parameter's schema (it
            //     moves the schema's metadata onto the parameter and drops
            //     the rest): the server applies a query default itself, and
            //     Api-Revision's default is what a generated client sends
            //     (left out, the key's pin decides).
            // 22. a parameter's example is the document's own: codegen shares
            //     one struct between revisions whose parameters differ in
            //     examples alone, so dropshot shows the newer one's.
            if let Some(s) = p.get_mut("schema").and_then(Value::as_object_mut) {
                s.remove("default");
                s.remove("example");
            }
        }
    }
    sort_parameters(doc)
}

/// What dropshot adds on its own, removed from its document.
fn normalise_derived(derived: &Value) -> Value {
    let mut doc = derived.clone();
    let obj = doc.as_object_mut().unwrap();
    // 9. the `/api/v2` prefix is in the document's `servers`, not its paths.
    let paths: Map<String, Value> =
        obj["paths"].as_object().unwrap().iter().map(|(p, v)| (p.strip_prefix("/api/v2").unwrap_or(p).to_string(), v.clone())).collect();
    obj["paths"] = Value::Object(paths);
    // 10. dropshot adds components.responses.Error, which the normalised
    //     document has inlined.
    let mut doc = inline(&doc.clone(), &doc);
    doc["components"].as_object_mut().unwrap().remove("responses");
    if doc["components"].get("responses").is_none() {
        // nothing else to drop
    }
    for op in operations(&mut doc) {
        // 15. dropshot writes fixed descriptions on success responses and
        //     spells out the default `style: simple` of response headers.
        for (code, r) in op["responses"].as_object_mut().unwrap().iter_mut() {
            if code.starts_with('2') {
                r.as_object_mut().unwrap().remove("description");
                if let Some(h) = r.pointer_mut("/headers/Api-Revision").and_then(Value::as_object_mut) {
                    h.remove("style");
                }
            }
        }
        // 11. dropshot repeats a parameter's description inside its schema.
        for p in op.get_mut("parameters").and_then(Value::as_array_mut).into_iter().flatten() {
            if let Some(s) = p.get_mut("schema").and_then(Value::as_object_mut) {
                s.remove("description");
                s.remove("example"); // (22.)
            }
        }
    }
    sort_parameters(doc)
}

/// 12. `required` is a set (schemars keeps it sorted); compared sorted.
fn sort_required(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match (k.as_str(), x) {
                    ("required", Value::Array(a)) => a.sort_by_key(|p| p.to_string()),
                    (_, x) => sort_required(x),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(sort_required),
        _ => {}
    }
}

fn sort_parameters(mut doc: Value) -> Value {
    sort_required(&mut doc);
    for op in operations(&mut doc) {
        if let Some(ps) = op.get_mut("parameters").and_then(Value::as_array_mut) {
            ps.sort_by_key(|p| (p["in"].as_str().unwrap_or("").to_string(), p["name"].as_str().unwrap_or("").to_string()));
        }
    }
    doc
}

fn differences(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => differences(p, q, &format!("{path}/{k}"), out),
                    (p, q) => out.push(format!("{path}/{k}: spec {p:?} vs derived {q:?}")),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                differences(p, q, &format!("{path}[{i}]"), out);
            }
        }
        _ if a == b => {}
        _ => out.push(format!("{path}: spec {a} vs derived {b}")),
    }
}

#[test]
fn derived_documents_equal_the_spec() {
    let api = switchboard_api_mod::stub_api_description().unwrap();
    for revision in Revision::all() {
        let spec: Value = serde_json::from_str(revision.document()).unwrap();
        let title = spec["info"]["title"].as_str().unwrap().to_string();
        let derived = api.openapi(title, revision.version.clone()).json().unwrap();
        let mut derived = derived;
        derived["info"]["version"] = json!(revision.name); // dropshot writes the semver
        let (want, got) = (normalise_spec(&spec), normalise_derived(&derived));
        let mut diffs = vec![];
        differences(&want, &got, "", &mut diffs);
        assert!(diffs.is_empty(), "{}: the trait's document differs from spec/:\n{}", revision.name, diffs.join("\n"));
    }
}
