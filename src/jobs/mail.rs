//! Delivering the mail outbox through SMTP. Without an SMTP server
//! configured this job does not run and mail waits in the outbox for
//! `admin mail list`. With one, each queued message is sent with lettre by
//! the one instance holding its job, and marked sent, or tried again with
//! a growing delay (30 s, 60 s, ... up to an hour) when the server refuses it.
//! Delivery is at least once, as SMTP is: a message whose sending succeeded
//! but whose outcome could not be recorded (the database went away) is
//! sent again.

use super::{Outcome, Worker};
use crate::store::{JobKind, Mail, MailStatus};
use chrono::Duration;
use lettre::message::header::ContentType;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use std::sync::Arc;

/// How long one SMTP conversation may take; under the job's lease, so no
/// other instance takes a message over while it is being sent.
const SEND_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

pub struct Sender {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: lettre::message::Mailbox,
}

impl Sender {
    /// `url` as lettre reads it: smtp://host:port (plain, or STARTTLS with
    /// `?tls=required`), smtps://user:pass@host (TLS).
    pub fn new(url: &str, from: &str) -> anyhow::Result<Sender> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|e| anyhow::anyhow!("SMTP URL {}: {e}", crate::config::without_password(url)))?
            .timeout(Some(SEND_TIMEOUT))
            .build();
        let from = from.parse().map_err(|e| anyhow::anyhow!("mail sender {from:?}: {e}"))?;
        Ok(Sender { transport, from })
    }

    async fn send(&self, mail: &Mail) -> Result<(), String> {
        let message = Message::builder()
            .from(self.from.clone())
            .to(mail.to.parse().map_err(|e| format!("recipient: {e}"))?)
            .subject(mail.subject.as_str())
            .header(ContentType::TEXT_PLAIN)
            .body(mail.body.clone())
            .map_err(|e| e.to_string())?;
        self.transport.send(message).await.map(|_| ()).map_err(|e| e.to_string())
    }
}

/// The mail.delivery job over `sender`.
pub fn worker(sender: Sender) -> Worker {
    let sender = Arc::new(sender);
    Worker {
        kind: JobKind::MailDelivery,
        // a send is given at most SEND_TIMEOUT, well inside the lease
        lease: Duration::seconds(60),
        batch: 1,
        run: Arc::new(move |store, clock, job| {
            let sender = sender.clone();
            Box::pin(async move {
                let mail = match store.mail(&job.subject).await {
                    Ok(Some(m)) if m.status == MailStatus::Queued => m,
                    // sent already, or gone: nothing to do
                    Ok(_) => return Outcome::Done,
                    Err(e) => return Outcome::Retry { after: Duration::seconds(30), error: e.to_string() },
                };
                let sent = sender.send(&mail).await;
                let retry = sent.as_ref().err().map(|e| {
                    tracing::warn!(mail = %mail.mail_id, error = %e, "mail not sent; will retry");
                    Outcome::Retry { after: Duration::seconds((30 * job.attempts).min(3600)), error: e.clone() }
                });
                if let Err(e) = store.mail_sent(&mail.mail_id, sent, clock.now()).await {
                    return Outcome::Retry { after: Duration::seconds(30), error: format!("recording the outcome: {e}") };
                }
                retry.unwrap_or(Outcome::Done)
            })
        }),
    }
}
