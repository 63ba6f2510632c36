//! The domain's failures: one `Error` enum, every `internalCode` value in one
//! `InternalCode` enum, and the single mapping of both to HTTP.

use crate::api::generated::bullfinch::types::ErrorDetail;
use crate::api::support::ApiError;
use dropshot::ErrorStatusCode;

/// Every `internalCode` the server sends. Stable across releases: clients
/// branch on these strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InternalCode {
    BadRequest,
    ValidationFailed,
    MalformedJson,
    InvalidCursor,
    UnknownApiRevision,
    Unauthorized,
    InvalidApiKey,
    InvalidBearerToken,
    BearerTokenExpired,
    InvalidLoginCode,
    InvalidHeader,
    Forbidden,
    ReadOnlyApiKey,
    SupportUserReadOnly,
    InsufficientRole,
    NotFound,
    CustomerNotFound,
    UserNotFound,
    PaymentProfileNotFound,
    ProductOfferingNotFound,
    ProductCatalogNotFound,
    OrderNotFound,
    SubscriptionNotFound,
    LicenseNotFound,
    OrderStateConflict,
    OrderExpired,
    OrderValidationFailed,
    OrderNotApproved,
    CurrencyRequired,
    EndpointRemoved,
    Conflict,
    IdempotencyKeyMismatch,
    IdempotencyKeyLocked,
    ReferenceIdTaken,
    EmailTaken,
    PayloadTooLarge,
    TooManyRequests,
    InternalError,
}

impl InternalCode {
    pub fn as_str(self) -> &'static str {
        use InternalCode::*;
        match self {
            BadRequest => "bad_request",
            ValidationFailed => "validation_failed",
            MalformedJson => "malformed_json",
            InvalidCursor => "invalid_cursor",
            UnknownApiRevision => "unknown_api_revision",
            Unauthorized => "unauthorized",
            InvalidApiKey => "invalid_api_key",
            InvalidBearerToken => "invalid_bearer_token",
            BearerTokenExpired => "bearer_token_expired",
            InvalidLoginCode => "invalid_login_code",
            InvalidHeader => "invalid_header",
            Forbidden => "forbidden",
            ReadOnlyApiKey => "read_only_api_key",
            SupportUserReadOnly => "support_user_read_only",
            InsufficientRole => "insufficient_role",
            NotFound => "not_found",
            CustomerNotFound => "customer_not_found",
            UserNotFound => "user_not_found",
            PaymentProfileNotFound => "payment_profile_not_found",
            ProductOfferingNotFound => "product_offering_not_found",
            ProductCatalogNotFound => "product_catalog_not_found",
            OrderNotFound => "order_not_found",
            SubscriptionNotFound => "subscription_not_found",
            LicenseNotFound => "license_not_found",
            OrderStateConflict => "order_state_conflict",
            OrderExpired => "order_expired",
            OrderValidationFailed => "order_validation_failed",
            OrderNotApproved => "order_not_approved",
            CurrencyRequired => "currency_required",
            EndpointRemoved => "endpoint_removed",
            Conflict => "conflict",
            IdempotencyKeyMismatch => "idempotency_key_mismatch",
            IdempotencyKeyLocked => "idempotency_key_locked",
            ReferenceIdTaken => "reference_id_taken",
            EmailTaken => "email_taken",
            PayloadTooLarge => "payload_too_large",
            TooManyRequests => "too_many_requests",
            InternalError => "internal_error",
        }
    }
}

/// What is wrong with one field of a request.
#[derive(Debug, Clone, PartialEq)]
pub struct Detail {
    /// dotted path: `billing.email`, `users[0].name`, or a parameter name
    pub property: String,
    /// `invalid_email`, `required`, `too_long`, ...
    pub code: &'static str,
    pub message: String,
}

impl Detail {
    pub fn new(property: impl Into<String>, code: &'static str, message: impl Into<String>) -> Self {
        Detail { property: property.into(), code, message: message.into() }
    }

    pub fn into_wire(self) -> ErrorDetail {
        ErrorDetail {
            code: self.code.to_string(),
            message: self.message,
            property: (!self.property.is_empty()).then_some(self.property),
            suggestion: None,
        }
    }
}

/// A failure of the domain core or the store.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid request")]
    Invalid(Vec<Detail>),
    #[error("{message}")]
    BadRequest { code: InternalCode, message: String },
    #[error("{message}")]
    Unauthorized { code: InternalCode, message: String },
    #[error("{message}")]
    Forbidden { code: InternalCode, message: String },
    /// `property` names the body field holding the missing reference; empty
    /// when the path names the object.
    #[error("{message}")]
    NotFound { code: InternalCode, message: String, property: &'static str },
    #[error("{message}")]
    Conflict { code: InternalCode, message: String, property: &'static str },
    /// 409 naming every failing field (order line items that do not fit
    /// the catalog, the customer or their type).
    #[error("{message}")]
    Refused { code: InternalCode, message: String, details: Vec<Detail> },
    /// 404 naming every field that names a missing object (and any other
    /// failing field of the same request).
    #[error("{message}")]
    Missing { code: InternalCode, message: String, details: Vec<Detail> },
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("{0}")]
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn not_found(code: InternalCode, what: &str) -> Self {
        Error::NotFound { code, message: format!("{what} not found"), property: "" }
    }

    /// A field of the body names an object that does not exist (or that the
    /// caller may not see): 404 like a missing path object, with a detail
    /// naming the field so the client knows which reference to fix.
    pub fn missing_reference(code: InternalCode, property: &'static str, message: impl Into<String>) -> Self {
        Error::NotFound { code, message: message.into(), property }
    }

    /// A unique-constraint violation means a concurrent request won a race
    /// the pre-checks could not see: still a 409, never a 500.
    pub fn conflict_on_unique(self) -> Self {
        match self {
            Error::Database(ref d) if crate::store::is_unique_violation(d) => Error::Conflict {
                code: InternalCode::Conflict,
                message: "a concurrent request created a conflicting record".into(),
                property: "",
            },
            e => e,
        }
    }

    pub fn invalid(property: impl Into<String>, code: &'static str, message: impl Into<String>) -> Self {
        Error::Invalid(vec![Detail::new(property, code, message)])
    }
}

/// The one place where domain failures become HTTP.
impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        match e {
            Error::Invalid(details) => ApiError::new(
                ErrorStatusCode::BAD_REQUEST,
                InternalCode::ValidationFailed,
                "The request has invalid fields; see details.",
            )
            .with_details(details),
            Error::BadRequest { code, message } => ApiError::new(ErrorStatusCode::BAD_REQUEST, code, message),
            Error::Unauthorized { code, message } => ApiError::new(ErrorStatusCode::UNAUTHORIZED, code, message),
            Error::Forbidden { code, message } => ApiError::new(ErrorStatusCode::FORBIDDEN, code, message),
            Error::NotFound { code, message, property } => {
                let details = if property.is_empty() { vec![] } else { vec![Detail::new(property, code.as_str(), message.clone())] };
                ApiError::new(ErrorStatusCode::NOT_FOUND, code, message).with_details(details)
            }
            Error::Conflict { code, message, property } => {
                let detail = Detail::new(property, code.as_str(), message.clone());
                ApiError::new(ErrorStatusCode::CONFLICT, code, message).with_details(vec![detail])
            }
            Error::Refused { code, message, details } => {
                ApiError::new(ErrorStatusCode::CONFLICT, code, message).with_details(details)
            }
            Error::Missing { code, message, details } => {
                ApiError::new(ErrorStatusCode::NOT_FOUND, code, message).with_details(details)
            }
            Error::Database(e) => {
                tracing::error!(error = %e, "database failure");
                ApiError::new(
                    ErrorStatusCode::INTERNAL_SERVER_ERROR,
                    InternalCode::InternalError,
                    "The server failed to complete the request.",
                )
            }
            Error::Internal(m) => {
                tracing::error!(error = %m, "internal failure");
                ApiError::new(
                    ErrorStatusCode::INTERNAL_SERVER_ERROR,
                    InternalCode::InternalError,
                    "The server failed to complete the request.",
                )
            }
        }
    }
}
