//! The domain's failures: one `Error` enum and every `internalCode` value in
//! one `InternalCode` enum. It knows neither HTTP (`api::error` maps it) nor
//! the store (which turns its own failures into these).

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
    InvalidRefreshToken,
    InvalidHeader,
    Forbidden,
    ReadOnlyApiKey,
    SupportUserReadOnly,
    InsufficientRole,
    NotFound,
    MethodNotAllowed,
    CustomerNotFound,
    UserNotFound,
    PaymentProfileNotFound,
    ProductOfferingNotFound,
    ProductCatalogNotFound,
    OrderNotFound,
    SubscriptionNotFound,
    SubscriptionAddonNotFound,
    SubscriberNotFound,
    LicenseNotFound,
    WebhookEndpointNotFound,
    EventNotFound,
    PaymentLinkNotFound,
    PaymentIntentNotFound,
    PaymentSessionNotFound,
    PaymentProfileSessionNotFound,
    PaymentProfileSessionStateConflict,
    InvoiceNotFound,
    InvoiceStateConflict,
    PaymentLinkStateConflict,
    PaymentIntentStateConflict,
    PaymentInProgress,
    PaymentLinkExists,
    NothingToPay,
    RefundExceedsPayment,
    DefaultPaymentProfileRequired,
    PaymentProfileNotUsable,
    PaymentProviderDisabled,
    OrderStateConflict,
    OrderExpired,
    OrderValidationFailed,
    NumbersUnavailable,
    NumberLeaseLimit,
    LeasedNumbersLimit,
    ReportQueueFull,
    NumberSelectionNotOffered,
    SimNotFound,
    SimNotInInventory,
    SimNotAvailable,
    SimTypeMismatch,
    SimsUnavailable,
    PortingNotFound,
    MsisdnInUse,
    PortingStateConflict,
    ReportRunNotFound,
    OrderNotApproved,
    CurrencyRequired,
    SubscriptionPending,
    SubscriptionActivated,
    SubscriptionPaused,
    SubscriptionSuspended,
    SubscriptionBlocked,
    SubscriptionCancelled,
    AddonPending,
    LicensePending,
    LicenseActive,
    LicensePaused,
    LicenseBlocked,
    LicenseCancelled,
    AddonActive,
    AddonCancelled,
    AddonExpired,
    ActivationInProgress,
    NoCancellationScheduled,
    BindingContractActive,
    NetworkRefused,
    IccidRequired,
    IccidTaken,
    NumberNotHeld,
    NoEsimProfile,
    OfferingChangeNotAllowed,
    ChangeScheduleNotAllowed,
    EndpointRemoved,
    WebhookEndpointLimitReached,
    WebhookEndpointDisabled,
    SandboxOnly,
    ClockAdvancing,
    Conflict,
    IdempotencyKeyMismatch,
    IdempotencyKeyLocked,
    ReferenceIdTaken,
    EmailTaken,
    PayloadTooLarge,
    TooManyRequests,
    NotReady,
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
            InvalidRefreshToken => "invalid_refresh_token",
            InvalidHeader => "invalid_header",
            Forbidden => "forbidden",
            ReadOnlyApiKey => "read_only_api_key",
            SupportUserReadOnly => "support_user_read_only",
            InsufficientRole => "insufficient_role",
            NotFound => "not_found",
            MethodNotAllowed => "method_not_allowed",
            CustomerNotFound => "customer_not_found",
            UserNotFound => "user_not_found",
            PaymentProfileNotFound => "payment_profile_not_found",
            ProductOfferingNotFound => "product_offering_not_found",
            ProductCatalogNotFound => "product_catalog_not_found",
            OrderNotFound => "order_not_found",
            SubscriptionNotFound => "subscription_not_found",
            SubscriptionAddonNotFound => "subscription_addon_not_found",
            SubscriberNotFound => "subscriber_not_found",
            LicenseNotFound => "license_not_found",
            WebhookEndpointNotFound => "webhook_endpoint_not_found",
            EventNotFound => "event_not_found",
            PaymentLinkNotFound => "payment_link_not_found",
            PaymentIntentNotFound => "payment_intent_not_found",
            PaymentSessionNotFound => "payment_session_not_found",
            PaymentProfileSessionNotFound => "payment_profile_session_not_found",
            PaymentProfileSessionStateConflict => "payment_profile_session_state_conflict",
            InvoiceNotFound => "invoice_not_found",
            InvoiceStateConflict => "invoice_state_conflict",
            PaymentLinkStateConflict => "payment_link_state_conflict",
            PaymentIntentStateConflict => "payment_intent_state_conflict",
            PaymentInProgress => "payment_in_progress",
            PaymentLinkExists => "payment_link_exists",
            NothingToPay => "nothing_to_pay",
            RefundExceedsPayment => "refund_exceeds_payment",
            DefaultPaymentProfileRequired => "default_payment_profile_required",
            PaymentProfileNotUsable => "payment_profile_not_usable",
            PaymentProviderDisabled => "payment_provider_disabled",
            OrderStateConflict => "order_state_conflict",
            OrderExpired => "order_expired",
            OrderValidationFailed => "order_validation_failed",
            NumbersUnavailable => "numbers_unavailable",
            NumberLeaseLimit => "number_lease_limit",
            LeasedNumbersLimit => "leased_numbers_limit",
            ReportQueueFull => "report_queue_full",
            NumberSelectionNotOffered => "number_selection_not_offered",
            SimNotFound => "sim_not_found",
            SimNotInInventory => "sim_not_in_inventory",
            SimNotAvailable => "sim_not_available",
            SimTypeMismatch => "sim_type_mismatch",
            SimsUnavailable => "sims_unavailable",
            PortingNotFound => "porting_not_found",
            MsisdnInUse => "msisdn_in_use",
            PortingStateConflict => "porting_state_conflict",
            ReportRunNotFound => "report_run_not_found",
            OrderNotApproved => "order_not_approved",
            CurrencyRequired => "currency_required",
            SubscriptionPending => "subscription_pending",
            SubscriptionActivated => "subscription_activated",
            SubscriptionPaused => "subscription_paused",
            SubscriptionSuspended => "subscription_suspended",
            SubscriptionBlocked => "subscription_blocked",
            SubscriptionCancelled => "subscription_cancelled",
            AddonPending => "addon_pending",
            LicensePending => "license_pending",
            LicenseActive => "license_active",
            LicensePaused => "license_paused",
            LicenseBlocked => "license_blocked",
            LicenseCancelled => "license_cancelled",
            AddonActive => "addon_active",
            AddonCancelled => "addon_cancelled",
            AddonExpired => "addon_expired",
            ActivationInProgress => "activation_in_progress",
            NoCancellationScheduled => "no_cancellation_scheduled",
            BindingContractActive => "binding_contract_active",
            NetworkRefused => "network_refused",
            IccidRequired => "iccid_required",
            IccidTaken => "iccid_taken",
            NumberNotHeld => "number_not_held",
            NoEsimProfile => "no_esim_profile",
            OfferingChangeNotAllowed => "offering_change_not_allowed",
            ChangeScheduleNotAllowed => "change_schedule_not_allowed",
            EndpointRemoved => "endpoint_removed",
            WebhookEndpointLimitReached => "webhook_endpoint_limit_reached",
            WebhookEndpointDisabled => "webhook_endpoint_disabled",
            SandboxOnly => "sandbox_only",
            ClockAdvancing => "clock_advancing",
            Conflict => "conflict",
            IdempotencyKeyMismatch => "idempotency_key_mismatch",
            IdempotencyKeyLocked => "idempotency_key_locked",
            ReferenceIdTaken => "reference_id_taken",
            EmailTaken => "email_taken",
            PayloadTooLarge => "payload_too_large",
            TooManyRequests => "too_many_requests",
            NotReady => "not_ready",
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
    /// 412: something the operator set up does not allow the request (a
    /// payment provider disabled for the organisation).
    #[error("{message}")]
    Precondition { code: InternalCode, message: String },
    /// 409 naming every failing field (order line items that do not fit
    /// the catalog, the customer or their type).
    #[error("{message}")]
    Refused { code: InternalCode, message: String, details: Vec<Detail> },
    /// 404 naming every field that names a missing object (and any other
    /// failing field of the same request).
    #[error("{message}")]
    Missing { code: InternalCode, message: String, details: Vec<Detail> },
    /// 429: too many tries of something (wrong login codes for one
    /// address); `retry_after` in whole seconds.
    #[error("{message}")]
    TooMany { message: String, retry_after: u64 },
    /// The database failed (a unique violation is a `Conflict` instead: the
    /// store says so).
    #[error("database: {0}")]
    Database(String),
    /// The truly unexpected: stored data that cannot be read, a broken
    /// invariant. A 500 whose cause is logged, not sent.
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

    /// 409: another `what` of the organisation has the referenceId asked for.
    pub fn reference_taken(what: &str) -> Self {
        Error::Conflict { code: InternalCode::ReferenceIdTaken, message: format!("another {what} already has this referenceId"), property: "referenceId" }
    }

    /// A unique-constraint violation: a concurrent request won a race the
    /// checks before the write could not see. Still a 409, never a 500.
    pub fn concurrent_conflict() -> Self {
        Error::Conflict { code: InternalCode::Conflict, message: "a concurrent request created a conflicting record".into(), property: "" }
    }

    /// 409: another request changed `what` between this one's read and its
    /// write, and the move asked for is still allowed from where that one
    /// left it: reading it again and retrying decides.
    pub fn changed_meanwhile(what: &str) -> Self {
        Error::Conflict {
            code: InternalCode::Conflict,
            message: format!("another request changed this {what} meanwhile; read it again and retry"),
            property: "",
        }
    }

    /// The primary key of an idempotency key was violated: another request
    /// with the key recorded its answer first (see `api::idempotency`).
    pub fn idempotency_key_taken() -> Self {
        Error::Conflict {
            code: InternalCode::IdempotencyKeyLocked,
            message: "another request with this idempotency key was answered first".into(),
            property: "",
        }
    }

    pub fn is_idempotency_key_taken(&self) -> bool {
        matches!(self, Error::Conflict { code: InternalCode::IdempotencyKeyLocked, .. })
    }

    /// Is this the conflict of a unique-constraint violation?
    pub fn is_concurrent_conflict(&self) -> bool {
        matches!(self, Error::Conflict { code: InternalCode::Conflict, .. })
    }

    pub fn invalid(property: impl Into<String>, code: &'static str, message: impl Into<String>) -> Self {
        Error::Invalid(vec![Detail::new(property, code, message)])
    }
}
