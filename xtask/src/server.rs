//! The servers the xtask runs: a child process on a port of its own,
//! stopped on drop, and `switchboard serve` on top of it (reading the API
//! key that `--demo` prints).

use anyhow::{Context, Result, bail};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free port: bind, read it, release it for the server.
pub(crate) fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A server process listening on 127.0.0.1:`port`; killed on drop.
pub(crate) struct Process {
    child: Child,
    pub(crate) port: u16,
}

impl Process {
    /// Spawns `cmd` (its stdout already arranged) and waits until it listens.
    pub(crate) fn spawn(cmd: &mut Command, port: u16) -> Result<Process> {
        let child = cmd.spawn().with_context(|| format!("starting {:?}", cmd.get_program()))?;
        Ok(Process { child, port })
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `127.0.0.1:port`, as a client connects to it.
    pub(crate) fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Polls the port, so a slow start is not a failure; fails at once if
    /// the process has exited.
    pub(crate) fn wait_listening(&mut self, what: &str) -> Result<()> {
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if let Some(status) = self.child.try_wait()? {
                bail!("{what} exited with {status} before listening on port {}", self.port);
            }
            if Instant::now() > deadline {
                bail!("{what} did not listen on port {}", self.port);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// SIGKILL, as a crash: no shutdown code runs.
    pub(crate) fn kill(&mut self) -> Result<()> {
        self.child.kill()?;
        self.child.wait()?;
        Ok(())
    }

    /// SIGTERM, and SIGKILL if it has not exited within ten seconds.
    pub(crate) fn stop(&mut self) -> Result<()> {
        if self.child.try_wait()?.is_some() {
            return Ok(());
        }
        let pid = libc::pid_t::try_from(self.child.id())?;
        // SAFETY: kill(2) with a pid this process spawned and has not reaped
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait()?.is_none() {
            if Instant::now() > deadline {
                return self.kill();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How to start `switchboard serve`.
pub(crate) struct Launch<'a> {
    pub(crate) binary: &'a Path,
    pub(crate) database_url: String,
    pub(crate) port: u16,
    /// `--demo`: on an empty database, create the demo organisation and key
    pub(crate) demo: bool,
    /// for the per-key and both login rate limits: high, so that load is
    /// never refused
    pub(crate) rate_limit: u64,
    /// more `serve` arguments
    pub(crate) args: Vec<String>,
    /// the server's stderr (its log) goes here
    pub(crate) log: PathBuf,
}

impl Launch<'_> {
    /// `serve --demo` on a fresh SQLite file in `work`, logging there.
    pub(crate) fn demo_sqlite<'a>(binary: &'a Path, work: &Path, rate_limit: u64) -> Result<Launch<'a>> {
        Ok(Launch {
            binary,
            database_url: format!("sqlite://{}?mode=rwc", work.join("switchboard.db").display()),
            port: free_port()?,
            demo: true,
            rate_limit,
            args: vec![],
            log: work.join("server.log"),
        })
    }
}

impl Launch<'_> {
    /// Runs `serve --demo` once, for its schema, demo organisation and key,
    /// and stops it (the launch then starts without `--demo`): the key.
    pub(crate) fn demo_once(&mut self) -> Result<String> {
        self.demo = true;
        let mut demo = Switchboard::start(self)?;
        let key = demo.demo_key()?.to_string();
        demo.process.stop()?;
        self.demo = false;
        Ok(key)
    }
}

/// A running `switchboard serve`.
pub(crate) struct Switchboard {
    pub(crate) process: Process,
    /// the key `--demo` printed when it created the demo organisation
    pub(crate) key: Option<String>,
}

impl Switchboard {
    pub(crate) fn start(l: &Launch) -> Result<Switchboard> {
        let limit = l.rate_limit.to_string();
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&l.log)?;
        let mut cmd = Command::new(l.binary);
        cmd.arg("--database-url")
            .arg(&l.database_url)
            .args(["serve", "--listen", &format!("127.0.0.1:{}", l.port)])
            .args(["--rate-limit", &limit, "--login-rate-limit-address", &limit, "--login-rate-limit-email", &limit])
            // report files beside the log, not in the working directory
            .arg("--data-dir")
            .arg(l.log.with_extension("files"))
            // schemathesis sends made-up keys and codes from one address
            // among its valid requests: no lockout for that
            .args(["--auth-failures-per-minute", &limit, "--login-failures-per-day", "1000000"])
            .args(&l.args)
            .args(l.demo.then_some("--demo"))
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log));
        let mut process = Process::spawn(&mut cmd, l.port)?;
        let stdout = process.child.stdout.take().context("server stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let key = if l.demo {
            // `--demo` prints the key once the listener is bound, or says the
            // database already had data; nothing is printed before either
            let key = lines.by_ref().map_while(Result::ok).take(1).find_map(|l| l.split_whitespace().find(|w| w.starts_with("sbk_")).map(str::to_string));
            if key.is_none() {
                bail!("serve --demo printed no API key (was the database empty?); see {}", l.log.display());
            }
            key
        } else {
            None
        };
        // keep draining stdout so the server never blocks on a full pipe
        std::thread::spawn(move || lines.for_each(drop));
        process.wait_listening("switchboard serve").with_context(|| format!("see {}", l.log.display()))?;
        Ok(Switchboard { process, key })
    }

    pub(crate) fn base(&self) -> String {
        format!("http://{}", self.process.addr())
    }

    pub(crate) fn demo_key(&self) -> Result<&str> {
        self.key.as_deref().context("the server was not started with --demo")
    }
}
