//! Extractors for query, header and body input that never fail inside
//! dropshot: they validate against the document's schema and keep the
//! outcome, so the handler answers bad input itself, in the Error format,
//! with `Api-Revision` and the trace id, and only after authentication.

use super::error::ApiError;
use super::validate::{param_schema_of, validate, validate_params};
use crate::error::{Detail, InternalCode};
use crate::wire::ParamSchema;
use async_trait::async_trait;
use dropshot::{ApiEndpointBodyContentType, ErrorStatusCode, ExclusiveExtractor, ExtractorMetadata, RequestContext, ServerContext, SharedExtractor};
use http_body_util::BodyExt;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use sha2::Digest;

macro_rules! checked_input {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        /// Holds the typed value, or the error to answer with.
        pub struct $name<T>(Result<T, ApiError>);

        impl<T> $name<T> {
            /// The typed input, or the 400 to answer.
            pub fn into_inner(self) -> Result<T, ApiError> {
                self.0
            }

            /// Converts the typed value (revision adapters convert up).
            pub fn map<U>(self, f: impl FnOnce(T) -> U) -> $name<U> {
                $name(self.0.map(f))
            }
        }
    };
}

checked_input!(
    /// Query parameters; repeated keys fill array parameters.
    QueryParams
);
checked_input!(
    /// Header parameters (names compared case-insensitively).
    HeaderParams
);
/// A JSON request body: the typed value (or the 400 to answer) and the
/// SHA-256 of the bytes as sent, which idempotency fingerprints. An
/// `OPTIONAL` body (the document's `requestBody.required: false`, given to
/// operations whose every field is optional) may be left out: no body
/// reads as `{}`.
pub struct JsonBody<T, const OPTIONAL: bool = false> {
    value: Result<T, ApiError>,
    digest: [u8; 32],
}

impl<T, const OPTIONAL: bool> JsonBody<T, OPTIONAL> {
    /// The typed body, or the 400 to answer.
    pub fn into_inner(self) -> Result<T, ApiError> {
        self.value
    }

    pub fn digest(&self) -> [u8; 32] {
        self.digest
    }

    /// Converts the typed value (revision adapters convert up); once read,
    /// whether the body was optional no longer matters.
    pub fn map<U, const O: bool>(self, f: impl FnOnce(T) -> U) -> JsonBody<U, O> {
        JsonBody { value: self.value.map(f), digest: self.digest }
    }
}

impl JsonBody<()> {
    /// The body of an operation that takes none, so that bodiless
    /// operations marked (I) fingerprint like the rest.
    pub fn none() -> JsonBody<()> {
        use sha2::Digest;
        JsonBody { value: Ok(()), digest: sha2::Sha256::digest(b"").into() }
    }
}

fn invalid(details: Vec<Detail>) -> ApiError {
    ApiError::new(ErrorStatusCode::BAD_REQUEST, InternalCode::ValidationFailed, "The request has invalid fields; see details.").with_details(details)
}

/// Validates `v` against `T`'s schema and deserializes it.
fn typed<T: DeserializeOwned + JsonSchema + 'static>(v: Value) -> Result<T, ApiError> {
    let details = validate::<T>(&v);
    decode(v, details)
}

/// Validates parameters against the document's own parameter schema.
fn typed_params<T: DeserializeOwned + ParamSchema + 'static>(v: Value) -> Result<T, ApiError> {
    let details = validate_params::<T>(&v);
    decode(v, details)
}

fn decode<T: DeserializeOwned>(v: Value, details: Vec<Detail>) -> Result<T, ApiError> {
    if !details.is_empty() {
        return Err(invalid(details));
    }
    serde_json::from_value(v).map_err(|e| invalid(vec![Detail::new("", "invalid_value", e.to_string())]))
}

/// Named string inputs (query pairs or headers) -> a JSON object shaped by
/// the parameter schema: arrays collect repeats, integers and booleans parse.
fn params_object<T: ParamSchema + 'static>(pairs: Vec<(String, String)>) -> Result<Value, ApiError> {
    let compiled = param_schema_of::<T>();
    let root = compiled.resolved_root();
    let props = root.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut obj = Map::new();
    let mut details = vec![];
    for (name, raw) in pairs {
        let Some((key, schema)) = props.iter().find(|(k, _)| k.eq_ignore_ascii_case(&name)) else {
            continue; // unknown parameters are ignored
        };
        let value = match schema.get("type").and_then(Value::as_str) {
            Some("integer") => match raw.trim().parse::<i64>() {
                Ok(n) => Value::from(n),
                Err(_) => {
                    details.push(Detail::new(key, "invalid_type", "must be an integer"));
                    continue;
                }
            },
            Some("boolean") => match raw.as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => {
                    details.push(Detail::new(key, "invalid_type", "must be true or false"));
                    continue;
                }
            },
            _ => Value::String(raw),
        };
        if schema.get("type").and_then(Value::as_str) == Some("array") {
            match obj.entry(key.clone()).or_insert_with(|| Value::Array(vec![])) {
                Value::Array(items) => items.push(value),
                _ => unreachable!("array parameter holds an array"),
            }
        } else if obj.insert(key.clone(), value).is_some() {
            details.push(Detail::new(key, "duplicate", "must be given at most once"));
        }
    }
    if details.is_empty() { Ok(Value::Object(obj)) } else { Err(invalid(details)) }
}

/// The typed parameters of a query string (what `QueryParams` holds).
/// Public for the fuzz targets (`fuzz/targets.rs`).
#[doc(hidden)]
pub fn query_value<T: DeserializeOwned + ParamSchema + 'static>(query: &str) -> Result<T, ApiError> {
    let pairs = form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    params_object::<T>(pairs).and_then(typed_params::<T>)
}

/// The typed body of a request (what `JsonBody` holds), given its
/// `Content-Type` header (None when it is missing or not text) and the
/// bytes read. Public for the fuzz targets (`fuzz/targets.rs`).
#[doc(hidden)]
pub fn body_value<T: DeserializeOwned + JsonSchema + 'static, const OPTIONAL: bool>(content_type: Option<&str>, bytes: &[u8]) -> Result<T, ApiError> {
    let content_type = content_type.map(|v| v.split(';').next().unwrap_or("").trim().to_ascii_lowercase());
    if content_type.as_deref().is_some_and(|ct| ct != "application/json") {
        Err(ApiError::new(ErrorStatusCode::BAD_REQUEST, InternalCode::BadRequest, "The request body must be application/json."))
    } else if bytes.iter().all(u8::is_ascii_whitespace) {
        match OPTIONAL {
            true => typed::<T>(Value::Object(Default::default())),
            false => Err(invalid(vec![Detail::new("", "required", "a JSON request body is required")])),
        }
    } else {
        match serde_json::from_slice::<Value>(bytes) {
            Ok(v) => typed::<T>(v),
            Err(e) => Err(ApiError::new(ErrorStatusCode::BAD_REQUEST, InternalCode::MalformedJson, format!("The request body is not valid JSON: {e}"))),
        }
    }
}

#[async_trait]
impl<T> SharedExtractor for QueryParams<T>
where
    T: DeserializeOwned + JsonSchema + ParamSchema + Send + Sync + 'static,
{
    async fn from_request<C: ServerContext>(rqctx: &RequestContext<C>) -> Result<Self, dropshot::HttpError> {
        Ok(QueryParams(query_value::<T>(rqctx.request.uri().query().unwrap_or(""))))
    }

    fn metadata(ct: ApiEndpointBodyContentType) -> ExtractorMetadata {
        <dropshot::Query<T> as SharedExtractor>::metadata(ct)
    }
}

#[async_trait]
impl<T> SharedExtractor for HeaderParams<T>
where
    T: DeserializeOwned + JsonSchema + ParamSchema + Send + Sync + 'static,
{
    async fn from_request<C: ServerContext>(rqctx: &RequestContext<C>) -> Result<Self, dropshot::HttpError> {
        let compiled = param_schema_of::<T>();
        let names: Vec<String> = compiled.resolved_root().get("properties").and_then(Value::as_object).map(|p| p.keys().cloned().collect()).unwrap_or_default();
        let headers = rqctx.request.headers();
        let mut pairs = vec![];
        let mut details = vec![];
        for name in names {
            for v in headers.get_all(name.as_str()) {
                match v.to_str() {
                    Ok(s) => pairs.push((name.clone(), s.to_string())),
                    Err(_) => details.push(Detail::new(&name, "invalid_header", "must be visible ASCII text")),
                }
            }
        }
        let result = if details.is_empty() { params_object::<T>(pairs).and_then(typed_params::<T>) } else { Err(invalid(details)) };
        Ok(HeaderParams(result))
    }

    fn metadata(ct: ApiEndpointBodyContentType) -> ExtractorMetadata {
        <dropshot::Header<T> as SharedExtractor>::metadata(ct)
    }
}

#[async_trait]
impl<T, const OPTIONAL: bool> ExclusiveExtractor for JsonBody<T, OPTIONAL>
where
    T: DeserializeOwned + JsonSchema + Send + Sync + 'static,
{
    async fn from_request<C: ServerContext>(rqctx: &RequestContext<C>, request: http::Request<dropshot::Body>) -> Result<Self, dropshot::HttpError> {
        let content_type = request.headers().get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_string);
        // read here rather than through dropshot's UntypedBody, which
        // answers an over-long body with a 400: it is a 413
        let limit = rqctx.request_body_max_bytes();
        let body = http_body_util::Limited::new(request.into_body(), limit).collect().await.map(|c| c.to_bytes());
        let digest: [u8; 32] = match &body {
            Ok(b) => sha2::Sha256::digest(b).into(),
            Err(_) => [0; 32],
        };
        let result = match body {
            Err(e) if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() => {
                Err(ApiError::new(ErrorStatusCode::PAYLOAD_TOO_LARGE, InternalCode::PayloadTooLarge, format!("The request body is larger than {limit} bytes.")))
            }
            Err(e) => Err(ApiError::new(ErrorStatusCode::BAD_REQUEST, InternalCode::BadRequest, format!("The request body could not be read: {e}"))),
            Ok(b) => body_value::<T, OPTIONAL>(content_type.as_deref(), &b),
        };
        Ok(JsonBody { value: result, digest })
    }

    fn metadata(ct: ApiEndpointBodyContentType) -> ExtractorMetadata {
        // (dropshot documents every body as required whatever this says;
        // the documents' own `required: false` is what clients read)
        <dropshot::TypedBody<T> as ExclusiveExtractor>::metadata(ct)
    }
}
