//! What an operator can set for `serve`: limits, login and order lifetimes, the token
//! secret, outgoing mail and which webhook URLs are accepted. Each setting is a flag and an environment
//! variable; the defaults are what a fresh server runs with.

use clap::Args;

/// The defaults, shared by the flags and `Settings::default()`.
pub mod defaults {
    pub const PER_KEY_PER_SECOND: u32 = 100;
    pub const LOGIN_PER_ADDRESS_PER_MINUTE: u32 = 30;
    pub const LOGIN_PER_EMAIL_PER_MINUTE: u32 = 6;
    pub const AUTH_FAILURES_PER_MINUTE: u32 = 30;
    pub const LOGIN_FAILURES_PER_DAY: u32 = 10;
    pub const MAX_BODY_BYTES: usize = 1024 * 1024;
    pub const LOGIN_CODE_SECONDS: u32 = 600;
    pub const ACCESS_TOKEN_SECONDS: u32 = 3600;
    /// 30 days
    pub const REFRESH_TOKEN_SECONDS: u32 = 30 * 24 * 3600;
    /// a week
    pub const ORDER_EXPIRY_SECONDS: u32 = 7 * 24 * 3600;
    pub const MAIL_FROM: &str = "Switchboard <no-reply@switchboard.invalid>";
    pub const WEBHOOK_TIMEOUT_SECONDS: &str = "15";
    pub const NETWORK_ACTIVATION_DELAY_SECONDS: u64 = 0;
    pub const DATA_DIR: &str = "switchboard-data";
    pub const REPORT_URL_SECONDS: u32 = 900;
    /// longer than a webhook receiver's default 15 s: attempts in flight land
    pub const SHUTDOWN_GRACE_SECONDS: u32 = 20;
    pub const SHUTDOWN_DELAY_SECONDS: u32 = 0;
}

#[derive(Debug, Clone, Args)]
pub struct Settings {
    /// Requests per second each API key may make (also its burst).
    #[arg(long = "rate-limit", env = "SWITCHBOARD_RATE_LIMIT", default_value_t = defaults::PER_KEY_PER_SECOND)]
    pub per_key_per_second: u32,
    /// Login requests (start and verify together) per minute from one client address.
    #[arg(long = "login-rate-limit-address", env = "SWITCHBOARD_LOGIN_RATE_LIMIT_ADDRESS", default_value_t = defaults::LOGIN_PER_ADDRESS_PER_MINUTE)]
    pub login_per_address_per_minute: u32,
    /// Login requests (start and verify together) per minute for one email address.
    #[arg(long = "login-rate-limit-email", env = "SWITCHBOARD_LOGIN_RATE_LIMIT_EMAIL", default_value_t = defaults::LOGIN_PER_EMAIL_PER_MINUTE)]
    pub login_per_email_per_minute: u32,
    /// Wrong login codes one email address may send in 24 hours, counted in
    /// the database (so across every instance); past it, login for the
    /// address answers 429 until the 24 hours from its first wrong code end.
    #[arg(long = "login-failures-per-day", env = "SWITCHBOARD_LOGIN_FAILURES_PER_DAY", default_value_t = defaults::LOGIN_FAILURES_PER_DAY,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub login_failures_per_day: u32,
    /// Unknown or revoked API keys one client address may send per minute
    /// (also its burst); past it, its requests answer 429 before any key is
    /// looked at. Hosted pages' tokens that find nothing count apart, in a
    /// budget of the same size.
    #[arg(long = "auth-failures-per-minute", env = "SWITCHBOARD_AUTH_FAILURES_PER_MINUTE", default_value_t = defaults::AUTH_FAILURES_PER_MINUTE)]
    pub auth_failures_per_minute: u32,
    /// Proxies in front of the server (addresses or CIDR blocks, e.g.
    /// 10.0.0.0/8,::1): a request from one of them counts as coming from the
    /// address its X-Forwarded-For names last that is not itself a listed
    /// proxy. Without it, the connection's peer is the client and
    /// X-Forwarded-For is ignored (a client could write anything there).
    #[arg(long = "trusted-proxies", env = "SWITCHBOARD_TRUSTED_PROXIES", value_delimiter = ',', value_parser = proxy)]
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// Largest request body accepted, in bytes; larger ones answer 413.
    #[arg(long, env = "SWITCHBOARD_MAX_BODY_BYTES", default_value_t = defaults::MAX_BODY_BYTES)]
    pub max_body_bytes: usize,
    /// Seconds a login code stays valid.
    #[arg(long, env = "SWITCHBOARD_LOGIN_CODE_SECONDS", default_value_t = defaults::LOGIN_CODE_SECONDS)]
    pub login_code_seconds: u32,
    /// Seconds an access token stays valid.
    #[arg(long, env = "SWITCHBOARD_ACCESS_TOKEN_SECONDS", default_value_t = defaults::ACCESS_TOKEN_SECONDS)]
    pub access_token_seconds: u32,
    /// Seconds a refresh token stays valid unused; each refresh answers
    /// with a new one, valid as long again.
    #[arg(long, env = "SWITCHBOARD_REFRESH_TOKEN_SECONDS", default_value_t = defaults::REFRESH_TOKEN_SECONDS)]
    pub refresh_token_seconds: u32,
    /// Seconds an order may stay unsubmitted (DRAFT or APPROVED) before it
    /// expires, by the server's clock.
    #[arg(long, env = "SWITCHBOARD_ORDER_EXPIRY_SECONDS", default_value_t = defaults::ORDER_EXPIRY_SECONDS)]
    pub order_expiry_seconds: u32,
    /// Secret that signs access tokens and keys login-code hashes (at least
    /// 32 bytes). Without it, one is generated on first start and stored in
    /// the database, so every instance over that database shares it.
    #[arg(long, env = "SWITCHBOARD_TOKEN_SECRET", hide_env_values = true)]
    pub token_secret: Option<String>,
    /// Outgoing mail server, e.g. smtps://user:pass@smtp.example.com or
    /// smtp://localhost:2525. Without it, mail stays in the local outbox
    /// (`switchboard admin mail list`).
    #[arg(long, env = "SWITCHBOARD_SMTP_URL", hide_env_values = true)]
    pub smtp_url: Option<String>,
    /// Sender of outgoing mail.
    #[arg(long, env = "SWITCHBOARD_MAIL_FROM", default_value = defaults::MAIL_FROM)]
    pub mail_from: String,
    #[command(flatten)]
    pub webhooks: WebhookUrls,
    /// Seconds a webhook receiver has to answer a delivery; no answer by
    /// then is a failed attempt, tried again later.
    #[arg(long = "webhooks-timeout-seconds", env = "SWITCHBOARD_WEBHOOKS_TIMEOUT_SECONDS", default_value = defaults::WEBHOOK_TIMEOUT_SECONDS,
          value_parser = webhook_timeout)]
    pub webhook_timeout: std::time::Duration,
    /// Seconds the sandbox mobile network takes to complete an activation;
    /// meanwhile the subscription shows `pendingStatus` ACTIVATED. 0: at once.
    #[arg(long = "network-activation-delay-seconds", env = "SWITCHBOARD_NETWORK_ACTIVATION_DELAY_SECONDS",
          default_value_t = defaults::NETWORK_ACTIVATION_DELAY_SECONDS, value_parser = clap::value_parser!(u64).range(0..=86_400))]
    pub network_activation_delay_seconds: u64,
    /// The address payers reach this server at, for the hosted payment
    /// pages' URLs (`hostedUrl`), e.g. https://pay.example.com. Without
    /// it, the address the server listens on.
    #[arg(long = "public-url", env = "SWITCHBOARD_PUBLIC_URL", value_parser = public_url)]
    pub public_url: Option<String>,
    #[command(flatten)]
    pub files: Files,
    /// Seconds a report's downloadUrl works (a fresh one at each read of
    /// the run).
    #[arg(long = "report-url-seconds", env = "SWITCHBOARD_REPORT_URL_SECONDS", default_value_t = defaults::REPORT_URL_SECONDS,
          value_parser = clap::value_parser!(u32).range(10..=86_400))]
    pub report_url_seconds: u32,
    /// Seconds a stopping server (SIGTERM) gives its jobs to finish the
    /// item each is on; then what is still running stops, and every item
    /// this instance claimed is released for other instances at once.
    #[arg(long = "shutdown-grace-seconds", env = "SWITCHBOARD_SHUTDOWN_GRACE_SECONDS", default_value_t = defaults::SHUTDOWN_GRACE_SECONDS,
          value_parser = clap::value_parser!(u32).range(0..=300))]
    pub shutdown_grace_seconds: u32,
    /// Seconds a stopping server (SIGTERM) goes on serving with `/ready`
    /// answering 503 before it stops accepting, so that a load balancer
    /// polling `/ready` takes it out of rotation first.
    #[arg(long = "shutdown-delay-seconds", env = "SWITCHBOARD_SHUTDOWN_DELAY_SECONDS", default_value_t = defaults::SHUTDOWN_DELAY_SECONDS,
          value_parser = clap::value_parser!(u32).range(0..=300))]
    pub shutdown_delay_seconds: u32,
    /// Serve Prometheus metrics (`GET /metrics`) on this address, e.g.
    /// 127.0.0.1:9090; without it, none are served.
    #[arg(long = "metrics-listen", env = "SWITCHBOARD_METRICS_LISTEN")]
    pub metrics_listen: Option<std::net::SocketAddr>,
}

/// Where the server keeps files (report runs' files).
#[derive(Debug, Clone, Args)]
pub struct Files {
    /// The directory of the server's files, unless --report-store names
    /// object storage.
    #[arg(long = "data-dir", env = "SWITCHBOARD_DATA_DIR", default_value = defaults::DATA_DIR)]
    pub data_dir: std::path::PathBuf,
    /// Keep report files in S3 or S3-compatible storage instead of
    /// --data-dir, so several instances share them: s3://BUCKET[/PREFIX].
    /// Credentials, region and endpoint come from the usual AWS_*
    /// variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION,
    /// AWS_ENDPOINT for S3-compatible storage, AWS_ALLOW_HTTP).
    #[arg(long = "report-store", env = "SWITCHBOARD_REPORT_STORE")]
    pub report_store: Option<String>,
}

impl Default for Files {
    fn default() -> Self {
        Files { data_dir: defaults::DATA_DIR.into(), report_store: None }
    }
}

impl Files {
    pub fn open(&self) -> anyhow::Result<crate::report_files::ReportFiles> {
        crate::report_files::ReportFiles::open(&self.data_dir, self.report_store.as_deref())
    }
}

/// Which webhook URLs may be registered. By default only https URLs whose
/// host resolves to public addresses: a webhook is the server making a
/// request its caller chose, and must not reach into the network it runs in.
#[derive(Debug, Clone, Default, Args)]
pub struct WebhookUrls {
    /// Accept webhook URLs whose host resolves to a loopback, private or
    /// link-local address (local development and tests).
    #[arg(long = "webhooks-allow-private", env = "SWITCHBOARD_WEBHOOKS_ALLOW_PRIVATE")]
    pub allow_private: bool,
    /// Accept http:// webhook URLs, not only https://.
    #[arg(long = "webhooks-allow-http", env = "SWITCHBOARD_WEBHOOKS_ALLOW_HTTP")]
    pub allow_http: bool,
    /// Ports webhook URLs may name besides https's 443 (and http's 80, when
    /// http is allowed), e.g. 8443. Any port goes with
    /// --webhooks-allow-private.
    #[arg(long = "webhooks-allow-ports", env = "SWITCHBOARD_WEBHOOKS_ALLOW_PORTS", value_delimiter = ',')]
    pub allow_ports: Vec<u16>,
    /// Send every delivery through this HTTP proxy (an egress proxy, e.g.
    /// http://proxy.internal:3128), which then resolves receivers' names
    /// and decides which addresses they may reach.
    #[arg(long = "webhooks-proxy", env = "SWITCHBOARD_WEBHOOKS_PROXY", hide_env_values = true)]
    pub proxy: Option<String>,
    /// How receivers' names resolve and where connections to them go: the
    /// system's, unless a test sets its own (no flag).
    #[arg(skip)]
    pub internet: crate::webhook_reach::Internet,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            per_key_per_second: defaults::PER_KEY_PER_SECOND,
            login_per_address_per_minute: defaults::LOGIN_PER_ADDRESS_PER_MINUTE,
            login_per_email_per_minute: defaults::LOGIN_PER_EMAIL_PER_MINUTE,
            login_failures_per_day: defaults::LOGIN_FAILURES_PER_DAY,
            auth_failures_per_minute: defaults::AUTH_FAILURES_PER_MINUTE,
            trusted_proxies: vec![],
            max_body_bytes: defaults::MAX_BODY_BYTES,
            login_code_seconds: defaults::LOGIN_CODE_SECONDS,
            access_token_seconds: defaults::ACCESS_TOKEN_SECONDS,
            refresh_token_seconds: defaults::REFRESH_TOKEN_SECONDS,
            order_expiry_seconds: defaults::ORDER_EXPIRY_SECONDS,
            token_secret: None,
            smtp_url: None,
            mail_from: defaults::MAIL_FROM.into(),
            webhooks: WebhookUrls::default(),
            webhook_timeout: webhook_timeout(defaults::WEBHOOK_TIMEOUT_SECONDS).expect("the default is in range"),
            network_activation_delay_seconds: defaults::NETWORK_ACTIVATION_DELAY_SECONDS,
            public_url: None,
            files: Files::default(),
            report_url_seconds: defaults::REPORT_URL_SECONDS,
            shutdown_grace_seconds: defaults::SHUTDOWN_GRACE_SECONDS,
            shutdown_delay_seconds: defaults::SHUTDOWN_DELAY_SECONDS,
            metrics_listen: None,
        }
    }
}

/// `--public-url`: an absolute http(s) URL with no query or fragment,
/// kept without its trailing slash.
fn public_url(s: &str) -> Result<String, String> {
    let u = url::Url::parse(s).map_err(|e| format!("not a URL: {e}"))?;
    if !matches!(u.scheme(), "http" | "https") || !u.has_host() || u.query().is_some() || u.fragment().is_some() {
        return Err("must be an http or https URL without query or fragment".into());
    }
    Ok(s.trim_end_matches('/').to_string())
}

/// `url` fit for an error or a log line: its password (if any) replaced
/// by `***`. Something that is not a URL is not shown at all, as it might
/// be a secret pasted into the wrong place.
pub fn without_password(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("***"));
            }
            parsed.to_string()
        }
        Err(_) => "(not a URL)".to_string(),
    }
}

/// A `--trusted-proxies` entry: a CIDR block, or one address (its own block).
fn proxy(text: &str) -> Result<ipnet::IpNet, String> {
    let text = text.trim();
    text.parse::<ipnet::IpNet>()
        .or_else(|_| text.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("{text:?} is neither an IP address nor a CIDR block"))
}

/// `--webhooks-timeout-seconds`: whole seconds, 1 to 300. (Tests set a
/// `Settings` of milliseconds directly.)
fn webhook_timeout(text: &str) -> Result<std::time::Duration, String> {
    match text.parse::<u64>() {
        Ok(seconds @ 1..=300) => Ok(std::time::Duration::from_secs(seconds)),
        _ => Err(format!("{text:?} is not a whole number of seconds from 1 to 300")),
    }
}
