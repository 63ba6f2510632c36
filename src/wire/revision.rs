//! The published revisions of the API: their dates, names, support ends
//! and documents (the list itself is generated from `spec/`).

use super::REVISIONS;

/// One published revision of the API.
#[derive(Debug)]
pub struct Revision {
    /// `2026-08-21.auk`: the only form accepted in `Api-Revision`.
    pub name: &'static str,
    /// `2026.8.21`: how dropshot routes it.
    pub version: semver::Version,
    /// Last day of support (ISO date), when announced.
    pub supported_until: Option<&'static str>,
}

impl Revision {
    pub fn all() -> &'static [Revision] {
        &REVISIONS
    }

    pub fn current() -> &'static Revision {
        REVISIONS.last().expect("at least one revision")
    }

    pub fn by_name(name: &str) -> Option<&'static Revision> {
        REVISIONS.iter().find(|r| r.name == name)
    }

    /// Supported on `today`: no end announced, or `today` not past it.
    pub fn supported_on(&self, today: chrono::NaiveDate) -> bool {
        match self.supported_until.and_then(|d| d.parse::<chrono::NaiveDate>().ok()) {
            Some(until) => today <= until,
            None => true,
        }
    }

    /// The oldest revision still supported on `today`.
    pub fn oldest_supported(today: chrono::NaiveDate) -> &'static Revision {
        REVISIONS.iter().find(|r| r.supported_on(today)).unwrap_or_else(Revision::current)
    }

    /// This revision if still supported, else the oldest that is.
    pub fn or_oldest_supported(&'static self, today: chrono::NaiveDate) -> &'static Revision {
        if self.supported_on(today) { self } else { Revision::oldest_supported(today) }
    }

    /// The published OpenAPI document of this revision.
    pub fn document(&self) -> &'static str {
        let i = REVISIONS.iter().position(|r| r.name == self.name).expect("known revision");
        super::DOCUMENTS[i]
    }
}
