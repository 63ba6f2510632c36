//! The paths and methods each revision routes, read from the published
//! documents, so that the version policy answers a request for none of
//! them itself: 404, or 405 with `Allow` for a path served with other
//! methods, carrying the headers every other answer carries (dropshot's
//! own router answers without them).

use super::revision::Revision;
use http::{HeaderMap, HeaderValue, Method};
use std::collections::HashMap;
use std::sync::OnceLock;

/// One path template: its segments, `None` where a parameter stands.
struct Template {
    segments: Vec<Option<String>>,
    methods: Vec<Method>,
}

/// A revision's routes, by number of segments.
#[derive(Default)]
struct Routes(HashMap<usize, Vec<Template>>);

/// Why a request has no route.
#[derive(Debug, PartialEq)]
pub enum Unrouted {
    NoPath,
    /// the path is served with these methods
    OtherMethods(Vec<Method>),
}

impl Routes {
    /// The routes of `documents`: those of a revision and of every
    /// revision before it (an operation removed later still has a route
    /// that answers `endpoint_removed`).
    fn of(documents: &[&str]) -> Routes {
        let mut routes = Routes::default();
        for document in documents {
            let document: serde_json::Value = serde_json::from_str(document).expect("a published document is JSON");
            // the paths are the server URL's (`/api/v2`)
            let base = document["servers"][0]["url"].as_str().unwrap_or("");
            let paths = document["paths"].as_object().expect("a published document has paths");
            for (path, item) in paths {
                let methods = item.as_object().into_iter().flatten().filter_map(|(key, _)| method(key));
                routes.add(&format!("{base}{path}"), methods.collect());
            }
        }
        routes
    }

    fn add(&mut self, path: &str, methods: Vec<Method>) {
        let segments: Vec<Option<String>> = segments(path).map(|s| (!(s.starts_with('{') && s.ends_with('}'))).then(|| s.to_string())).collect();
        let same = self.0.entry(segments.len()).or_default();
        match same.iter_mut().find(|t| t.segments == segments) {
            Some(t) => {
                for m in methods {
                    if !t.methods.contains(&m) {
                        t.methods.push(m);
                    }
                }
            }
            None => same.push(Template { segments, methods }),
        }
    }

    fn check(&self, method: &Method, path: &str) -> Result<(), Unrouted> {
        let given: Vec<&str> = segments(path).collect();
        let mut allowed: Vec<Method> = vec![];
        for t in self.0.get(&given.len()).into_iter().flatten() {
            let fits = t.segments.iter().zip(&given).all(|(s, g)| s.as_deref().is_none_or(|s| s == *g));
            if fits {
                if t.methods.contains(method) {
                    return Ok(());
                }
                allowed.extend(t.methods.iter().cloned());
            }
        }
        if allowed.is_empty() { Err(Unrouted::NoPath) } else { Err(Unrouted::OtherMethods(allowed)) }
    }
}

/// The method a path item's key names (others are `parameters`, `summary`...).
fn method(key: &str) -> Option<Method> {
    Some(match key {
        "get" => Method::GET,
        "put" => Method::PUT,
        "post" => Method::POST,
        "delete" => Method::DELETE,
        "patch" => Method::PATCH,
        "head" => Method::HEAD,
        "options" => Method::OPTIONS,
        "trace" => Method::TRACE,
        _ => return None,
    })
}

fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.split('/').filter(|s| !s.is_empty())
}

/// Whether `revision` routes `method` on `path`. A path the router would
/// decode first (`%`) is left to the router.
pub fn check(revision: &Revision, method: &Method, path: &str) -> Result<(), Unrouted> {
    static ROUTES: OnceLock<Vec<Routes>> = OnceLock::new();
    if path.contains('%') || hosted_page(method, path) {
        return Ok(());
    }
    let all = ROUTES.get_or_init(|| {
        let documents: Vec<&str> = Revision::all().iter().map(Revision::document).collect();
        (1..=documents.len()).map(|n| Routes::of(&documents[..n])).collect()
    });
    let i = Revision::all().iter().position(|r| r.name == revision.name).expect("a known revision");
    all[i].check(method, path)
}

/// Where the hosted pages are (`src/hosted`): beside the API's routes and
/// in no document, so the version policy lets them through to the router.
/// A payment link's page:
pub const HOSTED_PAGES: &str = "/pay/";
/// A payment profile session's setup page:
pub const SETUP_PAGES: &str = "/setup/";
/// An invoice's document (`GET` only):
pub const INVOICE_DOCUMENTS: &str = "/invoice-documents/";
/// A report run's file (`GET` only):
pub const REPORT_FILES: &str = crate::domain::reports::download::PATH;

/// Whether `method` and `path` are a hosted page's: `GET` or `POST
/// /pay/{token}` or `/setup/{token}`, or `GET /invoice-documents/{token}`
/// or `/report-files/{reportRunId}`.
fn hosted_page(method: &Method, path: &str) -> bool {
    let under = |pages: &str| path.strip_prefix(pages).is_some_and(|t| !t.is_empty() && !t.contains('/'));
    let page = [HOSTED_PAGES, SETUP_PAGES].iter().any(|p| under(p)) && (method == Method::GET || method == Method::POST);
    page || ([INVOICE_DOCUMENTS, REPORT_FILES].iter().any(|p| under(p)) && method == Method::GET)
}

/// The answer to a request with no route in `revision`.
pub fn refusal(unrouted: Unrouted, revision: &Revision) -> dropshot::HttpError {
    let mut headers = HeaderMap::new();
    // (no-store and nosniff are added as it renders: render_dropshot_error)
    headers.insert(super::revision::API_REVISION, HeaderValue::from_static(revision.name));
    use dropshot::ClientErrorStatusCode as Status;
    let (status, code, message) = match unrouted {
        Unrouted::NoPath => (Status::NOT_FOUND, "not_found", "No operation has this path."),
        Unrouted::OtherMethods(methods) => {
            let allow = methods.iter().map(Method::as_str).collect::<Vec<_>>().join(", ");
            headers.insert(http::header::ALLOW, HeaderValue::from_str(&allow).expect("method names are header values"));
            (Status::METHOD_NOT_ALLOWED, "method_not_allowed", "This path is not served with this method.")
        }
    };
    let mut error = dropshot::HttpError::for_client_error(Some(code.to_string()), status, message.to_string());
    error.headers = Some(Box::new(headers));
    error
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_fits_by_segments_and_names_the_methods_it_has() {
        let mut routes = Routes::default();
        routes.add("/customers/{customerId}", vec![Method::GET, Method::PUT]);
        routes.add("/customers/search", vec![Method::POST]);
        assert_eq!(routes.check(&Method::GET, "/customers/c1"), Ok(()));
        assert_eq!(routes.check(&Method::POST, "/customers/search"), Ok(()));
        assert_eq!(routes.check(&Method::DELETE, "/customers/c1"), Err(Unrouted::OtherMethods(vec![Method::GET, Method::PUT])));
        assert_eq!(routes.check(&Method::GET, "/customers/c1/x"), Err(Unrouted::NoPath));
        assert_eq!(routes.check(&Method::GET, "/nope"), Err(Unrouted::NoPath));
    }
}
