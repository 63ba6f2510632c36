//! The reference pages (`GET /docs`, `/docs/{revision}`): each revision's
//! every operation, event type and schema under its anchor, the switcher to
//! every revision, nothing loaded from anywhere, and the Error object for a
//! revision that does not exist. (`cargo xtask browser` opens them in
//! Chromium.)

use crate::harness::*;
use futures::TryStreamExt;
use serde_json::Value;

/// A page as the generated client reads it: its headers and its text.
async fn read(answer: bullfinch::ResponseValue<bullfinch::ByteStream>) -> (reqwest::header::HeaderMap, String) {
    let headers = answer.headers().clone();
    let bytes: Vec<bytes::Bytes> = answer.into_inner().into_inner().try_collect().await.unwrap();
    (headers, String::from_utf8(bytes.concat()).unwrap())
}

fn document(revision: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(format!("{}/spec/{revision}.json", env!("CARGO_MANIFEST_DIR"))).unwrap()).unwrap()
}

/// Every value of `attribute="..."` on the page.
fn attributes<'p>(page: &'p str, attribute: &str) -> Vec<&'p str> {
    let opening = format!("{attribute}=\"");
    page.match_indices(&opening).map(|(i, _)| page[i + opening.len()..].split('"').next().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_revision_page_shows_every_operation_event_and_schema() {
    each_backend(|app| async move {
        for revision in [AUK, BULLFINCH] {
            let name = revision.parse().unwrap();
            let (headers, page) = read(app.bullfinch_open().docs_revision_view(&name).await.unwrap()).await;
            assert_eq!(headers["content-type"], "text/html; charset=utf-8");
            assert_eq!(headers["api-revision"], BULLFINCH, "answered in the client's revision, whichever page it asked for");
            let doc = document(revision);
            let ids = attributes(&page, "id");
            let mut operations = 0;
            for item in doc["paths"].as_object().unwrap().values() {
                for op in item.as_object().unwrap().values() {
                    let id = format!("op-{}", op["operationId"].as_str().unwrap());
                    assert!(ids.contains(&id.as_str()), "{revision}: no #{id}");
                    operations += 1;
                }
            }
            let events = doc["x-webhooks"].as_object().unwrap();
            for t in events.keys() {
                assert!(ids.contains(&format!("event-{t}").as_str()), "{revision}: no #event-{t}");
            }
            for s in doc["components"]["schemas"].as_object().unwrap().keys() {
                assert!(ids.contains(&format!("schema-{s}").as_str()), "{revision}: no #schema-{s}");
            }
            assert!(operations > 80 && events.len() > 30, "{revision}: {operations} operations, {} events", events.len());
            // every anchor once, and every link on the page to an anchor on it
            let mut unique = ids.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), ids.len(), "{revision}: an id twice");
            for href in attributes(&page, "href").into_iter().filter_map(|h| h.strip_prefix('#')) {
                assert!(ids.contains(&href), "{revision}: a link to #{href}, which the page lacks");
            }
            // a payload links its data's schema
            assert!(page.contains("<strong>Payload</strong>: <code>data</code> is <a href=\"#schema-Subscription\">Subscription</a>"), "{revision}");
            // the header: its name, and its end of support where announced
            assert!(page.contains(&format!("<code id=\"revision\">{revision}</code>")), "{revision}");
            match doc["info"]["x-supported-until"].as_str() {
                Some(until) => assert!(page.contains(&format!("<strong id=\"supported-until\">{until}</strong>")), "{revision}"),
                None => assert!(page.contains("No end of support announced"), "{revision}"),
            }
            // the switcher: every revision's page, this one marked
            for other in [AUK, BULLFINCH] {
                if other == revision {
                    assert!(page.contains(&format!("<strong aria-current=\"page\">{other}</strong>")), "{revision}: itself not marked");
                } else {
                    assert!(page.contains(&format!("<a href=\"/api/v2/docs/{other}\">{other}</a>")), "{revision}: no link to {other}");
                }
            }
        }
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn docs_is_the_current_revisions_page_and_loads_nothing_from_elsewhere() {
    each_backend(|app| async move {
        let (headers, current) = read(app.bullfinch_open().docs_view().await.unwrap()).await;
        let name = BULLFINCH.parse().unwrap();
        let (_, bullfinch) = read(app.bullfinch_open().docs_revision_view(&name).await.unwrap()).await;
        assert_eq!(current, bullfinch, "/docs is the current revision's page");
        // the auk client reads them too, and is answered in its revision
        let auk_name = AUK.parse().unwrap();
        let auk_page = app.auk_builder().build().docs_revision_view(&auk_name).await.unwrap();
        assert_eq!(auk_page.headers()["api-revision"], AUK);
        let auk_current = app.auk_builder().build().docs_view().await.unwrap();
        assert_eq!(auk_current.status(), 200);
        // headers as every answer's, and a policy that forbids every load
        assert_eq!(headers["cache-control"], "no-store");
        assert_eq!(headers["x-content-type-options"], "nosniff");
        let policy = headers["content-security-policy"].to_str().unwrap();
        assert!(policy.starts_with("default-src 'none';") && !policy.contains("script-src") && !policy.contains("http"), "{policy}");
        for page in [&current, &bullfinch] {
            for tag in ["<script", "<link", "<img", "<iframe", "<object", "<embed", "@import", "url("] {
                assert!(!page.contains(tag), "the page has {tag}");
            }
            assert!(attributes(page, "src").is_empty(), "the page loads something");
            // no address elsewhere: links are anchors, the pages of other
            // revisions and the documents, on this server
            assert!(!page.contains("http://") && !page.contains("https://") && !page.contains("\"//"), "the page names an outside address");
            for href in attributes(page, "href") {
                assert!(href.starts_with('#') || href.starts_with("/api/v2/docs/") || href.starts_with("/api/v2/openapi/"), "a link to {href}");
            }
        }
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_revision_has_no_page() {
    each_backend(|app| async move {
        for wrong in ["2026-09-01", "bullfinch", "latest", "2026-09-01.bullfinch.json"] {
            let r = app.call_as(None, "GET", &format!("/docs/{wrong}"), None, &[]).await;
            r.assert_error(404, "not_found");
            // (no key, no header: the oldest revision supported answers)
            assert_eq!(r.revision.as_deref(), Some(AUK), "{wrong}: Api-Revision");
        }
        let name = "2030-01-01.zebra".parse().unwrap();
        let Err(refused) = app.bullfinch_open().docs_revision_view(&name).await else { panic!("a page for 2030-01-01.zebra") };
        assert_refused(&refused, 404, "not_found");
        app
    })
    .await;
}

/// The documents' descriptions are Markdown; raw HTML in them reaches the
/// page as text (the renderer's own tests try more).
#[test]
fn raw_html_in_a_description_is_escaped() {
    let html = switchboard::reference::markdown("**Bold** <script>alert(1)</script>\n\n<iframe src=\"https://x.example\"></iframe>\n");
    assert!(html.contains("<strong>Bold</strong>"), "{html}");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;") && html.contains("&lt;iframe"), "{html}");
    assert!(!html.contains("<script") && !html.contains("<iframe"), "{html}");
}
