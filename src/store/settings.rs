//! Per-organisation settings (`switchboard admin org set|show`): each one's
//! name, column, default and bounds, in one table that the command, the
//! documents (docs/operating.md) and the code that reads them share.

use super::Store;
use crate::error::{Error, Result};
use sqlx::{AssertSqlSafe, Row};
use uuid::Uuid;

/// A setting of an organisation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// as `admin org set` names it
    pub name: &'static str,
    column: &'static str,
    pub default: i64,
    pub min: i64,
    pub max: i64,
    pub about: &'static str,
}

pub const DUNNING_SUSPEND_DAYS: Setting = Setting {
    name: "dunning.suspendAfterDays",
    column: "dunning_suspend_days",
    default: 14,
    min: 0,
    max: 365,
    about: "days after an invoice's due date that dunning suspends the customer's subscriptions (0: never)",
};
pub const DUNNING_UNCOLLECTIBLE_DAYS: Setting = Setting {
    name: "dunning.uncollectibleAfterDays",
    column: "dunning_uncollectible_days",
    default: 60,
    min: 0,
    max: 3650,
    about: "days after an invoice's due date that it is given up as UNCOLLECTIBLE (0: never)",
};
pub const LEASES_PER_HOLDER: Setting = Setting {
    name: "leases.perHolder",
    column: "lease_limit",
    default: 3,
    min: 1,
    max: 1000,
    about: "live number leases one holder (a customer's user, or the API key alone) may have",
};
pub const LEASED_NUMBERS_PER_HOLDER: Setting = Setting {
    name: "leases.numbersPerHolder",
    column: "leased_numbers_limit",
    default: 30,
    min: 1,
    max: 10_000,
    about: "numbers one holder's live leases may hold together",
};
pub const REPORTS_QUEUED: Setting = Setting {
    name: "reports.queuedAtMost",
    column: "report_queue_limit",
    default: 20,
    min: 1,
    max: 1000,
    about: "report runs the organisation may have QUEUED at once",
};

/// Every setting, in the order `admin org show` lists them.
pub const SETTINGS: [Setting; 5] = [DUNNING_SUSPEND_DAYS, DUNNING_UNCOLLECTIBLE_DAYS, LEASES_PER_HOLDER, LEASED_NUMBERS_PER_HOLDER, REPORTS_QUEUED];

impl Setting {
    /// The setting called `name`.
    pub fn named(name: &str) -> Option<Setting> {
        SETTINGS.iter().copied().find(|s| s.name == name)
    }

    /// `text` as a value of this setting (an integer within its bounds).
    pub fn value(&self, text: &str) -> std::result::Result<i64, String> {
        let v: i64 = text.trim().parse().map_err(|_| format!("{}: {text:?} is not a whole number", self.name))?;
        if !(self.min..=self.max).contains(&v) {
            return Err(format!("{}: {v} is outside {}..={}", self.name, self.min, self.max));
        }
        Ok(v)
    }
}

impl Store {
    /// `org`'s value of `setting`.
    pub async fn setting(&self, org: Uuid, setting: Setting) -> Result<i64> {
        let [value] = self.settings_of(org, [setting]).await?;
        Ok(value)
    }

    /// `org`'s values of `settings`, read at once.
    pub async fn settings_of<const N: usize>(&self, org: Uuid, settings: [Setting; N]) -> Result<[i64; N]> {
        self.settings_if_any(org, settings).await?.ok_or_else(|| Error::Internal(format!("no organisation {org}")))
    }

    /// Like `settings_of`; None for no organisation (what `admin org show`
    /// tells its operator).
    async fn settings_if_any<const N: usize>(&self, org: Uuid, settings: [Setting; N]) -> Result<Option<[i64; N]>> {
        let columns: Vec<&str> = settings.iter().map(|s| s.column).collect();
        let sql = format!("SELECT {} FROM organisations WHERE id = $1", columns.join(", "));
        let Some(row) = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).fetch_optional(&self.pool).await? else { return Ok(None) };
        let mut values = [0; N];
        for (i, v) in values.iter_mut().enumerate() {
            *v = row.try_get::<i64, _>(i)?;
        }
        Ok(Some(values))
    }

    /// Every setting of `org` with its value; None for no organisation.
    pub async fn settings(&self, org: Uuid) -> Result<Option<Vec<(Setting, i64)>>> {
        Ok(self.settings_if_any(org, SETTINGS).await?.map(|values| SETTINGS.into_iter().zip(values).collect()))
    }

    /// Sets `values` of `org` in one transaction; whether it exists.
    pub async fn set_settings(&self, org: Uuid, values: &[(Setting, i64)]) -> Result<bool> {
        let mut tx = self.begin().await?;
        for (setting, value) in values {
            let sql = format!("UPDATE organisations SET {} = $1 WHERE id = $2", setting.column);
            let done = sqlx::query(AssertSqlSafe(sql)).bind(*value).bind(org.to_string()).execute(tx.conn().await?).await?;
            if done.rows_affected() == 0 {
                return Ok(false);
            }
        }
        tx.commit().await?;
        Ok(true)
    }
}
