//! The headers every API answer carries, whatever made it (an operation,
//! a refusal, dropshot's own error).

use http::HeaderValue;

/// Answers carry tenants' data, tokens and signing secrets: no cache keeps
/// them, and no browser reads them as anything but what they say they are.
pub(super) fn kept_private(headers: &mut http::HeaderMap) {
    headers.insert(http::header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(http::header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
}
