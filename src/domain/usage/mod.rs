//! A subscription's usage per billing period: what was used of the data,
//! calls and text messages its offering includes, and of the allowances
//! and calling credit of its active add-on packages. Usage arrives from the
//! network (`record`); reads show it against the allowances.
//!
//! Periods are a month long and begin on the subscription's billing day
//! (its first activation's day of the month, or the month's last day when
//! it is shorter), whatever its price's billing cycle: a quarterly plan's
//! "10 GB" is 10 GB a month. Until its first activation a subscription's
//! periods begin on the day it was created, and its usage is zero.

pub mod record;

use super::cycles::{cycle_end, first_of_month};
use super::subscriptions::{self, scheduled};
use super::{Caller, customers};
use crate::error::{Error, Result};
use crate::states::subscription_addons::AddonStatus;
use crate::store::{Amounts, Cursor, OfferingRow, PeriodUsage, Store, SubscriptionFilter, SubscriptionRow, Tx, limit_or_default};
use crate::wire::latest as wire;
use crate::wire::latest::params::{SubscriptionUsageListQuery, SubscriptionUsageViewQuery};
use chrono::{DateTime, Datelike, Months, NaiveDate, Utc};
use uuid::Uuid;

/// The month-long period that holds `date`, for periods beginning on
/// `day` of the month: (its first day, the next period's first day).
pub fn period_of(day: u32, date: NaiveDate) -> (NaiveDate, NaiveDate) {
    let this_month = cycle_end(date, 0, day);
    let start = if this_month <= date { this_month } else { cycle_end(first_of_month(date) - Months::new(1), 0, day) };
    (start, cycle_end(start, 1, day))
}

/// The day of the month `s`'s periods begin on: its billing day; for a
/// one-time price (no billing cycles) the day of its first activation;
/// before that the day it was created.
pub fn period_day(s: &SubscriptionRow) -> u32 {
    s.life.billing_day.or(s.life.activated_at.map(|a| a.day())).unwrap_or(s.created_at.day())
}

/// What an offering's product includes each period, in the units usage
/// is kept in (kilobytes, seconds, messages); None: nothing included.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Included {
    pub data_kb: Option<i64>,
    pub voice_seconds: Option<i64>,
    pub sms: Option<i64>,
}

impl Included {
    pub fn of(offering: &OfferingRow) -> Included {
        let f = offering.product.features.as_ref();
        Included {
            data_kb: f.and_then(|f| f.data_mb).map(|mb| (mb * 1024.0).round() as i64),
            voice_seconds: f.and_then(|f| f.included_call_seconds),
            sms: f.and_then(|f| f.included_sms),
        }
    }

    fn any(&self) -> bool {
        self.data_kb.is_some() || self.voice_seconds.is_some() || self.sms.is_some()
    }
}

/// An active add-on's package: allowances, or credit for calls abroad.
pub struct Package {
    pub addon: Uuid,
    pub offering: OfferingRow,
    /// from its activation until its expiry
    pub valid_from: Option<DateTime<Utc>>,
    pub valid_until: Option<DateTime<Utc>>,
    pub kind: PackageKind,
    /// what it has given so far
    pub used: Amounts,
}

pub enum PackageKind {
    Allowances(Included),
    /// credit in minor units for calls to these countries
    Credit {
        countries: Vec<String>,
        credit_minor: i64,
    },
}

impl Package {
    pub fn valid_at(&self, at: DateTime<Utc>) -> bool {
        self.valid_from.is_none_or(|f| f <= at) && self.valid_until.is_none_or(|u| at < u)
    }
}

/// The packages of `s`: its ACTIVE add-ons that carry allowances or, with
/// countries and no allowance, calling credit (the offering's price in the
/// subscription's currency), oldest first; read in `tx` when recording.
pub async fn packages(store: &Store, tx: Option<&mut Tx>, org: Uuid, s: &SubscriptionRow) -> Result<Vec<Package>> {
    let mut tx = tx;
    let addons = store.subscription_addons(tx.as_deref_mut(), org, s.id).await?;
    let used = store.package_usage(tx, org, s.id).await?;
    let mut out = vec![];
    for a in addons.into_iter().filter(|a| a.status == AddonStatus::Active) {
        let offering = store.offering(org, a.offering_id).await?.ok_or_else(|| Error::Internal(format!("offering {} vanished", a.offering_id)))?;
        let included = Included::of(&offering);
        let features = offering.product.features.clone().unwrap_or_default();
        let kind = if included.any() {
            PackageKind::Allowances(included)
        } else if !features.countries.is_empty() {
            let price: wire::Price = serde_json::from_value(offering.offering.price.clone()).map_err(|e| Error::Internal(format!("stored price: {e}")))?;
            let credit_minor =
                if price.currency == s.terms.currency { price.net_price_minor } else { price.currency_options_minor.get(&s.terms.currency).copied() };
            PackageKind::Credit { countries: features.countries.clone(), credit_minor: credit_minor.unwrap_or(0) }
        } else {
            continue;
        };
        let used = used.get(&a.id).copied().unwrap_or_default();
        out.push(Package { addon: a.id, offering, valid_from: a.activated_at, valid_until: a.expires_at, kind, used });
    }
    Ok(out)
}

fn allowance(unit: wire::UsageUnit, used: i64, included: Option<i64>, per_unit: f64) -> wire::UsageAllowance {
    let shown = |n: i64| ((n as f64 / per_unit) * 1000.0).round() / 1000.0;
    wire::UsageAllowance { unit, used: shown(used), included: included.map(shown), remaining: included.map(|i| shown((i - used).max(0))) }
}

fn allowances(used: &Amounts, included: &Included) -> [wire::UsageAllowance; 3] {
    [
        allowance(wire::UsageUnit::Mb, used.data_kb, included.data_kb, 1024.0),
        allowance(wire::UsageUnit::Seconds, used.voice_seconds, included.voice_seconds, 1.0),
        allowance(wire::UsageUnit::Sms, used.sms, included.sms, 1.0),
    ]
}

/// `s`'s usage in the period beginning `start`, as recorded in `period`.
pub fn to_wire(
    s: &SubscriptionRow,
    included: &Included,
    start: NaiveDate,
    period: &PeriodUsage,
    packages: &[Package],
    now: DateTime<Utc>,
) -> wire::SubscriptionUsage {
    let [data, voice, sms] = allowances(&period.amounts, included);
    let mut shown = vec![];
    let mut credits = vec![];
    for p in packages.iter().filter(|p| p.valid_at(now)) {
        let (addon, offering_id, name) = (p.addon, p.offering.id, p.offering.offering.name.clone());
        match &p.kind {
            PackageKind::Allowances(inc) => {
                let [d, v, m] = allowances(&p.used, inc);
                shown.push(wire::UsagePackage {
                    subscription_addon_id: addon,
                    product_offering_id: offering_id,
                    name,
                    valid_until: p.valid_until,
                    data: inc.data_kb.map(|_| d),
                    voice: inc.voice_seconds.map(|_| v),
                    sms: inc.sms.map(|_| m),
                });
            }
            PackageKind::Credit { countries, credit_minor } => credits.push(wire::UsageVoiceIldPackage {
                subscription_addon_id: addon,
                product_offering_id: offering_id,
                name,
                countries: countries.clone(),
                currency: s.terms.currency.clone(),
                credit_minor: *credit_minor,
                balance_minor: (credit_minor - p.used.ild_minor).max(0),
                used_seconds: p.used.ild_seconds,
            }),
        }
    }
    wire::SubscriptionUsage {
        subscription_id: s.id,
        customer_id: s.customer_id,
        msisdn: s.msisdn.clone(),
        period_start: start,
        period_end: period_of(period_day(s), start).1,
        data,
        voice,
        sms,
        international_voice: wire::UsageInternationalVoice {
            used_seconds: period.amounts.ild_seconds,
            charged_minor: period.amounts.ild_minor,
            currency: s.terms.currency.clone(),
        },
        packages: shown,
        voice_ild_packages: credits,
        updated_at: period.updated_at,
    }
}

/// `s`'s usage in its period that holds `date`.
async fn usage_of(caller: &Caller, offerings: &mut OfferingRows, s: &SubscriptionRow, date: NaiveDate) -> Result<wire::SubscriptionUsage> {
    let (start, _) = period_of(period_day(s), date);
    let period = caller.store.period_usage(caller.org, s.id, start).await?.unwrap_or_default();
    let included = Included::of(offerings.get(caller, s.offering_id).await?);
    let packages = packages(&caller.store, None, caller.org, s).await?;
    Ok(to_wire(s, &included, start, &period, &packages, caller.now))
}

/// Offering rows read once per answer.
#[derive(Default)]
struct OfferingRows(std::collections::HashMap<Uuid, OfferingRow>);

impl OfferingRows {
    async fn get(&mut self, caller: &Caller, id: Uuid) -> Result<&OfferingRow> {
        if let std::collections::hash_map::Entry::Vacant(e) = self.0.entry(id) {
            let row = caller.store.offering(caller.org, id).await?.ok_or_else(|| Error::Internal(format!("offering {id} vanished")))?;
            e.insert(row);
        }
        Ok(&self.0[&id])
    }
}

/// The day a query names (default: today).
fn day(caller: &Caller, date: Option<&str>) -> Result<NaiveDate> {
    match date {
        None => Ok(caller.now.date_naive()),
        Some(d) => d.parse().map_err(|_| Error::invalid("date", "invalid_format", "must be a date: YYYY-MM-DD")),
    }
}

pub async fn view(caller: &Caller, key: &str, q: SubscriptionUsageViewQuery) -> Result<wire::SubscriptionUsage> {
    let date = day(caller, q.date.as_deref())?;
    let s = subscriptions::find(caller, key).await?;
    usage_of(caller, &mut OfferingRows::default(), &s, date).await
}

pub async fn list(caller: &Caller, q: SubscriptionUsageListQuery) -> Result<wire::SubscriptionUsageList> {
    // periods follow the billing day a due renewal or activation may set
    let date = day(caller, q.date.as_deref())?;
    scheduled::apply_all_due(caller).await?;
    let after = q.cursor.as_deref().map(Cursor::decode).transpose()?;
    let filter = SubscriptionFilter {
        customers: customers::find_all(caller, &q.customer_id).await?,
        visible_to: caller.viewer(),
        activated: true,
        ..SubscriptionFilter::default()
    };
    let page = caller.store.subscriptions(caller.org, &filter, after, limit_or_default(q.limit)).await?;
    let mut offerings = OfferingRows::default();
    let mut items = Vec::with_capacity(page.items.len());
    for s in &page.items {
        items.push(usage_of(caller, &mut offerings, s, date).await?);
    }
    Ok(wire::SubscriptionUsageList { items, pagination: wire::Pagination { next_cursor: page.next.map(Cursor::encode) } })
}

#[cfg(test)]
mod tests {
    use super::period_of;
    use chrono::NaiveDate;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn a_period_holds_its_date_and_ends_where_the_next_begins() {
        assert_eq!(period_of(31, d("2026-02-15")), (d("2026-01-31"), d("2026-02-28")));
        assert_eq!(period_of(31, d("2026-02-28")), (d("2026-02-28"), d("2026-03-31")));
        assert_eq!(period_of(15, d("2026-11-14")), (d("2026-10-15"), d("2026-11-15")));
        assert_eq!(period_of(15, d("2026-11-15")), (d("2026-11-15"), d("2026-12-15")));
        assert_eq!(period_of(30, d("2028-03-01")), (d("2028-02-29"), d("2028-03-30")));
        assert_eq!(period_of(1, d("2027-01-01")), (d("2027-01-01"), d("2027-02-01")));
    }
}
