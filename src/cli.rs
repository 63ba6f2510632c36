//! The command line: `serve`, the operator's `admin` commands and `listen`
//! (local forwarding of events). In the library, not the binary, so that
//! the server's async code is compiled once: an async fn's body is
//! compiled in the crate that first polls it, and a binary that awaited
//! `server::start` compiled the whole server again (docs/developing.md,
//! What the build costs).

use crate::payment_providers::ProviderName;
use crate::{
    admin,
    clock::Clock,
    config::Settings,
    demo, server,
    store::{Store, Synchronous},
};
use clap::{CommandFactory, Parser, Subcommand};
use std::net::SocketAddr;
use std::sync::Arc;

/// SQLite file in the working directory unless told otherwise.
const DEFAULT_DATABASE: &str = "sqlite://switchboard.db";

#[derive(Parser)]
#[command(name = "switchboard", version, about = "Telecom Subscription Management API server")]
struct Cli {
    /// sqlite://FILE or postgres://USER@HOST/DB
    #[arg(long, global = true, env = "DATABASE_URL", default_value = DEFAULT_DATABASE, hide_env_values = true)]
    database_url: String,
    /// SQLite only: when a commit reaches the disk. `normal` (WAL): it
    /// survives a crash of the process; `full`: a loss of power too, at
    /// the cost of a sync per commit.
    #[arg(long, global = true, env = "SWITCHBOARD_SQLITE_SYNCHRONOUS", value_enum, default_value = "normal")]
    sqlite_synchronous: Synchronous,
    /// A TOML file of serve's settings, named as their flags are
    /// (docs/operating.md); a flag or an environment variable wins over
    /// it. Other commands take its database-url.
    #[arg(long, global = true, env = "SWITCHBOARD_CONFIG")]
    config: Option<std::path::PathBuf>,
    /// How log lines are written to standard error: `text`, or `json`
    /// (one object per line, with the request's trace_id and span_id).
    #[arg(long, global = true, env = "SWITCHBOARD_LOG_FORMAT", value_enum, default_value = "text")]
    log_format: crate::telemetry::LogFormat,
    /// The master key that seals secrets at rest (webhook signing secrets,
    /// the server's own secret): the base64 of 32 random bytes (`switchboard
    /// admin secrets new-key`). Without it they are stored in plain.
    #[arg(long, global = true, env = "SWITCHBOARD_MASTER_KEY", hide_env_values = true)]
    master_key: Option<String>,
    /// Master keys before the current one, comma-separated: they only open
    /// what they sealed, until `switchboard admin secrets reseal` (or a
    /// start of `serve`) has sealed it again under --master-key.
    #[arg(long, global = true, env = "SWITCHBOARD_PREVIOUS_MASTER_KEYS", hide_env_values = true, value_delimiter = ',')]
    previous_master_keys: Vec<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the API under /api/v2.
    Serve {
        /// The API's address (host:port).
        #[arg(long, env = "SWITCHBOARD_LISTEN", default_value = "127.0.0.1:8080")]
        listen: SocketAddr,
        /// On an empty database, create a demo organisation, key and data.
        #[arg(long, env = "SWITCHBOARD_DEMO")]
        demo: bool,
        #[command(flatten)]
        settings: Settings,
    },
    /// The configuration file.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// Forward the organisation's events to a local URL, signed as
    /// deliveries are (no public endpoint needed).
    Listen {
        #[command(flatten)]
        options: crate::listen::Options,
    },
    /// Operator commands; each prints JSON.
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Check a file as `serve --config` reads it: each setting named and
    /// valid (prints {file, settings}; a problem is one line, exit 1).
    Check { file: std::path::PathBuf },
}

#[derive(Subcommand)]
enum AdminCommand {
    /// Organisations.
    Org {
        #[command(subcommand)]
        command: OrgCommand,
    },
    /// API keys.
    Key {
        #[command(subcommand)]
        command: KeyCommand,
    },
    /// Users (what only an operator may set).
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Outgoing mail.
    Mail {
        #[command(subcommand)]
        command: MailCommand,
    },
    /// The product catalog.
    Catalog {
        #[command(subcommand)]
        command: CatalogCommand,
    },
    /// Webhook endpoints and the webhook revision.
    Webhook {
        #[command(subcommand)]
        command: admin::webhooks::WebhookCommand,
    },
    /// Subscriptions' usage.
    Usage {
        #[command(subcommand)]
        command: admin::usage::UsageCommand,
    },
    /// A sandbox organisation's test clock.
    Clock {
        #[command(subcommand)]
        command: admin::clock::ClockCommand,
    },
    /// Invoices: those to print, voiding one, dunning's days.
    Invoice {
        #[command(subcommand)]
        command: admin::invoices::InvoiceCommand,
    },
    /// The organisation's number pool.
    Number {
        #[command(subcommand)]
        command: admin::numbers::NumberCommand,
    },
    /// The organisation's SIM inventory.
    Sim {
        #[command(subcommand)]
        command: admin::sims::SimCommand,
    },
    /// A sandbox organisation's stand-ins for other operators.
    Sandbox {
        #[command(subcommand)]
        command: admin::sandbox::SandboxCommand,
    },
    /// Secrets at rest: how they are kept, resealing, a new master key.
    Secrets {
        #[command(subcommand)]
        command: admin::secrets::SecretsCommand,
    },
    /// Copy a SQLite database, while the server runs, to a new file
    /// (PostgreSQL: says how with pg_dump).
    Backup {
        #[arg(long)]
        to: std::path::PathBuf,
    },
    /// Put a backup in place of a stopped server's SQLite database (checked
    /// first; an existing database only with --force), then migrate it up
    /// to date (PostgreSQL: says how with pg_restore).
    Restore {
        #[arg(long)]
        from: std::path::PathBuf,
        #[arg(long)]
        force: bool,
    },
}

#[derive(Subcommand)]
enum CatalogCommand {
    /// Load groups, products, offerings, prices, catalogs, customer
    /// assignments and tax rates from a JSON (.json) or YAML file into an
    /// organisation. Nothing is stored unless the whole file is valid;
    /// importing the same file again changes nothing.
    Import {
        #[arg(long)]
        org: uuid::Uuid,
        file: std::path::PathBuf,
    },
}

#[derive(Subcommand)]
enum UserCommand {
    /// Make a user a support user (reads every customer, changes nothing),
    /// or with --off an ordinary one again.
    Support {
        #[arg(long)]
        user: uuid::Uuid,
        #[arg(long)]
        off: bool,
    },
    /// End every session of a user: their access tokens and refresh tokens
    /// stop working now; signing in again works.
    SignOut {
        #[arg(long)]
        user: uuid::Uuid,
    },
}

#[derive(Subcommand)]
enum MailCommand {
    /// Print the mail outbox, oldest first.
    List {
        /// Only mail to this address.
        #[arg(long)]
        to: Option<String>,
    },
}

#[derive(Subcommand)]
enum OrgCommand {
    /// Create an organisation.
    Create {
        #[arg(long)]
        name: String,
        /// A sandbox organisation: its keys start sbk_test_ and its time
        /// can be moved forward (docs/sandbox.md).
        #[arg(long)]
        sandbox: bool,
    },
    /// List the organisations.
    List,
    /// Print the organisation's settings (docs/operating.md: each one's
    /// meaning, default and bounds).
    Show {
        #[arg(long)]
        org: uuid::Uuid,
    },
    /// Change settings of the organisation, all or none, e.g.
    /// `leases.perHolder=5 reports.queuedAtMost=50`; prints them all.
    Set {
        #[arg(long)]
        org: uuid::Uuid,
        /// NAME=VALUE (see `admin org show`)
        #[arg(required = true)]
        settings: Vec<String>,
    },
    /// Print which payment providers the organisation collects with (both
    /// unless disabled), after enabling or disabling any.
    Providers {
        #[arg(long)]
        org: uuid::Uuid,
        /// PROVIDER_1 or PROVIDER_2 (repeatable)
        #[arg(long, value_parser = provider)]
        enable: Vec<ProviderName>,
        /// PROVIDER_1 or PROVIDER_2 (repeatable)
        #[arg(long, value_parser = provider)]
        disable: Vec<ProviderName>,
    },
}

fn provider(s: &str) -> Result<ProviderName, String> {
    ProviderName::parse(s).ok_or_else(|| format!("unknown payment provider {s:?}: PROVIDER_1 or PROVIDER_2"))
}

#[derive(Subcommand)]
enum KeyCommand {
    /// Issue a key; its secret is printed once.
    Create {
        #[arg(long)]
        org: uuid::Uuid,
        /// Revision to pin (default: the current one).
        #[arg(long)]
        revision: Option<String>,
        /// The key may only read.
        #[arg(long)]
        read_only: bool,
    },
    /// List an organisation's keys (never their secrets).
    List {
        #[arg(long)]
        org: uuid::Uuid,
    },
    /// Revoke a key; servers stop accepting it within seconds.
    Revoke {
        #[arg(long)]
        key: uuid::Uuid,
    },
    /// Pin a key to a revision.
    Pin {
        #[arg(long)]
        key: uuid::Uuid,
        #[arg(long)]
        revision: String,
    },
}

/// Runs the command line. A failure prints one line (the error and its
/// causes), never a backtrace, and exits 1.
pub fn main() -> std::process::ExitCode {
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    match runtime.block_on(run()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> anyhow::Result<()> {
    let mut cli = Cli::parse();
    // the file's settings, under the command line's and the environment's
    if let Some(file) = &cli.config {
        let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        cli = Cli::try_parse_from(crate::config_file::with_file(file, &Cli::command(), &args)?)?;
    }
    // only a server's spans are exported
    let telemetry = crate::telemetry::init(cli.log_format, matches!(cli.command, Command::Serve { .. }))?;
    let clock = Arc::new(Clock::default());
    if let Command::Config { command: ConfigCommand::Check { file } } = &cli.command {
        let settings = crate::config_file::check(file, &Cli::command())?;
        return print(serde_json::json!({"file": file, "settings": settings}));
    }
    if let Command::Listen { options } = cli.command {
        // a client of a server, anywhere: no database of its own
        let stop = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        return crate::listen::run(options, clock, |line| println!("{line}"), stop).await;
    }
    // the database's file itself, not a connection to it
    match &cli.command {
        Command::Admin { command: AdminCommand::Backup { to } } => return print(admin::backup::backup(&cli.database_url, to).await?),
        Command::Admin { command: AdminCommand::Restore { from, force } } => return print(admin::backup::restore(&cli.database_url, from, *force).await?),
        Command::Admin { command: AdminCommand::Secrets { command: admin::secrets::SecretsCommand::NewKey } } => return print(admin::secrets::new_key()),
        _ => {}
    }
    let sealing = crate::sealing::Sealing::new(cli.master_key.as_deref(), &cli.previous_master_keys)?;
    let store = Store::connect_with(&cli.database_url, cli.sqlite_synchronous).await?.sealed_with(Arc::new(sealing));
    match cli.command {
        Command::Serve { listen, demo, settings, .. } => {
            let served = serve(store, clock, listen, demo, settings).await;
            telemetry.shutdown().await;
            served
        }
        Command::Listen { .. } | Command::Config { .. } => unreachable!("handled above"),
        Command::Admin { command } => {
            let out = match command {
                AdminCommand::Org { command: OrgCommand::Create { name, sandbox } } => admin::org_create(&store, &clock, &name, sandbox).await?,
                AdminCommand::Org { command: OrgCommand::List } => admin::org_list(&store).await?,
                AdminCommand::Org { command: OrgCommand::Show { org } } => admin::org_show(&store, org).await?,
                AdminCommand::Org { command: OrgCommand::Set { org, settings } } => admin::org_set(&store, org, &settings).await?,
                AdminCommand::Org { command: OrgCommand::Providers { org, enable, disable } } => {
                    admin::org_providers(&store, &clock, org, &enable, &disable).await?
                }
                AdminCommand::Key { command } => match command {
                    KeyCommand::Create { org, revision, read_only } => admin::key_create(&store, &clock, org, revision.as_deref(), read_only).await?,
                    KeyCommand::List { org } => admin::key_list(&store, org).await?,
                    KeyCommand::Revoke { key } => admin::key_revoke(&store, &clock, key).await?,
                    KeyCommand::Pin { key, revision } => admin::key_pin(&store, key, &revision).await?,
                },
                AdminCommand::User { command: UserCommand::Support { user, off } } => admin::user_support(&store, user, !off).await?,
                AdminCommand::User { command: UserCommand::SignOut { user } } => admin::user_sign_out(&store, &clock, user).await?,
                AdminCommand::Mail { command: MailCommand::List { to } } => admin::mail_list(&store, to.as_deref()).await?,
                AdminCommand::Catalog { command: CatalogCommand::Import { org, file } } => admin::catalog_import(&store, org, &file).await?,
                AdminCommand::Webhook { command } => admin::webhooks::run(&store, &clock, command).await?,
                AdminCommand::Usage { command } => admin::usage::run(&store, &clock, command).await?,
                AdminCommand::Clock { command } => admin::clock::run(&store, &clock, command).await?,
                AdminCommand::Invoice { command } => admin::invoices::run(&store, &clock, command).await?,
                AdminCommand::Number { command } => admin::numbers::run(&store, &clock, command).await?,
                AdminCommand::Sim { command } => admin::sims::run(&store, &clock, command).await?,
                AdminCommand::Sandbox { command } => admin::sandbox::run(&store, &clock, command).await?,
                AdminCommand::Secrets { command } => admin::secrets::run(&store, command).await?,
                AdminCommand::Backup { .. } | AdminCommand::Restore { .. } => unreachable!("handled above"),
            };
            println!("{}", serde_json::to_string_pretty(&out)?);
            store.close().await;
            Ok(())
        }
    }
}

async fn serve(store: Store, clock: Arc<Clock>, listen: SocketAddr, with_demo: bool, settings: Settings) -> anyhow::Result<()> {
    let public_url = settings.public_url.clone();
    let running = server::start(store, clock, listen, settings).await?;
    let addr = running.local_addr();
    // seeded once listening: the pages of the demo's payment links are
    // where this server listens (unless the operator says where payers
    // reach it), and nobody has the demo's key before it is printed
    let public_url = public_url.unwrap_or_else(|| format!("http://{addr}"));
    let demo_key = if with_demo { demo::seed(&running.store, &running.clock, &public_url).await? } else { None };
    match crate::startup_pages::release() {
        Ok(bytes) => tracing::debug!(bytes, "released the pages only start-up used"),
        Err(e) => tracing::warn!(error = %e, "could not release the pages only start-up used"),
    }
    tracing::info!(%addr, "serving /api/v2");
    match demo_key {
        Some(key) => {
            println!("Demo organisation created. API key (shown once): {key}");
            println!("Try: curl -s -H 'X-Api-Key: {key}' http://{addr}/api/v2/customers");
        }
        None if with_demo => println!("The database already has data; no demo data was added."),
        None => {}
    }
    shutdown_signal().await;
    tracing::info!("shutting down");
    running.close().await
}

/// SIGINT or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM handler");
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    ctrl_c.await.ok();
}

/// Prints a command's JSON.
fn print(out: serde_json::Value) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}
