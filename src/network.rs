//! The mobile network: what activates, bars, swaps and ends SIMs. One
//! `Network` trait, and the sandbox that stands in for a real network (a
//! real integration implements the trait; handlers never see which).
//!
//! The sandbox's outcomes follow documented test values, as a payment
//! sandbox's test cards do: the numbers and ICCIDs in `REFUSED` are
//! refused, everything else is accepted; activation completes after the
//! configured delay (immediately by default). Its usage feed reports what
//! it is told to (`Sandbox::report`: the tests and the demo).

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};

/// A SIM as the network knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sim {
    pub iccid: String,
    /// for an eSIM: the code a device scans to download its profile
    pub activation_code: Option<String>,
}

/// How the network took an activation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Activation {
    /// active now
    Done,
    /// accepted; active at the given time (the subscription shows
    /// `pendingStatus` ACTIVATED until then)
    At(DateTime<Utc>),
}

/// Usage of one SIM, as the network's feed reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimUsage {
    pub iccid: String,
    pub msisdn: String,
    pub record: crate::store::UsageRecord,
}

/// Where an eSIM profile is, as the network reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EsimStatus {
    Released,
    Downloaded,
    Installed,
    Enabled,
    Disabled,
    Deleted,
}

/// The network refused: why, in words for the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

/// What Switchboard asks of the mobile network.
#[async_trait]
pub trait Network: Send + Sync + std::fmt::Debug {
    /// Puts `msisdn` in service on `sim`, at `now`.
    async fn activate(&self, msisdn: &str, sim: &Sim, now: DateTime<Utc>) -> Result<Activation, Refused>;
    /// Issues a new eSIM profile for `msisdn`: on the inventory's ICCID
    /// `iccid` when given, else on one the network picks.
    async fn issue_esim(&self, msisdn: &str, iccid: Option<&str>) -> Result<Sim, Refused>;
    /// Where the eSIM profile `iccid` is now (None: the network knows no
    /// such profile).
    async fn esim_status(&self, iccid: &str) -> Result<Option<EsimStatus>, Refused>;
    /// Turns service of `msisdn` off (pause, suspension, block) or on again.
    async fn set_service(&self, msisdn: &str, on: bool) -> Result<(), Refused>;
    /// Moves `msisdn` from `old` to `new`; `old` is blocked for good.
    async fn swap_sim(&self, msisdn: &str, old: Option<&Sim>, new: &Sim) -> Result<(), Refused>;
    /// Moves the line on `from` (its SIM and service) to the number `to`,
    /// brought by a port-in; asked again once moved, it changes nothing.
    async fn change_number(&self, from: &str, to: &str) -> Result<(), Refused>;
    /// Ends service of `msisdn` for good at `at` (now, or a later date)
    /// and releases its SIM then.
    async fn end_service(&self, msisdn: &str, at: DateTime<Utc>) -> Result<(), Refused>;
    /// Withdraws an end of service scheduled for a later date.
    async fn keep_service(&self, msisdn: &str) -> Result<(), Refused>;
    /// The usage feed: up to `limit` records after position `after`, each
    /// with its position. A record may come again (after a restart, or to
    /// another instance): recording is idempotent by its id.
    async fn usage(&self, after: u64, limit: usize) -> Result<Vec<(u64, SimUsage)>, Refused>;
    /// The name its usage feed's position is kept under: one feed, one
    /// name, whichever instance reads it.
    fn usage_feed(&self) -> String;
}

/// The test values the sandbox refuses: activating, or swapping to, one of
/// these numbers or ICCIDs answers 409 `network_refused`. (The documents
/// and docs/subscriptions.md list the same values.)
pub const REFUSED: &[&str] = &["+46700000666", "89460000000000006668"];

/// The built-in network.
#[derive(Debug, Clone)]
pub struct Sandbox {
    /// how long an activation takes; zero: at once
    pub activation_delay: Duration,
    /// usage reported, oldest first (position = index + 1)
    feed: std::sync::Arc<std::sync::Mutex<Vec<SimUsage>>>,
    /// its feed's name: the feed lives in this process, so each sandbox's
    /// is its own (a restart starts a new one, read from its start)
    feed_name: std::sync::Arc<str>,
    /// the eSIM profiles it issued: where each is, and the profile each
    /// number is on (kept in this process, as the feed is)
    profiles: std::sync::Arc<std::sync::Mutex<Profiles>>,
}

/// The sandbox's eSIM profiles. A device is taken to download, install and
/// enable a profile as soon as its line is activated; service off disables
/// it; a swap or the end of service deletes it.
#[derive(Debug, Default)]
struct Profiles {
    status: std::collections::HashMap<String, EsimStatus>,
    /// msisdn -> the ICCID of its profile
    on: std::collections::HashMap<String, String>,
}

impl Profiles {
    fn set_number(&mut self, msisdn: &str, status: EsimStatus) {
        if let Some(iccid) = self.on.get(msisdn) {
            self.status.insert(iccid.clone(), status);
        }
    }
}

impl Default for Sandbox {
    fn default() -> Sandbox {
        Sandbox::new(Duration::zero())
    }
}

impl Sandbox {
    pub fn new(activation_delay: Duration) -> Sandbox {
        let feed_name = format!("sandbox.usage.{}", uuid::Uuid::now_v7()).into();
        Sandbox { activation_delay, feed: Default::default(), feed_name, profiles: Default::default() }
    }

    /// Puts `usage` on the usage feed.
    pub fn report(&self, usage: SimUsage) {
        self.feed.lock().expect("feed lock").push(usage);
    }

    fn profiles(&self) -> std::sync::MutexGuard<'_, Profiles> {
        self.profiles.lock().expect("profiles lock")
    }

    fn check(&self, values: &[&str]) -> Result<(), Refused> {
        match values.iter().find(|v| REFUSED.contains(v)) {
            Some(v) => Err(Refused(format!("The network refused {v} (a sandbox test value)."))),
            None => Ok(()),
        }
    }
}

#[async_trait]
impl Network for Sandbox {
    async fn activate(&self, msisdn: &str, sim: &Sim, now: DateTime<Utc>) -> Result<Activation, Refused> {
        self.check(&[msisdn, &sim.iccid])?;
        if sim.activation_code.is_some() {
            let mut profiles = self.profiles();
            profiles.on.insert(msisdn.to_string(), sim.iccid.clone());
            profiles.status.insert(sim.iccid.clone(), EsimStatus::Enabled);
        }
        Ok(if self.activation_delay > Duration::zero() { Activation::At(now + self.activation_delay) } else { Activation::Done })
    }

    async fn issue_esim(&self, msisdn: &str, iccid: Option<&str>) -> Result<Sim, Refused> {
        self.check(&[msisdn])?;
        if let Some(named) = iccid {
            self.check(&[named])?;
        }
        let iccid = iccid.map_or_else(|| new_iccid().to_string(), str::to_string);
        let activation_code = format!("LPA:1$smdp.sandbox.switchboard.invalid${}", uuid::Uuid::new_v4().simple().to_string().to_uppercase());
        self.profiles().status.insert(iccid.clone(), EsimStatus::Released);
        Ok(Sim { iccid, activation_code: Some(activation_code) })
    }

    async fn esim_status(&self, iccid: &str) -> Result<Option<EsimStatus>, Refused> {
        Ok(self.profiles().status.get(iccid).copied())
    }

    async fn set_service(&self, msisdn: &str, on: bool) -> Result<(), Refused> {
        self.profiles().set_number(msisdn, if on { EsimStatus::Enabled } else { EsimStatus::Disabled });
        Ok(())
    }

    async fn swap_sim(&self, msisdn: &str, _old: Option<&Sim>, new: &Sim) -> Result<(), Refused> {
        self.check(&[msisdn, &new.iccid])?;
        let mut profiles = self.profiles();
        profiles.set_number(msisdn, EsimStatus::Deleted);
        profiles.on.remove(msisdn);
        if new.activation_code.is_some() {
            profiles.on.insert(msisdn.to_string(), new.iccid.clone());
            profiles.status.insert(new.iccid.clone(), EsimStatus::Enabled);
        }
        Ok(())
    }

    async fn change_number(&self, from: &str, to: &str) -> Result<(), Refused> {
        self.check(&[to])?;
        let mut profiles = self.profiles();
        if let Some(iccid) = profiles.on.remove(from) {
            profiles.on.insert(to.to_string(), iccid);
        }
        Ok(())
    }

    async fn end_service(&self, msisdn: &str, _at: DateTime<Utc>) -> Result<(), Refused> {
        let mut profiles = self.profiles();
        profiles.set_number(msisdn, EsimStatus::Deleted);
        profiles.on.remove(msisdn);
        Ok(())
    }

    async fn keep_service(&self, _msisdn: &str) -> Result<(), Refused> {
        Ok(())
    }

    async fn usage(&self, after: u64, limit: usize) -> Result<Vec<(u64, SimUsage)>, Refused> {
        let feed = self.feed.lock().expect("feed lock");
        Ok(feed.iter().enumerate().map(|(i, u)| (i as u64 + 1, u.clone())).skip(after as usize).take(limit).collect())
    }

    fn usage_feed(&self) -> String {
        self.feed_name.to_string()
    }
}

/// A new ICCID, as a network issues one for an eSIM profile: 89, the
/// country code 46, 15 random digits and the check digit.
pub fn new_iccid() -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    let mut body = String::from("8946");
    for _ in 0..14 {
        body.push(char::from(b'0' + rng.random_range(0..10u8)));
    }
    body.push(luhn::checksum(body.as_bytes()) as char);
    body
}
