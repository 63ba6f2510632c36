//! Sending the mail outbox through SMTP. Without an SMTP server configured
//! nothing is sent and mail waits in the outbox for `admin mail list`.
//! With one, a background sender leases one message at a time (so several
//! instances never send the same message twice while a lease holds), sends
//! it with lettre, and marks it sent, or queues it again with a growing
//! delay when the server refuses it.

use crate::clock::Clock;
use crate::store::{Mail, Store};
use chrono::Duration;
use lettre::message::header::ContentType;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use std::sync::Arc;
use tokio::sync::Notify;

/// How long a sender holds a message before another may try it.
const LEASE_SECONDS: i64 = 60;
/// How often the outbox is looked at without being woken (mail queued by
/// another instance, retries falling due).
const POLL: std::time::Duration = std::time::Duration::from_secs(5);

pub struct Sender {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: lettre::message::Mailbox,
}

impl Sender {
    /// `url` as lettre reads it: smtp://host:port (plain, or STARTTLS with
    /// `?tls=required`), smtps://user:pass@host (TLS).
    pub fn new(url: &str, from: &str) -> anyhow::Result<Sender> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|e| anyhow::anyhow!("SMTP URL {url:?}: {e}"))?
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

    /// Sends until the outbox is empty, then waits for `wake` or the poll
    /// interval; runs until its task is aborted.
    pub async fn run(self, store: Store, clock: Arc<Clock>, wake: Arc<Notify>) {
        loop {
            loop {
                let now = clock.now();
                let mail = match store.lease_mail(now, now + Duration::seconds(LEASE_SECONDS)).await {
                    Ok(Some(m)) => m,
                    Ok(None) => break,
                    Err(e) => {
                        tracing::warn!(error = %e, "mail outbox unreadable");
                        break;
                    }
                };
                let outcome = self.send(&mail).await.map_err(|e| {
                    tracing::warn!(mail = %mail.mail_id, error = %e, "mail not sent; will retry");
                    // 30 s, 60 s, ... up to an hour between tries
                    let delay = Duration::seconds((30 * (mail.attempts + 1)).min(3600));
                    (e, clock.now() + delay)
                });
                if let Err(e) = store.mail_sent(&mail.mail_id, outcome, clock.now()).await {
                    tracing::warn!(error = %e, "mail outcome not recorded");
                }
            }
            tokio::select! {
                _ = wake.notified() => {}
                _ = tokio::time::sleep(POLL) => {}
            }
        }
    }
}
