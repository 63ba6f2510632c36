//! Operations on the reference page: each under `#op-{operationId}`, with
//! its parameters, request body, responses, who may call it, the events it
//! records and the operations its answers lead to; and the parameters,
//! responses and headers they share, described once.

use super::schemas::{badges, body, limits, type_line, type_of};
use super::{Doc, markdown, ref_name};
use crate::markup::escape;
use serde_json::Value;

/// The methods an OpenAPI path item may hold, in the order shown.
const METHODS: [&str; 8] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/// One operation of the document.
pub struct Op<'a> {
    pub id: String,
    pub method: String,
    pub path: String,
    /// its first tag: the section it is shown in
    pub tag: String,
    raw: &'a Value,
    /// the path item's own parameters, which every operation of it takes
    shared: &'a Value,
}

/// Every operation, in the document's order.
pub fn all<'a>(doc: &'a Doc) -> Vec<Op<'a>> {
    let mut out = vec![];
    for (path, item) in doc.raw["paths"].as_object().into_iter().flatten() {
        for method in METHODS {
            let Some(op) = item.get(method) else { continue };
            out.push(Op {
                id: op["operationId"].as_str().map_or_else(|| format!("{method}-{path}"), str::to_string),
                method: method.to_string(),
                path: path.clone(),
                tag: op["tags"][0].as_str().unwrap_or("Other").to_string(),
                raw: op,
                shared: &item["parameters"],
            });
        }
    }
    out
}

/// One operation's section.
pub fn render(doc: &Doc, op: &Op) -> String {
    let raw = op.raw;
    let deprecated = if raw["deprecated"] == true { "<span class=\"badge deprecated\">deprecated</span>" } else { "" };
    let mut out = format!(
        "<section class=\"op\" id=\"op-{id}\"><h3><span class=\"method {method}\">{upper}</span><span class=\"mono\">{path}</span>{deprecated}</h3>\
         <div class=\"facts\"><span>{summary}</span><span class=\"opid\">operationId <code>{id}</code></span></div>{description}",
        id = escape(&op.id),
        method = escape(&op.method),
        upper = escape(&op.method.to_uppercase()),
        path = escape(&op.path),
        summary = escape(raw["summary"].as_str().unwrap_or("")),
        description = markdown(raw["description"].as_str().unwrap_or("")),
    );
    let required = if raw.get("security").is_some() { &raw["security"] } else { &doc.raw["security"] };
    out.push_str(&format!("<p class=\"facts\">Credentials: {}</p>", security(required)));
    out.push_str(&parameters(doc, op));
    out.push_str(&request_body(doc, &raw["requestBody"]));
    out.push_str(&responses(doc, &raw["responses"]));
    if let Some(events) = raw["x-events"].as_array().filter(|e| !e.is_empty()) {
        let links: Vec<String> = events.iter().filter_map(Value::as_str).map(|t| format!("<a class=\"mono\" href=\"#event-{0}\">{0}</a>", escape(t))).collect();
        out.push_str(&format!("<p class=\"facts\">Records the events: {}</p>", links.join(", ")));
    }
    out.push_str("</section>");
    out
}

/// Who may call: the alternatives of a security requirement, each scheme a
/// link to its description (`[]`: anyone).
pub fn security(security: &Value) -> String {
    let Some(alternatives) = security.as_array() else {
        return "none named".into();
    };
    if alternatives.is_empty() || alternatives.iter().any(|a| a.as_object().is_some_and(|o| o.is_empty())) {
        return "none needed".into();
    }
    let shown: Vec<String> = alternatives
        .iter()
        .map(|a| {
            let schemes: Vec<String> = a
                .as_object()
                .into_iter()
                .flatten()
                .map(|(name, scopes)| {
                    let scopes: Vec<&str> = scopes.as_array().into_iter().flatten().filter_map(Value::as_str).collect();
                    let scopes = if scopes.is_empty() { String::new() } else { format!(" ({})", escape(&scopes.join(", "))) };
                    format!("<a href=\"#security-{0}\">{0}</a>{scopes}", escape(name))
                })
                .collect();
            schemes.join(" with ")
        })
        .collect();
    shown.join(", or ")
}

/// The parameters table: the path item's and the operation's own (one of
/// `components/parameters` named, and linked to its row in Common).
fn parameters(doc: &Doc, op: &Op) -> String {
    let listed: Vec<&Value> = op.shared.as_array().into_iter().flatten().chain(op.raw["parameters"].as_array().into_iter().flatten()).collect();
    if listed.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h4>Parameters</h4><table><thead><tr><th>Name</th><th>In</th><th>Type</th><th>Description</th></tr></thead><tbody>");
    for p in listed {
        let common = ref_name(p).map(|n| format!("<p>The common parameter <a href=\"#parameter-{0}\">{0}</a>.</p>", escape(n)));
        out.push_str(&parameter_row(doc.resolve(p), common, ""));
    }
    out.push_str("</tbody></table>");
    out
}

/// A parameter's row (`id`: its anchor, with the attribute's space).
fn parameter_row(p: &Value, description: Option<String>, id: &str) -> String {
    let schema = &p["schema"];
    let required = if p["required"] == true { "<span class=\"badge required\">required</span>" } else { "" };
    let limits = limits(schema);
    let limits = if limits.is_empty() { String::new() } else { format!("<div class=\"limits\">{limits}</div>") };
    format!(
        "<tr{id}><td><code>{}</code>{required}{}</td><td>{}</td><td>{}</td><td>{}{limits}</td></tr>",
        escape(p["name"].as_str().unwrap_or("")),
        badges(p),
        escape(p["in"].as_str().unwrap_or("")),
        type_of(schema),
        description.unwrap_or_else(|| markdown(p["description"].as_str().unwrap_or(""))),
    )
}

/// The request body: whether it is required, and each media type's schema.
fn request_body(doc: &Doc, body_spec: &Value) -> String {
    if body_spec.is_null() {
        return String::new();
    }
    let body_spec = doc.resolve(body_spec);
    let needed = if body_spec["required"] == true { "required" } else { "optional" };
    let mut out = format!("<h4>Request body <span class=\"badge\">{needed}</span></h4>{}", markdown(body_spec["description"].as_str().unwrap_or("")));
    for (media, content) in body_spec["content"].as_object().into_iter().flatten() {
        let schema = &content["schema"];
        out.push_str(&format!("<p><code>{}</code>: {}</p>", escape(media), type_line(schema)));
        // a named schema's properties here too, folded (they are under its
        // own anchor as well)
        match ref_name(schema) {
            Some(name) => out.push_str(&format!("<details><summary>The properties of {}</summary>{}</details>", escape(name), body(doc.resolve(schema), 0))),
            None => out.push_str(&body(schema, 0)),
        }
    }
    out
}

/// The responses table: status, description (with its headers), and what
/// each media type holds; the statuses answered with one of
/// `components/responses` together in a row linked to it in Common; then
/// where a success leads (OpenAPI links).
fn responses(doc: &Doc, responses: &Value) -> String {
    let Some(responses) = responses.as_object() else {
        return String::new();
    };
    let mut out = String::from("<h4>Responses</h4><table><thead><tr><th>Status</th><th>Description</th><th>Body</th></tr></thead><tbody>");
    // (the shared ones: name, statuses, the response; in the order met)
    let mut shared: Vec<(&str, Vec<&str>, &Value)> = vec![];
    let mut leads = vec![];
    for (status, response) in responses {
        if let Some(name) = ref_name(response) {
            match shared.iter_mut().find(|(n, ..)| *n == name) {
                Some((_, statuses, _)) => statuses.push(status),
                None => shared.push((name, vec![status], doc.resolve(response))),
            }
            continue;
        }
        out.push_str(&format!(
            "<tr><td><code>{}</code></td><td>{}{}</td><td>{}</td></tr>",
            escape(status),
            markdown(response["description"].as_str().unwrap_or("")),
            headers_of(response),
            contents(response)
        ));
        for (name, link) in response["links"].as_object().into_iter().flatten() {
            if let Some(target) = link["operationId"].as_str() {
                leads.push(format!("<a href=\"#op-{0}\" title=\"{1}\">{0}</a>", escape(target), escape(name)));
            }
        }
    }
    for (name, statuses, response) in shared {
        let statuses: Vec<String> = statuses.iter().map(|s| format!("<code>{}</code>", escape(s))).collect();
        out.push_str(&format!(
            "<tr><td>{}</td><td>{}<div class=\"limits\">The common response <a href=\"#response-{name}\">{name}</a></div></td><td>{}</td></tr>",
            statuses.join(" "),
            markdown(&first_sentence(response["description"].as_str().unwrap_or(""))),
            contents(response),
            name = escape(name),
        ));
    }
    out.push_str("</tbody></table>");
    if !leads.is_empty() {
        out.push_str(&format!("<p class=\"facts\">Its answer leads to: {}</p>", leads.join(", ")));
    }
    out
}

/// A response's headers by name, each shared one linked to Common.
fn headers_of(response: &Value) -> String {
    let names: Vec<String> = response["headers"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, h)| match ref_name(h) {
            Some(shared) => format!("<a href=\"#header-{}\"><code>{}</code></a>", escape(shared), escape(name)),
            None => format!("<code>{}</code>", escape(name)),
        })
        .collect();
    if names.is_empty() { String::new() } else { format!("<div class=\"limits\">Headers: {}</div>", names.join(", ")) }
}

/// What a response's body is, per media type.
fn contents(response: &Value) -> String {
    let contents: Vec<String> =
        response["content"].as_object().into_iter().flatten().map(|(media, c)| format!("<code>{}</code> {}", escape(media), type_of(&c["schema"]))).collect();
    if contents.is_empty() { "no body".to_string() } else { contents.join("<br>") }
}

/// The first sentence of a description, for a row that links the rest.
fn first_sentence(text: &str) -> String {
    match text.find(". ") {
        Some(i) => text[..=i].to_string(),
        None => text.to_string(),
    }
}

/// The parameters, responses and response headers operations share
/// (`components`), each under its anchor, described once.
pub fn common(doc: &Doc) -> String {
    let components = &doc.raw["components"];
    let mut out = String::from("<section id=\"common\"><h2>Common parameters and responses</h2>");
    if let Some(parameters) = components["parameters"].as_object().filter(|p| !p.is_empty()) {
        out.push_str("<h4>Parameters</h4><table><thead><tr><th>Name</th><th>In</th><th>Type</th><th>Description</th></tr></thead><tbody>");
        for (name, p) in parameters {
            out.push_str(&parameter_row(p, None, &format!(" id=\"parameter-{}\"", escape(name))));
        }
        out.push_str("</tbody></table>");
    }
    if let Some(responses) = components["responses"].as_object().filter(|r| !r.is_empty()) {
        out.push_str("<h4>Responses</h4><table><thead><tr><th>Name</th><th>Description</th><th>Body</th></tr></thead><tbody>");
        for (name, r) in responses {
            out.push_str(&format!(
                "<tr id=\"response-{0}\"><td><code>{0}</code></td><td>{1}{2}</td><td>{3}</td></tr>",
                escape(name),
                markdown(r["description"].as_str().unwrap_or("")),
                headers_of(r),
                contents(r)
            ));
        }
        out.push_str("</tbody></table>");
    }
    if let Some(headers) = components["headers"].as_object().filter(|h| !h.is_empty()) {
        out.push_str("<h4>Response headers</h4><table><thead><tr><th>Name</th><th>Type</th><th>Description</th></tr></thead><tbody>");
        for (name, h) in headers {
            out.push_str(&format!(
                "<tr id=\"header-{0}\"><td><code>{0}</code></td><td>{1}</td><td>{2}</td></tr>",
                escape(name),
                type_line(&h["schema"]),
                markdown(h["description"].as_str().unwrap_or(""))
            ));
        }
        out.push_str("</tbody></table>");
    }
    out.push_str("</section>");
    out
}
