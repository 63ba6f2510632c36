//! The hosted pages: a payment link's (`GET`/`POST /pay/{token}`), a
//! payment profile session's setup page (`/setup/{token}`, `setup`) and an
//! invoice's document (`/invoice-documents/{token}`, `documents`) and a
//! report run's file (`/report-files/{reportRunId}`, `report_files`),
//! served beside the API's routes, outside `/api/v2`, unpublished (no API
//! operation). The token in the URL is a page's only key: whoever has it
//! can pay this link (save a method for this session) and see what it
//! asks, nothing else. Paying runs `domain::payments::charge` at the
//! link's organisation's time.

mod documents;
pub mod page;
#[doc(hidden)]
pub mod report_files;
mod setup;

use crate::api::context::Context;
use crate::domain::payments::settle::Attempt;
use crate::domain::payments::{self, charge, render};
use crate::domain::{Caller, customers};
use crate::error::Result;
use crate::payment_providers::Entered;
use crate::states::payments::{PaymentIntentStatus, PaymentLinkStatus};
use crate::store::{HostedPage, IntentRow, LinkRow};
use dropshot::{ApiDescription, Body, HttpError, Path, RequestContext, UntypedBody};
use http::{Response, StatusCode};
use page::Shown;
use tracing::Instrument;

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct TokenPath {
    token: String,
}

/// Registers the hosted pages beside the API's routes.
pub fn register(api: &mut ApiDescription<Context>) -> std::result::Result<(), String> {
    api.register(pay_page).map_err(|e| e.to_string())?;
    api.register(pay_submit).map_err(|e| e.to_string())?;
    api.register(setup::setup_page).map_err(|e| e.to_string())?;
    api.register(setup::setup_submit).map_err(|e| e.to_string())?;
    api.register(documents::invoice_document).map_err(|e| e.to_string())?;
    api.register(report_files::report_file).map_err(|e| e.to_string())
}

/// A page's answer: HTML nobody caches, frames or is referred from (the
/// token is in its URL), its form answered by a redirect.
fn html(status: StatusCode, body: String) -> std::result::Result<Response<Body>, HttpError> {
    crate::markup::page_headers(Response::builder().status(status), crate::markup::Forms::Redirect)
        .body(Body::from(body))
        .map_err(|e| HttpError::for_internal_error(e.to_string()))
}

/// A page's request in its span, a trace of its own as an API request's
/// is (`telemetry::request_span`); a failure answered here as the Error
/// object, in that span (left to dropshot, it would be a `refused` one).
///
/// A page's token (or signed URL) is its only key, so guessing one is
/// limited as guessing an API key is: an address whose tokens found
/// nothing too often in a minute (`missed`; as many as
/// `--auth-failures-per-minute`, a budget apart from the API keys', so
/// that guessing at one closes not the other) is answered 429 before its
/// next token is looked up.
async fn traced(
    rqctx: &RequestContext<Context>,
    page: impl Future<Output = std::result::Result<Response<Body>, HttpError>>,
) -> std::result::Result<Response<Body>, HttpError> {
    let (request, id) = (&rqctx.request, &rqctx.request_id);
    let span = crate::telemetry::request_span(id, &rqctx.endpoint.operation_id, Some(request.method()), None, Some(request.headers()));
    let answered = match rqctx.context().limits.may_open_page(crate::api::request::client_of(rqctx)) {
        Err(seconds) => too_many_guesses(seconds),
        Ok(()) => page.instrument(span.clone()).await,
    };
    match answered {
        Ok(answer) => {
            crate::telemetry::request_ended(&span, answer.status().as_u16());
            Ok(answer)
        }
        Err(e) => Ok(crate::api::error::error_response(e, id, &span)),
    }
}

/// The request's token (or signed URL) found nothing: a guess, counted
/// against its client address (`traced`).
fn missed(rqctx: &RequestContext<Context>) {
    rqctx.context().limits.missed_page(crate::api::request::client_of(rqctx));
}

/// The page of an address that guessed too often, and when to come back.
fn too_many_guesses(seconds: u64) -> std::result::Result<Response<Body>, HttpError> {
    let mut answer = html(StatusCode::TOO_MANY_REQUESTS, TOO_MANY_GUESSES.into())?;
    answer.headers_mut().insert(http::header::RETRY_AFTER, http::HeaderValue::from(seconds));
    Ok(answer)
}

const TOO_MANY_GUESSES: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Too many attempts</title></head>\
<body><h1>Too many attempts</h1><p>Too many addresses that lead nowhere were tried from your network; try again in a minute.</p></body></html>";

fn internal(e: crate::error::Error) -> HttpError {
    tracing::error!(error = %e, "hosted page");
    HttpError::for_internal_error(e.to_string())
}

const NOT_FOUND: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Not found</title></head>\
<body><h1>Not found</h1><p>There is no payment page at this address.</p></body></html>";

/// Whether `token` can be a page's: URL-safe base64 of 32 bytes (anything
/// else finds nothing, so it is not looked up).
fn is_token(token: &str) -> bool {
    token.len() == 43
}

/// What a page acts as: its organisation, at the organisation's time.
async fn acting_for(ctx: &Context, org: uuid::Uuid) -> Result<Caller> {
    let now = ctx.store.organisation_time(org, ctx.clock.now()).await?;
    Ok(Caller::system(&ctx.store, org, now))
}

/// The link at `token`, with a caller of its organisation at its time
/// (the link expired if due); None when no link has that token.
async fn open(ctx: &Context, token: &str) -> Result<Option<(Caller, LinkRow)>> {
    if !is_token(token) {
        return Ok(None);
    }
    let Some(link) = ctx.store.link_by_token(token).await? else { return Ok(None) };
    let caller = acting_for(ctx, link.org).await?;
    let link = payments::links::expire_if_due(&caller, link).await?;
    Ok(Some((caller, link)))
}

async fn shown(caller: &Caller, link: &LinkRow, intent: Option<&IntentRow>) -> Result<Shown> {
    let saved = match link.profile_id {
        Some(id) => {
            caller.store.profile(caller.org, id).await?.filter(|p| p.status == crate::states::payments::PaymentProfileStatus::Active).map(|p| p.display_name)
        }
        None => None,
    };
    let lines = match intent {
        Some(i) => render::stored_lines(i)?,
        None => vec![],
    };
    let customer = customers::find(caller, &link.customer_id.to_string()).await?;
    Ok(Shown {
        organisation: caller.store.organisation_name(caller.org).await?.unwrap_or_default(),
        description: link.description.clone(),
        lines,
        amount_minor: link.amount_minor,
        currency: link.currency.clone(),
        locale: customer.preferred_locale,
        provider: link.provider,
        cancel_url: link.cancel_url.clone(),
        saved,
    })
}

/// The page for the link as it stands, with `notice` above its form (or,
/// on a closed link, in place of what the state says).
async fn current(caller: &Caller, link: &LinkRow, notice: Option<&str>) -> Result<String> {
    let intent = caller.store.intent(caller.org, link.intent_id).await?;
    let shown = shown(caller, link, intent.as_ref()).await?;
    let closed = |title: &str, text: &str| page::render(&shown, page::Body::Message { title, text: notice.unwrap_or(text) });
    let (placed, not_placed) = match link.invoice_id {
        Some(_) => (
            "Thank you: this payment is complete, and the invoice is paid.",
            "The payment went through, but the invoice was no longer open, so the payment is being refunded.",
        ),
        None => (
            "Thank you: this payment is complete, and the order has been placed.",
            "The payment went through, but the order could not be placed, so the payment is being refunded.",
        ),
    };
    Ok(match link.status {
        PaymentLinkStatus::Completed => closed("Paid", placed),
        PaymentLinkStatus::Failed => closed("Payment refunded", &format!("{not_placed} {}", link.failure_reason.clone().unwrap_or_default())),
        PaymentLinkStatus::Canceled => closed("Payment link cancelled", "This payment link was cancelled; it takes no payment."),
        PaymentLinkStatus::Expired => closed("Payment link expired", "This payment link has expired; it takes no payment."),
        PaymentLinkStatus::Active => {
            match intent.map(|i| i.status) {
                Some(PaymentIntentStatus::RequiresAction) => page::render(&shown, page::Body::Authenticate),
                Some(PaymentIntentStatus::Processing) => {
                    closed("Payment processing", "Your payment is being processed; this page shows the outcome once it has settled.")
                }
                // a page that took all its attempts shows no form again; it
                // says why the last was refused (what `notice` says of it
                // invites another try)
                _ if payments::attempts_spent(caller, HostedPage::Link, link.id).await? => {
                    let last = caller.store.charges_of(caller.org, link.intent_id).await?.pop().and_then(|c| c.failure_code);
                    page::render(&shown, page::Body::Spent { text: &spent(last.as_deref()) })
                }
                Some(PaymentIntentStatus::RequiresPaymentMethod) if notice.is_none() => {
                    // the reason of the last decline, also on a reload
                    let last = caller.store.charges_of(caller.org, link.intent_id).await?.pop().and_then(|c| c.failure_code);
                    let notice = last.map(|code| declined(&code));
                    page::render(&shown, page::Body::Form { notice: notice.as_deref() })
                }
                _ => page::render(&shown, page::Body::Form { notice }),
            }
        }
    })
}

#[dropshot::endpoint { method = GET, path = "/pay/{token}", unpublished = true }]
async fn pay_page(rqctx: RequestContext<Context>, path: Path<TokenPath>) -> std::result::Result<Response<Body>, HttpError> {
    traced(&rqctx, pay_page_answered(&rqctx, path)).await
}

async fn pay_page_answered(rqctx: &RequestContext<Context>, path: Path<TokenPath>) -> std::result::Result<Response<Body>, HttpError> {
    let ctx = rqctx.context();
    let Some((caller, link)) = open(ctx, &path.into_inner().token).await.map_err(internal)? else {
        missed(rqctx);
        return html(StatusCode::NOT_FOUND, NOT_FOUND.into());
    };
    html(StatusCode::OK, current(&caller, &link, None).await.map_err(internal)?)
}

/// What the form sent: `action` (pay with the card fields or `iban`, pay
/// with the saved method, approve or fail the authentication step) and
/// what was typed. Public for the fuzz targets.
#[doc(hidden)]
pub fn entered(fields: &[(String, String)]) -> (String, Entered) {
    let get = |name: &str| fields.iter().find(|(k, _)| k == name).map(|(_, v)| v.trim().to_string()).unwrap_or_default();
    let iban = get("iban");
    let entered = if !iban.is_empty() && get("cardNumber").is_empty() {
        Entered::Sepa { iban }
    } else {
        Entered::Card { number: get("cardNumber"), expiry: get("expiry"), cvc: get("cvc") }
    };
    (get("action"), entered)
}

/// Why a provider refused, in the payer's words.
fn why(code: &str) -> &'static str {
    match code {
        "card_declined" => "your card was declined",
        "insufficient_funds" => "your card has insufficient funds",
        "expired_card" => "your card has expired",
        "authentication_failed" => "the authentication failed",
        "debit_failed" => "the direct debit failed",
        _ => "the provider refused it",
    }
}

/// What a page that took all its attempts says: why the last was
/// refused (`refused`, its code), if it was, then that it takes no more.
fn spent(refused: Option<&str>) -> String {
    match refused {
        Some(code) => format!("The last attempt did not go through: {} ({code}). {}", why(code), payments::TOO_MANY_ATTEMPTS),
        None => payments::TOO_MANY_ATTEMPTS.to_string(),
    }
}

fn declined(code: &str) -> String {
    format!("The payment did not go through: {} ({code}). You can try again with another card or account.", why(code))
}

const UNAVAILABLE: &str = "The payment provider did not answer; please try again in a minute.";

/// A redirect after the page did its work (`returnUrl`).
fn see_other(url: &str) -> std::result::Result<Response<Body>, HttpError> {
    Response::builder()
        .status(StatusCode::SEE_OTHER)
        .header(http::header::LOCATION, url)
        .header(http::header::CACHE_CONTROL, "no-store")
        .body(Body::empty())
        .map_err(|e| HttpError::for_internal_error(e.to_string()))
}

#[dropshot::endpoint { method = POST, path = "/pay/{token}", unpublished = true }]
async fn pay_submit(rqctx: RequestContext<Context>, path: Path<TokenPath>, body: UntypedBody) -> std::result::Result<Response<Body>, HttpError> {
    traced(&rqctx, pay_submit_answered(&rqctx, path, body)).await
}

async fn pay_submit_answered(rqctx: &RequestContext<Context>, path: Path<TokenPath>, body: UntypedBody) -> std::result::Result<Response<Body>, HttpError> {
    let ctx = rqctx.context();
    let Some((caller, link)) = open(ctx, &path.into_inner().token).await.map_err(internal)? else {
        missed(rqctx);
        return html(StatusCode::NOT_FOUND, NOT_FOUND.into());
    };
    if link.status != PaymentLinkStatus::Active {
        return html(StatusCode::OK, current(&caller, &link, None).await.map_err(internal)?);
    }
    let fields: Vec<(String, String)> = url::form_urlencoded::parse(body.as_bytes()).into_owned().collect();
    let (action, entered) = entered(&fields);
    let attempt = match action.as_str() {
        "approve" => charge::authenticate(&caller, &ctx.providers, &link, true).await,
        "fail" => charge::authenticate(&caller, &ctx.providers, &link, false).await,
        "saved" => charge::pay(&caller, &ctx.providers, &link, charge::Paying::Profile).await,
        _ => charge::pay(&caller, &ctx.providers, &link, charge::Paying::Entered(&entered)).await,
    }
    .map_err(internal)?;
    let status = match attempt {
        Attempt::TooManyAttempts => StatusCode::TOO_MANY_REQUESTS,
        _ => StatusCode::OK,
    };
    let notice = match attempt {
        Attempt::Paid(Some(after)) => {
            if let (PaymentLinkStatus::Completed, Some(url)) = (after.status, &after.return_url) {
                return see_other(url);
            }
            None
        }
        Attempt::Declined(code) => Some(declined(&code)),
        Attempt::Invalid(invalid) => Some(invalid.message),
        Attempt::NotNow(message) => Some(message),
        Attempt::Unavailable => Some(format!("{UNAVAILABLE} You have not been charged twice.")),
        Attempt::TooManyAttempts => Some(payments::TOO_MANY_ATTEMPTS.into()),
        Attempt::Paid(None) => Some("The payment went through after this link was closed; it is being refunded in full.".into()),
        Attempt::Processing | Attempt::NeedsAction => None,
    };
    let link = ctx.store.link(caller.org, link.id).await.map_err(internal)?.unwrap_or(link);
    html(status, current(&caller, &link, notice.as_deref()).await.map_err(internal)?)
}

#[cfg(test)]
mod tests {
    /// The pages' URLs, the routes above and the version policy's pass
    /// (`api::paths::HOSTED_PAGES`, `SETUP_PAGES`) name one path.
    #[test]
    fn a_hosted_url_is_where_the_pages_are_routed() {
        let url = crate::domain::payments::render::hosted_url("http://127.0.0.1:8080/", "t0ken");
        assert_eq!(url, format!("http://127.0.0.1:8080{}t0ken", crate::api::paths::HOSTED_PAGES));
        let url = crate::domain::payments::profile_sessions::setup_url("http://127.0.0.1:8080/", "t0ken");
        assert_eq!(url, format!("http://127.0.0.1:8080{}t0ken", crate::api::paths::SETUP_PAGES));
    }
}
