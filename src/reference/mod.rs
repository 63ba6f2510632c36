//! The reference page (`GET /docs`, `/docs/{revision}`): each revision's
//! published document rendered once as one self-contained HTML page (no
//! script, no outside resource), every text escaped.

mod events;
mod markdown;
mod operations;
mod schemas;

use crate::markup::escape;
use crate::wire::revision::Revision;
use serde_json::Value;
use std::sync::OnceLock;

pub use markdown::markdown;

/// Where the API's routes are (the servers' `url` of the documents, and
/// the prefix codegen gives every path): the pages link each other and
/// the documents under it.
const MOUNT: &str = "/api/v2";

/// The page of `revision`, rendered the first time it is asked for.
pub fn page(revision: &'static Revision) -> &'static str {
    static PAGES: OnceLock<Vec<OnceLock<String>>> = OnceLock::new();
    let pages = PAGES.get_or_init(|| Revision::all().iter().map(|_| OnceLock::new()).collect());
    let i = Revision::all().iter().position(|r| r.name == revision.name).expect("a published revision");
    pages[i].get_or_init(|| {
        // the documents are embedded at build time and checked by its tests:
        // one that does not parse is a broken build, not a request's fault
        let doc: Value = serde_json::from_str(revision.document()).expect("the embedded document is JSON");
        render(&Doc { raw: &doc, name: revision.name })
    })
}

/// One revision's document, as the parts of its page read it.
struct Doc<'a> {
    raw: &'a Value,
    /// the revision's full name, e.g. `2026-09-01.bullfinch`
    name: &'a str,
}

impl Doc<'_> {
    /// What a `#/...` reference points to in the document.
    fn resolve<'v>(&'v self, v: &'v Value) -> &'v Value {
        match v["$ref"].as_str().and_then(|r| r.strip_prefix('#')) {
            Some(pointer) => self.raw.pointer(pointer).unwrap_or(&Value::Null),
            None => v,
        }
    }
}

/// The component a `#/components/<kind>/Name` reference names.
fn ref_name(v: &Value) -> Option<&str> {
    v["$ref"].as_str().and_then(|r| r.rsplit('/').next())
}

/// An id for a tag's section: `Payment Links` is `tag-payment-links`.
fn tag_anchor(tag: &str) -> String {
    let slug: String = tag.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    format!("tag-{slug}")
}

/// The tags in the document's order, with any an operation names that the
/// document's list lacks after them.
fn tags(doc: &Doc) -> Vec<(String, Option<String>)> {
    let mut out: Vec<(String, Option<String>)> = doc.raw["tags"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| Some((t["name"].as_str()?.to_string(), t["description"].as_str().map(str::to_string))))
        .collect();
    for op in operations::all(doc) {
        if !out.iter().any(|(name, _)| *name == op.tag) {
            out.push((op.tag.clone(), None));
        }
    }
    out
}

const STYLE: &str = "\
*{box-sizing:border-box}\
body{margin:0;font:15px/1.5 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1f2328;background:#fff}\
code,pre,.mono{font-family:ui-monospace,'SFMono-Regular',Menlo,Consolas,monospace;font-size:.9em}\
code{background:#f3f4f6;padding:.05rem .3rem;border-radius:4px}\
a{color:#0b5cad;text-decoration:none}a:hover{text-decoration:underline}\
nav.toc{position:fixed;top:0;left:0;bottom:0;width:19rem;overflow-y:auto;padding:1rem 1rem 2rem;background:#f7f8fa;border-right:1px solid #e2e5e9;font-size:.85rem}\
nav.toc h2{font-size:.95rem;margin:1rem 0 .3rem}nav.toc ul{list-style:none;margin:0;padding:0 0 0 .6rem}\
nav.toc li{margin:.1rem 0;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}\
nav.toc details>summary{cursor:pointer;margin:.15rem 0}nav.toc .count{color:#6a737d}\
main{margin-left:19rem;padding:1.5rem 2.5rem 4rem;max-width:76rem}\
header.page{margin-bottom:1rem}\
header.page h1{margin:0 0 .3rem;font-size:1.6rem}\
.facts{color:#57606a;font-size:.85rem}.facts span{margin-right:.8rem}\
.switcher{margin:.6rem 0}.switcher a,.switcher strong{display:inline-block;margin:0 .4rem .3rem 0;padding:.15rem .6rem;border:1px solid #c9d1d9;border-radius:999px;font-size:.85rem}\
.switcher strong{background:#0b5cad;color:#fff;border-color:#0b5cad}\
h2{font-size:1.35rem;margin:2.2rem 0 .6rem;padding-top:.6rem;border-top:2px solid #e2e5e9}\
h3{font-size:1.05rem;margin:0 0 .4rem}h4{font-size:.9rem;margin:.9rem 0 .3rem;color:#444}\
section.op,section.schema,section.event{border:1px solid #e2e5e9;border-radius:8px;padding:.9rem 1.1rem;margin:1rem 0}\
.method{display:inline-block;min-width:4.2rem;text-align:center;padding:.05rem .4rem;margin-right:.5rem;border-radius:4px;color:#fff;font-size:.8rem;font-weight:600}\
.get{background:#1a7f37}.post{background:#0b5cad}.put{background:#9a6700}.patch{background:#8250df}.delete{background:#cf222e}\
.opid{color:#57606a;font-size:.85rem}\
table{border-collapse:collapse;width:100%;margin:.4rem 0;font-size:.88rem}.wide{overflow-x:auto}td code{overflow-wrap:anywhere}td:first-child code{overflow-wrap:normal;white-space:nowrap}\
details>summary{cursor:pointer;color:#0b5cad;font-size:.88rem}\
th,td{border:1px solid #e2e5e9;padding:.3rem .5rem;text-align:left;vertical-align:top}th{background:#f7f8fa}\
td>p:first-child{margin-top:0}td>p:last-child{margin-bottom:0}\
.badge{display:inline-block;font-size:.72rem;padding:0 .35rem;border-radius:4px;margin-left:.3rem;background:#eef1f4;color:#444}\
.badge.required{background:#ffebe9;color:#a40e26}.badge.deprecated{background:#fff8c5;color:#7d4e00}\
.limits{color:#57606a;font-size:.82rem}\
.index{columns:15rem;font-size:.85rem}\
@media (max-width:60rem){nav.toc{position:static;width:auto;border-right:0}main{margin-left:0;padding:1rem}}";

/// The whole page of one revision.
fn render(doc: &Doc) -> String {
    let info = &doc.raw["info"];
    let title = info["title"].as_str().unwrap_or("API reference");
    let support = match info["x-supported-until"].as_str() {
        Some(until) => format!("<span>Supported until <strong id=\"supported-until\">{}</strong></span>", escape(until)),
        None => "<span>No end of support announced</span>".to_string(),
    };
    let current = if doc.name == Revision::current().name { "<span class=\"badge\">the current revision</span>" } else { "" };
    let base = doc.raw["servers"][0]["url"].as_str().unwrap_or("/");
    let header = format!(
        "<header class=\"page\"><h1>{title}</h1>\
         <div class=\"facts\"><span>Revision <code id=\"revision\">{name}</code>{current}</span>{support}\
         <span>Base path <code>{base}</code></span><span>OpenAPI {openapi}</span>\
         <span><a href=\"{MOUNT}/openapi/{name}.json\">the document (JSON)</a></span></div>\
         {switcher}{description}</header>",
        title = escape(title),
        name = escape(doc.name),
        base = escape(base),
        openapi = escape(doc.raw["openapi"].as_str().unwrap_or("")),
        switcher = switcher(doc),
        description = markdown(info["description"].as_str().unwrap_or("")),
    );
    let tags = tags(doc);
    let ops = operations::all(doc);
    let mut body = String::new();
    body.push_str(&authentication(doc));
    body.push_str(&operations::common(doc));
    for (tag, description) in &tags {
        body.push_str(&format!("<section class=\"tag\" id=\"{}\"><h2>{}</h2>", tag_anchor(tag), escape(tag)));
        if let Some(d) = description {
            body.push_str(&markdown(d));
        }
        for op in ops.iter().filter(|op| op.tag == *tag) {
            body.push_str(&operations::render(doc, op));
        }
        body.push_str("</section>");
    }
    body.push_str(&events::render(doc));
    body.push_str(&schemas::render(doc));
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{} ({}): reference</title><style>{STYLE}</style></head>\
         <body>{}<main>{header}{body}</main></body></html>",
        escape(title),
        escape(doc.name),
        toc(doc, &tags, &ops),
    )
}

/// Links to the page of every revision, this one marked.
fn switcher(doc: &Doc) -> String {
    let links: String = Revision::all()
        .iter()
        .map(|r| {
            if r.name == doc.name {
                format!("<strong aria-current=\"page\">{}</strong>", escape(r.name))
            } else {
                format!("<a href=\"{MOUNT}/docs/{0}\">{0}</a>", escape(r.name))
            }
        })
        .collect();
    format!("<nav class=\"switcher\" aria-label=\"Revisions\">{links}</nav>")
}

/// The sidebar: authentication, each tag with its operations, the events
/// and the schemas.
fn toc(doc: &Doc, tags: &[(String, Option<String>)], ops: &[operations::Op]) -> String {
    let mut out = format!("<nav class=\"toc\" aria-label=\"Contents\"><strong>{}</strong>", escape(doc.name));
    out.push_str(
        "<h2><a href=\"#authentication\">Authentication</a></h2><h2><a href=\"#common\">Common parameters and responses</a></h2><h2>Operations</h2><ul>",
    );
    for (tag, _) in tags {
        let mine: Vec<&operations::Op> = ops.iter().filter(|op| op.tag == *tag).collect();
        out.push_str(&format!(
            "<li><details><summary><a href=\"#{}\">{}</a> <span class=\"count\">{}</span></summary><ul>",
            tag_anchor(tag),
            escape(tag),
            mine.len()
        ));
        for op in mine {
            out.push_str(&format!(
                "<li><a href=\"#op-{}\"><span class=\"mono\">{} {}</span></a></li>",
                escape(&op.id),
                escape(&op.method.to_uppercase()),
                escape(&op.path)
            ));
        }
        out.push_str("</ul></details></li>");
    }
    out.push_str("</ul>");
    let events = events::types(doc);
    out.push_str(&format!("<h2><a href=\"#events\">Events</a> <span class=\"count\">{}</span></h2><details><summary>every type</summary><ul>", events.len()));
    for t in events {
        out.push_str(&format!("<li><a class=\"mono\" href=\"#event-{0}\">{0}</a></li>", escape(t)));
    }
    let schemas = doc.raw["components"]["schemas"].as_object().map_or(0, |s| s.len());
    out.push_str(&format!("</ul></details><h2><a href=\"#schemas\">Schemas</a> <span class=\"count\">{schemas}</span></h2></nav>"));
    out
}

/// The security schemes: how a caller authenticates, and what a user's
/// token allows (their descriptions).
fn authentication(doc: &Doc) -> String {
    let mut out = String::from("<section id=\"authentication\"><h2>Authentication</h2>");
    let default = operations::security(&doc.raw["security"]);
    out.push_str(&format!("<p>Unless an operation says otherwise: {default}.</p>"));
    for (name, scheme) in doc.raw["components"]["securitySchemes"].as_object().into_iter().flatten() {
        let how = match (scheme["type"].as_str(), scheme["in"].as_str(), scheme["name"].as_str(), scheme["scheme"].as_str()) {
            (Some("apiKey"), Some(at), Some(header), _) => format!("an API key in the {} <code>{}</code>", escape(at), escape(header)),
            (Some("http"), _, _, Some(s)) => format!(
                "HTTP <code>Authorization: {} …</code>{}",
                escape(&capitalised(s)),
                scheme["bearerFormat"].as_str().map(|f| format!(" ({})", escape(f))).unwrap_or_default()
            ),
            (t, ..) => escape(t.unwrap_or("")),
        };
        out.push_str(&format!(
            "<div id=\"security-{0}\"><h3>{0}</h3><p class=\"facts\">{how}</p>{1}</div>",
            escape(name),
            markdown(scheme["description"].as_str().unwrap_or(""))
        ));
    }
    out.push_str("</section>");
    out
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_revision_has_its_page_with_every_anchor() {
        for revision in Revision::all() {
            let html = page(revision);
            let doc: Value = serde_json::from_str(revision.document()).unwrap();
            for item in doc["paths"].as_object().unwrap().values() {
                for op in item.as_object().unwrap().values() {
                    let id = op["operationId"].as_str().unwrap();
                    assert!(html.contains(&format!("id=\"op-{id}\"")), "{}: {id}", revision.name);
                }
            }
            for t in doc["x-webhooks"].as_object().unwrap().keys() {
                assert!(html.contains(&format!("id=\"event-{t}\"")), "{}: {t}", revision.name);
            }
            for s in doc["components"]["schemas"].as_object().unwrap().keys() {
                assert!(html.contains(&format!("id=\"schema-{s}\"")), "{}: {s}", revision.name);
            }
            // rendered once: the same text each time
            assert!(std::ptr::eq(html, page(revision)));
        }
    }

    #[test]
    fn tags_have_plain_anchors() {
        assert_eq!(tag_anchor("Payment Links"), "tag-payment-links");
        assert_eq!(tag_anchor("Subscription Add-ons"), "tag-subscription-add-ons");
    }
}
