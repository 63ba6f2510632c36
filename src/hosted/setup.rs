//! The setup page of a payment profile session (`GET`/`POST
//! /setup/{token}`): saves a payment method without charging it
//! (`domain::payments::profile_sessions`), at the session's organisation's
//! time, then sends the payer to the session's `returnUrl`.

use super::page::{self, STYLE, escape};
use super::{NOT_FOUND, TokenPath, UNAVAILABLE, acting_for, entered, html, internal, is_token, missed, see_other, spent, why};
use crate::api::context::Context;
use crate::domain::Caller;
use crate::domain::payments::{
    self,
    profile_sessions::{self, Setup},
};
use crate::error::Result;
use crate::states::payments::PaymentProfileSessionStatus as Status;
use crate::store::{HostedPage, ProfileSessionRow};
use dropshot::{Body, HttpError, Path, RequestContext, UntypedBody};
use http::{Response, StatusCode};

/// The session at `token`, with a caller of its organisation at its time
/// (the session expired if due); None when no session has that token.
async fn open(ctx: &Context, token: &str) -> Result<Option<(Caller, ProfileSessionRow)>> {
    if !is_token(token) {
        return Ok(None);
    }
    let Some(session) = ctx.store.profile_session_by_token(token).await? else { return Ok(None) };
    let caller = acting_for(ctx, session.org).await?;
    let session = profile_sessions::expire_if_due(&caller, session).await?;
    Ok(Some((caller, session)))
}

/// The page for the session as it stands, with `notice` above its form.
async fn current(caller: &Caller, session: &ProfileSessionRow, notice: Option<&str>) -> Result<String> {
    let organisation = caller.store.organisation_name(caller.org).await?.unwrap_or_default();
    let message = |title: &str, text: &str| render(&organisation, session, title, &format!("<p id=\"message\">{}</p>", escape(text)));
    Ok(match session.status {
        Status::Completed => message("Payment method saved", "Thank you: your payment method is saved."),
        Status::Canceled => message("Setup cancelled", "This setup was cancelled; it takes no further attempt."),
        Status::Expired => message("Setup expired", "This setup has expired; it takes no further attempt."),
        Status::Active if session.pending_method.is_some() => {
            render(&organisation, session, "Confirm your payment method", &page::authenticate("saving this card"))
        }
        // a page that took all its attempts shows no form again, and why
        // the last was refused (`notice` invites another try)
        Status::Active if payments::attempts_spent(caller, HostedPage::Setup, session.id).await? => {
            let text = spent(session.last_failure_code.as_deref());
            render(
                &organisation,
                session,
                page::SPENT_TITLE,
                &format!("<p id=\"message\">{}</p>{}", escape(&text), page::cancel_link(session.cancel_url.as_deref())),
            )
        }
        Status::Active => {
            // the reason of the last refusal, also on a reload
            let last = session.last_failure_code.as_deref().map(refused);
            render(&organisation, session, &format!("Save a payment method for {organisation}"), &form(session, notice.or(last.as_deref())))
        }
    })
}

fn refused(code: &str) -> String {
    format!("The payment method could not be saved: {} ({code}). You can try again with another card or account.", why(code))
}

fn form(session: &ProfileSessionRow, notice: Option<&str>) -> String {
    format!(
        "{}<p>Nothing is charged now: the method is kept for later payments.</p>\
         <form method=\"post\"><input type=\"hidden\" name=\"action\" value=\"save\">{}<button type=\"submit\" id=\"save\">Save</button></form>{}",
        page::notice(notice),
        page::method_fields(session.provider, "Or save a SEPA direct debit mandate"),
        page::cancel_link(session.cancel_url.as_deref()),
    )
}

fn render(organisation: &str, session: &ProfileSessionRow, title: &str, main: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{title}</title><style>{STYLE}</style></head><body><h1>{title}</h1><p>{}</p>{main}\
         <p class=\"sandbox\">Kept by {} (sandbox: use the test values of the documentation).</p></body></html>",
        escape(organisation),
        session.provider.as_str(),
        title = escape(title),
    )
}

#[dropshot::endpoint { method = GET, path = "/setup/{token}", unpublished = true }]
pub(super) async fn setup_page(rqctx: RequestContext<Context>, path: Path<TokenPath>) -> std::result::Result<Response<Body>, HttpError> {
    super::traced(&rqctx, setup_page_answered(&rqctx, path)).await
}

async fn setup_page_answered(rqctx: &RequestContext<Context>, path: Path<TokenPath>) -> std::result::Result<Response<Body>, HttpError> {
    let ctx = rqctx.context();
    let Some((caller, session)) = open(ctx, &path.into_inner().token).await.map_err(internal)? else {
        missed(rqctx);
        return html(StatusCode::NOT_FOUND, NOT_FOUND.into());
    };
    html(StatusCode::OK, current(&caller, &session, None).await.map_err(internal)?)
}

#[dropshot::endpoint { method = POST, path = "/setup/{token}", unpublished = true }]
pub(super) async fn setup_submit(rqctx: RequestContext<Context>, path: Path<TokenPath>, body: UntypedBody) -> std::result::Result<Response<Body>, HttpError> {
    super::traced(&rqctx, setup_submit_answered(&rqctx, path, body)).await
}

async fn setup_submit_answered(rqctx: &RequestContext<Context>, path: Path<TokenPath>, body: UntypedBody) -> std::result::Result<Response<Body>, HttpError> {
    let ctx = rqctx.context();
    let Some((caller, session)) = open(ctx, &path.into_inner().token).await.map_err(internal)? else {
        missed(rqctx);
        return html(StatusCode::NOT_FOUND, NOT_FOUND.into());
    };
    let fields: Vec<(String, String)> = url::form_urlencoded::parse(body.as_bytes()).into_owned().collect();
    let (action, entered) = entered(&fields);
    let setup = match action.as_str() {
        "approve" => profile_sessions::authenticate(&caller, &ctx.providers, &session, true).await,
        "fail" => profile_sessions::authenticate(&caller, &ctx.providers, &session, false).await,
        _ => profile_sessions::enter(&caller, &ctx.providers, &session, &entered).await,
    }
    .map_err(internal)?;
    let too_many = matches!(setup, Setup::TooManyAttempts);
    let (notice, moved) = match setup {
        Setup::Saved(after) => return see_other(&after.return_url),
        Setup::Invalid(invalid) => (Some(invalid.message), None),
        Setup::Unavailable => (Some(UNAVAILABLE.to_string()), None),
        Setup::TooManyAttempts => (Some(payments::TOO_MANY_ATTEMPTS.to_string()), None),
        // the page as the session now stands says it (the step, the
        // refusal, or that it is closed: in the state the transaction saw,
        // which the pool may not show yet on SQLite's shared writer)
        Setup::NeedsAction | Setup::Declined(_) => (None, None),
        Setup::Closed(status) => (None, Some(status)),
    };
    let session = ctx.store.profile_session(caller.org, session.id).await.map_err(internal)?.unwrap_or(session);
    let session = ProfileSessionRow { status: moved.unwrap_or(session.status), ..session };
    let status = if too_many { StatusCode::TOO_MANY_REQUESTS } else { StatusCode::OK };
    html(status, current(&caller, &session, notice.as_deref()).await.map_err(internal)?)
}
