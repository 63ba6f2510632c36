//! Background work, one file per job, all started by `start`: the SMTP
//! sender of the mail outbox, and the expiry of orders nobody reads.

pub mod mail;
pub mod order_expiry;

use crate::clock::Clock;
use crate::config::Settings;
use crate::store::Store;
use std::sync::Arc;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// The running jobs of one server instance.
pub struct Jobs {
    tasks: Vec<JoinHandle<()>>,
}

impl Jobs {
    /// Stops every job (each leaves its claimed work to be taken again).
    pub fn stop(&self) {
        self.tasks.iter().for_each(JoinHandle::abort);
    }
}

/// Starts every job `settings` ask for; `mail_wake` wakes the mail sender
/// when a request queues mail.
pub fn start(store: &Store, clock: &Arc<Clock>, settings: &Settings, mail_wake: Arc<Notify>) -> anyhow::Result<Jobs> {
    let mut tasks = vec![tokio::spawn(order_expiry::run(store.clone(), clock.clone()))];
    if let Some(url) = &settings.smtp_url {
        let sender = mail::Sender::new(url, &settings.mail_from)?;
        tasks.push(tokio::spawn(sender.run(store.clone(), clock.clone(), mail_wake)));
    }
    Ok(Jobs { tasks })
}
