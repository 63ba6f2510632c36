//! Events on the reference page: every type of the document's `x-webhooks`
//! under `#event-{type}`, with its payload (`data`'s schema linked) and what
//! the receiving endpoint answers.

use super::schemas::{body, type_line, type_of};
use super::{Doc, markdown};
use crate::markup::escape;
use serde_json::Value;

/// Every event type, in the document's order.
pub fn types<'a>(doc: &'a Doc) -> Vec<&'a str> {
    doc.raw["x-webhooks"].as_object().into_iter().flatten().map(|(t, _)| t.as_str()).collect()
}

/// The Events section.
pub fn render(doc: &Doc) -> String {
    let mut out = String::from(
        "<section id=\"events\"><h2>Events</h2><p>What the server sends to a registered webhook endpoint \
         (<code>POST</code>, signed), and lists in the event log: one section per event type, with its payload.</p>",
    );
    for (kind, item) in doc.raw["x-webhooks"].as_object().into_iter().flatten() {
        out.push_str(&event(doc, kind, item));
    }
    out.push_str("</section>");
    out
}

fn event(doc: &Doc, kind: &str, item: &Value) -> String {
    // a webhook is a path item; ours are POSTs, but any method reads alike
    let op = item.as_object().and_then(|m| m.values().find(|v| v.is_object())).unwrap_or(&Value::Null);
    let mut out = format!("<section class=\"event\" id=\"event-{0}\"><h3 class=\"mono\">{0}</h3>", escape(kind));
    if let Some(summary) = op["summary"].as_str().filter(|s| *s != kind) {
        out.push_str(&format!("<div class=\"facts\">{}</div>", escape(summary)));
    }
    out.push_str(&markdown(op["description"].as_str().unwrap_or("")));
    let request = doc.resolve(&op["requestBody"]);
    for (media, content) in request["content"].as_object().into_iter().flatten() {
        let schema = &content["schema"];
        if let Some(data) = data_of(doc, schema) {
            out.push_str(&format!("<p><strong>Payload</strong>: <code>data</code> is {}</p>", type_of(data)));
        }
        out.push_str(&format!("<p><code>{}</code>: {}</p>{}", escape(media), type_line(schema), body(schema, 0)));
    }
    for (status, response) in op["responses"].as_object().into_iter().flatten() {
        let response = doc.resolve(response);
        out.push_str(&format!(
            "<p class=\"facts\">The endpoint answers <code>{}</code>: {}</p>",
            escape(status),
            escape(response["description"].as_str().unwrap_or(""))
        ));
    }
    out.push_str("</section>");
    out
}

/// The schema of the payload's `data`: a property of the schema or of one
/// of the parts it is made of (`allOf: [EventEnvelope, {data}]`: the last
/// part that says, as it is the one that narrows the envelope's).
fn data_of<'v>(doc: &'v Doc, schema: &'v Value) -> Option<&'v Value> {
    let schema = doc.resolve(schema);
    if let Some(data) = schema["properties"].get("data") {
        return Some(data);
    }
    schema["allOf"].as_array().into_iter().flatten().rev().find_map(|part| data_of(doc, part))
}
