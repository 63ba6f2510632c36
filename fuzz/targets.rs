//! The fuzz targets' bodies, one per parser of outside input: each feeds
//! the bytes to the parser and asserts what must hold of any input (no
//! panic) and of what the parser accepts (it checks again, or reads back
//! the same). Shared by the libFuzzer binaries (`fuzz/fuzz_targets/`) and
//! by the stable replay of the corpus (`tests/fuzz_corpus.rs`).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, NaiveDate, Utc};
use hmac::{Hmac, Mac};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::{Arc, OnceLock};
use switchboard::api::context::{Resolution, from_header};
use switchboard::api::revision::Revision;
use switchboard::domain::porting::details;
use switchboard::domain::values::{Checks, iccid};
use switchboard::domain::webhooks::{address, log, schedule};
use switchboard::store::Cursor;

/// Every target by name: a directory of `fuzz/corpus/`, a binary of
/// `fuzz/fuzz_targets/`.
pub const TARGETS: &[(&str, fn(&[u8]))] = &[
    ("revision_header", revision_header),
    ("cursor", cursor),
    ("jwt", jwt),
    ("catalog_file", catalog_file),
    ("sim_import", sim_import),
    ("number_import", number_import),
    ("msisdn", msisdn),
    ("iccid", iccid),
    ("swedish_identity", swedish_identity),
    ("webhook_url", webhook_url),
    ("retry_after", retry_after),
    ("request_body", request_body),
    ("query_params", query_params),
    ("sdk_webhook_verify", sdk_webhook_verify),
    ("hosted_form", hosted_form),
    ("sql_literal", sql_literal),
];

fn text(data: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(data)
}

fn day(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).expect("a date")
}

/// The fixed "now" of the targets (the corpus's tokens and dates are
/// made for it): 2026-11-29T00:00:00Z.
fn now() -> DateTime<Utc> {
    day(2026, 11, 29).and_hms_opt(0, 0, 0).expect("a time").and_utc()
}

/// `Api-Revision`: the published names only, each resolving to itself
/// while supported and to the oldest supported one after; anything else
/// is an unknown revision (never a guess at the nearest).
pub fn revision_header(data: &[u8]) {
    if let Ok(s) = std::str::from_utf8(data)
        && let Some(r) = Revision::by_name(s)
    {
        assert_eq!(r.name, s);
    }
    let Ok(value) = http::HeaderValue::from_bytes(data) else { return };
    // before and after the oldest revision's support ends
    for today in [day(2026, 11, 29), day(2027, 1, 1)] {
        let named = value.to_str().ok().and_then(Revision::by_name);
        match (from_header(&value, today), named) {
            (Resolution::Resolved(r), Some(n)) => {
                assert!(r.supported_on(today));
                assert!(std::ptr::eq(r, n) || !n.supported_on(today), "{} answered as {}", n.name, r.name);
            }
            (Resolution::UnknownHeader(r), None) => assert!(std::ptr::eq(r, Revision::oldest_supported(today))),
            (resolution, named) => panic!("{resolution:?} for {named:?}"),
        }
    }
}

/// A list's `cursor` and the event log's `after`: what decodes encodes
/// back to the same position, and no position is negative.
pub fn cursor(data: &[u8]) {
    let s = text(data);
    if let Ok(c) = Cursor::decode(&s) {
        assert!(c.after_seq >= 0);
        assert_eq!(Cursor::decode(&c.encode()).expect("an encoded cursor decodes"), c);
    }
    if let Ok(p) = log::position(&s) {
        assert_eq!(log::position(&log::position_text(p)).expect("a position's text reads"), p);
    }
    if let Some(bytes) = data.get(..8) {
        let c = Cursor { after_seq: i64::from_le_bytes(bytes.try_into().expect("8 bytes")) & i64::MAX };
        assert_eq!(Cursor::decode(&c.encode()).expect("an encoded cursor decodes"), c);
    }
}

/// The secret the corpus's tokens are signed with.
pub const JWT_SECRET: &[u8] = b"fuzzing secret, at least 32 bytes long";

/// Bearer tokens: only what this secret signed verifies, and not expired;
/// a token of ours changed at any byte no longer verifies.
pub fn jwt(data: &[u8]) {
    static TOKENS: OnceLock<switchboard::tokens::Tokens> = OnceLock::new();
    let tokens = TOKENS.get_or_init(|| switchboard::tokens::Tokens::new(JWT_SECRET, 3600));
    let token = text(data);
    if let Ok(claims) = tokens.verify(&token, now()) {
        assert!(claims.exp > now().timestamp());
    }
    let user = uuid::Uuid::from_bytes(data.iter().copied().chain(std::iter::repeat(0)).take(16).collect::<Vec<_>>().try_into().expect("16"));
    let issued = tokens.issue(user, user, now());
    let claims = tokens.verify(&issued, now()).expect("a token just issued verifies");
    assert_eq!(claims.sub, user);
    let mut changed = issued.into_bytes();
    let at = data.len() % changed.len();
    changed[at] ^= data.first().copied().unwrap_or(1).max(1);
    if let Ok(changed) = std::str::from_utf8(&changed) {
        assert!(tokens.verify(changed, now()).is_err(), "a changed token verified: {changed}");
    }
}

/// `admin catalog import`: a file that reads (YAML, or JSON) can be
/// checked, and written out again it reads as the same file.
pub fn catalog_file(data: &[u8]) {
    use switchboard::domain::catalog::file::{CatalogFile, parse};
    let s = text(data);
    let as_json = |f: &CatalogFile| serde_json::to_value(f).expect("a catalog file serializes");
    for json in [false, true] {
        let Ok(mut file) = parse(&s, json) else { continue };
        let written = serde_json::to_string(&file).expect("a catalog file serializes");
        assert_eq!(as_json(&parse(&written, true).expect("its JSON reads")), as_json(&file));
        let written = yaml_serde::to_string(&file).expect("a catalog file serializes");
        assert_eq!(as_json(&parse(&written, false).expect("its YAML reads")), as_json(&file));
        let _ = file.check(&|_, _| false);
        let _ = file.check(&|_, _| true);
    }
}

/// `admin sim import`: every SIM read is a valid ICCID, and the SIMs
/// written out as a file read back the same.
pub fn sim_import(data: &[u8]) {
    use switchboard::admin::sims::parse_csv;
    let Ok(sims) = parse_csv(&text(data)) else { return };
    assert!(!sims.is_empty());
    let mut written = String::from("iccid,type\n");
    for (number, kind) in &sims {
        assert!(iccid::valid(number), "{number}");
        written.push_str(&format!("{number},{}\n", kind.stored()));
    }
    assert_eq!(parse_csv(&written).expect("the SIMs read written out"), sims);
}

/// `admin number import`: the CSV file and `--range`; every number read
/// is valid for the API too, and written out reads back the same.
pub fn number_import(data: &[u8]) {
    use switchboard::admin::numbers::{parse_csv, parse_range};
    use switchboard::kinds::NumberType;
    let s = text(data);
    if let Ok(numbers) = parse_csv(&s) {
        let mut written = String::from("msisdn,type\n");
        for (number, kind) in &numbers {
            let mut checks = Checks::default();
            checks.msisdn("msisdn", Some(number));
            assert!(checks.finish().is_ok(), "{number} was imported but the API refuses it");
            written.push_str(&format!("{number},{}\n", kind.stored()));
        }
        assert_eq!(parse_csv(&written).expect("the numbers read written out"), numbers);
    }
    // (a range of up to a million numbers is valid, and slow: the fuzzer
    // tries the small ones)
    let small = s.split_once("..").is_some_and(|(a, b)| {
        let n = |t: &str| t.trim().strip_prefix('+').and_then(|d| d.parse::<u64>().ok());
        matches!((n(a), n(b)), (Some(a), Some(b)) if b.saturating_sub(a) <= 1000)
    });
    if small && let Ok(numbers) = parse_range(&s, NumberType::Cell) {
        assert!(!numbers.is_empty());
        assert!(numbers.windows(2).all(|w| w[0].0.len() == w[1].0.len() && w[0].0 < w[1].0));
    }
}

/// A phone number (E.164): one the API accepts is accepted again in its
/// E.164 form, of the same porting country.
pub fn msisdn(data: &[u8]) {
    let s = text(data);
    let valid = |v: &str| {
        let mut checks = Checks::default();
        checks.msisdn("msisdn", Some(v));
        checks.finish().is_ok()
    };
    let country = |v: &str| details::country_of(v, "msisdn").ok();
    if !valid(&s) {
        assert_eq!(country(&s), None);
        return;
    }
    let n = phonenumber::parse(None, &*s).expect("a valid number parses");
    let e164 = n.format().mode(phonenumber::Mode::E164).to_string();
    assert!(valid(&e164), "{s:?} is valid, its E.164 form {e164:?} is not");
    assert_eq!(country(&s), country(&e164));
}

/// An ICCID: one accepted is 19 or 20 digits starting with 89, and any
/// other last digit is refused (the check digit).
pub fn iccid(data: &[u8]) {
    let s = text(data);
    let valid = iccid::valid(&s);
    assert_eq!(switchboard::domain::inventory::sims::check_iccid(Some(&s.to_string())).is_ok(), valid);
    if !valid {
        return;
    }
    assert!((19..=20).contains(&s.len()) && s.starts_with("89") && s.bytes().all(|b| b.is_ascii_digit()));
    let (body, last) = s.split_at(s.len() - 1);
    for d in (b'0'..=b'9').filter(|d| *d != last.as_bytes()[0]) {
        assert!(!iccid::valid(&format!("{body}{}", char::from(d))));
    }
}

/// A Swedish personnummer or organisationsnummer: one accepted is ASCII
/// and stays accepted without its `-`; a port-in's details take it.
pub fn swedish_identity(data: &[u8]) {
    let s = text(data);
    let valid = details::swedish_identity(&s);
    let checked = details::check("+46709876543", "msisdn", serde_json::json!({ "identity": &*s }), "details");
    assert_eq!(checked.is_ok(), valid);
    if valid {
        assert!(s.is_ascii());
        assert!(details::swedish_identity(&s.replacen('-', "", 1)), "{s} without its '-'");
    }
}

/// Names resolve without the network: `*.internal` and `localhost` to
/// private addresses, `*.invalid` to nothing, any other to a public one.
#[derive(Debug)]
struct Offline;

impl switchboard::webhook_reach::Reach for Offline {
    fn resolve(&self, host: String, port: u16) -> futures::future::BoxFuture<'static, std::io::Result<Vec<std::net::SocketAddr>>> {
        let ip: Option<std::net::IpAddr> = match host.as_str() {
            h if h.ends_with(".invalid") => None,
            h if h.ends_with(".internal") => Some([10, 0, 0, 7].into()),
            "localhost" => Some([127, 0, 0, 1].into()),
            _ => Some([93, 184, 215, 14].into()),
        };
        Box::pin(async move { Ok(ip.map(|ip| std::net::SocketAddr::new(ip, port)).into_iter().collect()) })
    }

    fn dial(&self, to: std::net::SocketAddr) -> std::io::Result<std::net::SocketAddr> {
        Ok(to)
    }
}

/// A webhook endpoint's URL under four server policies: one accepted is
/// https (or http where allowed) with a host, checks again as the same
/// URL, and is a URL a delivery may go to.
pub fn webhook_url(data: &[u8]) {
    use switchboard::config::WebhookUrls;
    thread_local! {
        static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().expect("a runtime");
    }
    let s = text(data);
    let internet = switchboard::webhook_reach::Internet(Arc::new(Offline));
    let strict = WebhookUrls { internet, ..Default::default() };
    let policies = [
        WebhookUrls { allow_http: true, allow_ports: vec![8443], ..strict.clone() },
        WebhookUrls { allow_private: true, ..strict.clone() },
        WebhookUrls { proxy: Some("http://proxy.internal:3128".into()), ..strict.clone() },
        strict,
    ];
    RUNTIME.with(|rt| {
        for policy in &policies {
            let Ok(url) = rt.block_on(address::check("url", &s, policy)) else { continue };
            assert!(url.scheme() == "https" || (url.scheme() == "http" && policy.allow_http), "{url}");
            assert!(url.host().is_some(), "{url}");
            let again = rt.block_on(address::check("url", url.as_str(), policy)).expect("an accepted URL checks again");
            assert_eq!(again, url);
            assert!(address::route(url.as_str(), policy).is_ok(), "{url} accepted but not routed");
        }
    });
}

/// A receiver's `Retry-After` (seconds or an HTTP date): never a negative
/// delay, and the schedule takes any it reads.
pub fn retry_after(data: &[u8]) {
    let s = text(data);
    let Some(delay) = schedule::parse_retry_after(&s, now()) else { return };
    assert!(delay >= chrono::Duration::zero());
    if let Some(at) = schedule::next_attempt(now(), 1, now(), Some(delay), 0.0) {
        assert!(at - now() >= schedule::RETRY_AFTER_MIN && at - now() <= schedule::RETRY_AFTER_MAX);
    }
}

/// The first line of a `request_body` or `query_params` input (the type
/// and, for a body, a `Content-Type`), and the rest.
fn selected(data: &[u8]) -> Option<(&str, Option<&str>, &[u8])> {
    let at = data.iter().position(|b| *b == b'\n')?;
    let line = std::str::from_utf8(&data[..at]).ok()?;
    let (name, content_type) = match line.split_once(' ') {
        Some((n, ct)) => (n, Some(ct)),
        None => (line, None),
    };
    Some((name, content_type, &data[at + 1..]))
}

/// `value` without its nulls and empty arrays (what a request leaves out).
fn present(value: Value) -> Value {
    match value {
        Value::Object(fields) => Value::Object(
            fields.into_iter().filter(|(_, v)| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty())).map(|(k, v)| (k, present(v))).collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(present).collect()),
        other => other,
    }
}

/// `value` with only the fields `given` has (not the defaults the typed
/// value filled in), at every depth.
fn as_given(value: Value, given: &Value) -> Value {
    match (value, given) {
        (Value::Object(fields), Value::Object(g)) => {
            Value::Object(fields.into_iter().filter_map(|(k, v)| g.get(&k).map(|gv| (k.clone(), as_given(v, gv)))).collect())
        }
        (Value::Array(items), Value::Array(g)) => Value::Array(items.into_iter().zip(g).map(|(v, gv)| as_given(v, gv)).collect()),
        (other, _) => other,
    }
}

macro_rules! body_types {
    ($name:expr, $content_type:expr, $bytes:expr, $($t:ident),* $(,)?) => {
        match $name {
            $(stringify!($t) => {
                use switchboard::wire::latest::types::$t;
                for typed in [
                    body_value::<$t, false>($content_type, $bytes),
                    body_value::<$t, true>($content_type, $bytes),
                ] {
                    if let Ok(v) = typed {
                        let given = serde_json::from_slice::<Value>($bytes).unwrap_or_else(|_| Value::Object(Default::default()));
                        let shown = as_given(serde_json::to_value(&v).expect("a request serializes"), &given);
                        let details = validate::<$t>(&shown);
                        assert!(details.is_empty(), "accepted, but as written it is not: {shown}: {details:?}");
                    }
                }
            })*
            _ => {}
        }
    };
}

/// A request body (`api::extract::JsonBody`, checked by `api::validate`):
/// first line the type's name and perhaps a `Content-Type`, then the body.
/// A body accepted, written out again (the fields it gave), passes the
/// same checks.
pub fn request_body(data: &[u8]) {
    use switchboard::api::extract::body_value;
    use switchboard::api::validate::validate;
    let Some((name, content_type, bytes)) = selected(data) else { return };
    body_types!(
        name,
        content_type,
        bytes,
        ActivateSubscriptionRequest,
        AddonOfferingChangeRequest,
        AdvanceSandboxClockRequest,
        CancelLicenseRequest,
        CancelPaymentProfileSessionRequest,
        CancelSubscriptionAddonsRequest,
        CancelSubscriptionRequest,
        ChangeSimRequest,
        CreateCustomerRequest,
        CreateLicenseRequest,
        CreateOrderRequest,
        CreatePaymentLinkRequest,
        CreatePaymentProfileSessionRequest,
        CreatePaymentRefundRequest,
        CreatePaymentSessionRequest,
        CreateSubscriptionAddonsRequest,
        CreateSubscriptionRequest,
        CreateUserRequest,
        CreateWebhookEndpointRequest,
        EmailLoginStartRequest,
        EmailLoginVerifyRequest,
        LeaseNumbersRequest,
        MarkInvoicePaidRequest,
        NewReportRun,
        PortInRequest,
        ProductOfferingChangeRequest,
        RedeliverEventRequest,
        ReplayWebhookEndpointRequest,
        SetSubscriberRequest,
        SubscriptionStatusChangeRequest,
        UpdateCustomerRequest,
        UpdateOrderRequest,
        UpdateUserRequest,
        UpdateWebhookEndpointRequest,
    );
}

macro_rules! query_types {
    ($name:expr, $query:expr, $($t:ident),* $(,)?) => {
        match $name {
            $(stringify!($t) => {
                use switchboard::wire::latest::params::$t;
                if let Ok(v) = query_value::<$t>($query) {
                    let shown = present(serde_json::to_value(&v).expect("parameters serialize"));
                    let details = validate_params::<$t>(&shown);
                    assert!(details.is_empty(), "accepted, but as written they are not: {shown}: {details:?}");
                    if let Some(c) = shown.get("cursor").and_then(Value::as_str) {
                        let _ = Cursor::decode(c);
                    }
                }
            })*
            _ => {}
        }
    };
}

/// A list operation's query string (`api::extract::QueryParams`): first
/// line the parameters' type, then the query. Parameters accepted, written
/// out again, pass the same checks.
pub fn query_params(data: &[u8]) {
    use switchboard::api::extract::query_value;
    use switchboard::api::validate::validate_params;
    let Some((name, _, query)) = selected(data) else { return };
    let query = text(query);
    query_types!(
        name,
        &query,
        CustomerListQuery,
        EventListQuery,
        InvoiceListQuery,
        LicenseListQuery,
        OrderListQuery,
        PaymentIntentListQuery,
        PaymentLinkListQuery,
        PaymentProfileListQuery,
        ProductOfferingListQuery,
        ReportListQuery,
        SubscriptionAddonProductOfferingOptionsQuery,
        SubscriptionListQuery,
        SubscriptionUsageListQuery,
        SubscriptionUsageViewQuery,
        UserListQuery,
        WebhookDeliveryListQuery,
        WebhookEndpointListQuery,
    );
}

/// The SDKs' `webhooks::verify_at`: lines of the secret, `webhook-id`,
/// `webhook-timestamp`, `webhook-signature`, then the body. Both SDKs
/// agree, at any "now"; what it accepts holds a signature made with the
/// secret; and a delivery signed with the secret is never refused for its
/// signature.
pub fn sdk_webhook_verify(data: &[u8]) {
    use switchboard_client_auk::webhooks as auk;
    use switchboard_client_bullfinch::webhooks as bullfinch;
    let mut parts = data.splitn(5, |b| *b == b'\n');
    let mut part = || parts.next().unwrap_or_default();
    let (secret, id, timestamp, signature, body) = (text(part()), part(), part(), part(), part());
    let mut headers = http::HeaderMap::new();
    for (name, value) in [("webhook-id", id), ("webhook-timestamp", timestamp), ("webhook-signature", signature)] {
        if let Ok(v) = http::HeaderValue::from_bytes(value) {
            headers.insert(name, v);
        }
    }
    let tolerance = std::time::Duration::from_secs(300);
    let key = STANDARD.decode(secret.strip_prefix("whsec_").unwrap_or(&secret)).ok();
    let signed = |id: &str, timestamp: i64, key: &[u8]| {
        let mut mac = Hmac::<sha2::Sha256>::new_from_slice(key).expect("any key length");
        mac.update(format!("{id}.{timestamp}.").as_bytes());
        mac.update(body);
        STANDARD.encode(mac.finalize().into_bytes())
    };
    for now in [1_614_265_330, 0, -1, i64::MIN, i64::MAX] {
        let b = bullfinch::verify_at(&secret, &headers, body, tolerance, now);
        let a = auk::verify_at(&secret, &headers, body, tolerance, now);
        assert_eq!(format!("{:?}", b.as_ref().map(|e| e.event_id)), format!("{:?}", a.as_ref().map(|e| e.event_id)));
        if matches!(b, Ok(_) | Err(bullfinch::VerifyError::InvalidBody(_))) {
            let id = headers["webhook-id"].to_str().expect("verified");
            let t: i64 = headers["webhook-timestamp"].to_str().expect("verified").trim().parse().expect("verified");
            let ours = format!("v1,{}", signed(id, t, key.as_deref().expect("the secret decoded")));
            assert!(headers["webhook-signature"].to_str().expect("verified").split(' ').any(|s| s == ours));
        }
    }
    // signed with the secret here: refused, if at all, for the body
    let (Some(key), Ok(id)) = (key, std::str::from_utf8(id)) else { return };
    let Ok(t) = std::str::from_utf8(timestamp).unwrap_or_default().trim().parse::<i64>() else { return };
    let (Ok(id_value), Ok(t_value)) = (http::HeaderValue::from_str(id), http::HeaderValue::from_str(&t.to_string())) else { return };
    if id_value.to_str().is_err() {
        return;
    }
    let mut ours = http::HeaderMap::new();
    ours.insert("webhook-id", id_value);
    ours.insert("webhook-timestamp", t_value);
    ours.insert("webhook-signature", http::HeaderValue::from_str(&format!("v0,x v1,{}", signed(id, t, &key))).expect("base64"));
    let verdict = bullfinch::verify_at(&secret, &ours, body, tolerance, t);
    assert!(matches!(verdict, Ok(_) | Err(bullfinch::VerifyError::InvalidBody(_))), "{verdict:?}");
}

/// The hosted pages' forms: the payment and setup pages' fields, and a
/// report file's signed query. What a sandbox accepts names its card's
/// last four digits and has not expired; a signed query read is written
/// back the same.
pub fn hosted_form(data: &[u8]) {
    use switchboard::payment_providers::{Entered, test_values};
    let fields: Vec<(String, String)> = url::form_urlencoded::parse(data).into_owned().collect();
    let (_action, entered) = switchboard::hosted::entered(&fields);
    let today = now().date_naive();
    match entered {
        Entered::Card { number, expiry, cvc } => {
            if let Ok(card) = test_values::card(&number, &expiry, &cvc, today) {
                let digits: String = number.chars().filter(char::is_ascii_digit).collect();
                assert!(card.display_name.ends_with(&digits[digits.len() - 4..]), "{}", card.display_name);
                assert!(card.expires_on.is_some_and(|d| d >= today));
            }
        }
        Entered::Sepa { iban } => {
            if let Ok(account) = test_values::iban(&iban) {
                assert!(account.display_name.starts_with("SEPA Debit"));
            }
        }
    }
    let query = text(data);
    if let Some((at, signature)) = switchboard::hosted::report_files::signed(Some(&query)) {
        let written: String =
            url::form_urlencoded::Serializer::new(String::new()).append_pair("expires", &at.to_string()).append_pair("signature", &signature).finish();
        assert_eq!(switchboard::hosted::report_files::signed(Some(&written)), Some((at, signature)));
    }
}

/// PostgreSQL's write path's text literals (`params::inline`): any text
/// but one with a NUL (refused) is one literal that reads back as itself,
/// however it mixes quotes, backslashes, `$`s and `::`; the statement's
/// text around it, `$1` in quotes included, is left as it was.
pub fn sql_literal(data: &[u8]) {
    let value = text(data).into_owned();
    let inlined = switchboard::store::inline_texts("SELECT '$1', $1 FROM t", std::slice::from_ref(&value));
    if value.contains('\0') {
        assert!(inlined.is_err(), "a NUL is refused");
        return;
    }
    let inlined = inlined.expect("text without a NUL inlines");
    let literal = inlined.strip_prefix("SELECT '$1', E'").expect("the text before the literal is kept").strip_suffix("'::text FROM t").expect("and after it");
    // read back as PostgreSQL reads an escape string: '' is a quote, \\ a backslash; nothing else may end or escape
    let (mut read, mut chars) = (String::new(), literal.chars());
    while let Some(c) = chars.next() {
        match c {
            '\'' => assert_eq!(chars.next(), Some('\''), "a lone quote would end the literal: {inlined:?}"),
            '\\' => assert_eq!(chars.next(), Some('\\'), "a lone backslash would escape: {inlined:?}"),
            _ => {}
        }
        read.push(c);
    }
    assert_eq!(read, value, "the literal reads back as the value");
}
