//! Recording usage the network reports. Each record counts once (a record
//! sent again changes nothing), in the period of when it happened: against
//! the offering's included allowance first, then the packages valid then,
//! oldest first; a call abroad takes its cost from the calling credit of
//! packages for the country called, and what they cannot pay is charged.
//! Reaching 80% and 100% of an included allowance records
//! `subscription.quotaNotification`, each once per period, in the
//! transaction that records the usage.

use super::{Included, Package, PackageKind, packages, period_day, period_of, to_wire};
use crate::domain::Caller;
use crate::domain::catalog::Offerings;
use crate::domain::subscription_addons::lifecycle as addon_lifecycle;
use crate::domain::subscriptions::{render::shown, scheduled};
use crate::error::{Error, InternalCode, Result};
use crate::events::{self, Event};
use crate::store::{Amounts, IdOrRef, Store, Tx, UsageKind, UsageRecord};
use crate::wire::latest as wire;
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// The quota thresholds of an included allowance, in percent.
const THRESHOLDS: [i64; 2] = [80, 100];

/// The amount of `kind` in `a`.
fn of(a: &Amounts, kind: UsageKind) -> i64 {
    let mut a = *a;
    *of_mut(&mut a, kind)
}

fn of_mut(a: &mut Amounts, kind: UsageKind) -> &mut i64 {
    match kind {
        UsageKind::Data => &mut a.data_kb,
        UsageKind::Voice => &mut a.voice_seconds,
        UsageKind::Sms => &mut a.sms,
        UsageKind::VoiceIld => &mut a.ild_seconds,
    }
}

fn included_of(i: &Included, kind: UsageKind) -> Option<i64> {
    match kind {
        UsageKind::Data => i.data_kb,
        UsageKind::Voice => i.voice_seconds,
        UsageKind::Sms => i.sms,
        UsageKind::VoiceIld => None,
    }
}

/// Records `record` of subscription `id` of `org`; false when it was
/// recorded already.
pub async fn record(store: &Store, org: Uuid, id: Uuid, record: &UsageRecord, now: DateTime<Utc>) -> Result<bool> {
    if record.quantity < 0 || record.charge_minor < 0 {
        return Err(Error::invalid("quantity", "out_of_range", "usage is never negative"));
    }
    let caller = Caller::system(store, org, now);
    let row = store.subscription(org, &IdOrRef::Id(id)).await?.ok_or_else(|| Error::not_found(InternalCode::SubscriptionNotFound, "subscription"))?;
    let row = scheduled::apply_if_due(&caller, row).await?;
    if row.life.activated_at.is_none() {
        return Err(Error::invalid("subscriptionId", "not_activated", "a subscription has usage only once it has been activated"));
    }
    let (start, _) = period_of(period_day(&row), record.occurred_at.date_naive());
    let offering = store.offering(org, row.offering_id).await?.ok_or_else(|| Error::Internal(format!("offering {} vanished", row.offering_id)))?;
    let included = Included::of(&offering);

    let mut tx = store.begin().await?;
    if !Store::insert_usage_record(&mut tx, org, row.id, record, start, now).await? {
        return Ok(false);
    }
    if addon_lifecycle::first_use(store, &mut tx, org, &row, record.occurred_at, now).await? {
        addon_lifecycle::tell(&caller, &mut tx, &row, record.occurred_at).await?;
    }
    let mut add = Amounts::default();
    *of_mut(&mut add, record.kind) = record.quantity;
    let mut period = Store::add_period_usage(&mut tx, org, row.id, start, add, now).await?;
    let mut packages = packages(store, Some(&mut tx), org, &row).await?;
    let valid: Vec<&mut Package> = packages.iter_mut().filter(|p| p.valid_at(record.occurred_at)).collect();
    if record.kind == UsageKind::VoiceIld {
        let unpaid = pay_call(&mut tx, org, row.id, record, valid).await?;
        if unpaid > 0 {
            period = Store::add_period_usage(&mut tx, org, row.id, start, Amounts { ild_minor: unpaid, ..Amounts::default() }, now).await?;
            // what is charged is billed on the day's invoice
            crate::domain::invoices::billed::usage(&caller, &row, unpaid).await?.write(&mut tx, &caller, now).await?;
        }
    } else {
        let before = of(&period.amounts, record.kind) - record.quantity;
        let room = (included_of(&included, record.kind).unwrap_or(0) - before).max(0);
        draw(&mut tx, org, row.id, record.kind, record.quantity - record.quantity.min(room), valid).await?;
    }

    let mut reached = vec![];
    for (allowance, kind) in [
        (wire::UsageAllowanceType::Data, UsageKind::Data),
        (wire::UsageAllowanceType::Voice, UsageKind::Voice),
        (wire::UsageAllowanceType::Sms, UsageKind::Sms),
    ] {
        let Some(inc) = included_of(&included, kind).filter(|i| *i > 0) else { continue };
        let used = of(&period.amounts, kind);
        for t in THRESHOLDS {
            let notice = format!("{kind}:{t}", kind = kind.as_str());
            if used * 100 >= inc * t && !period.notices.contains(&notice) {
                period.notices.push(notice);
                reached.push((allowance, t));
            }
        }
    }
    if !reached.is_empty() {
        Store::set_usage_notices(&mut tx, row.id, start, &period.notices).await?;
        // (read only when it tells: most records reach no threshold)
        let subscription = shown(&caller, &mut Offerings::default(), &row).await?;
        let usage = to_wire(&row, &included, start, &period, &packages, now);
        for (allowance, t) in reached {
            let data = wire::QuotaNotification { subscription: subscription.clone(), allowance, threshold_percent: t, usage: usage.clone() };
            events::record(&mut tx, org, now, &Event::SubscriptionQuotaNotification(data)).await?;
        }
    }
    tx.commit().await?;
    Ok(true)
}

/// Draws `rest` of `kind` from the packages' allowances, oldest first.
async fn draw(tx: &mut Tx, org: Uuid, subscription: Uuid, kind: UsageKind, mut rest: i64, packages: Vec<&mut Package>) -> Result<()> {
    for p in packages {
        let PackageKind::Allowances(inc) = &p.kind else { continue };
        let Some(inc) = included_of(inc, kind) else { continue };
        let give = rest.min((inc - of(&p.used, kind)).max(0));
        if give > 0 {
            let mut add = Amounts::default();
            *of_mut(&mut add, kind) = give;
            Store::add_package_usage(tx, org, subscription, p.addon, add).await?;
            *of_mut(&mut p.used, kind) += give;
            rest -= give;
        }
        if rest == 0 {
            break;
        }
    }
    Ok(())
}

/// Pays a call abroad from the credit of packages for its country, oldest
/// first; what is left unpaid.
async fn pay_call(tx: &mut Tx, org: Uuid, subscription: Uuid, record: &UsageRecord, packages: Vec<&mut Package>) -> Result<i64> {
    let mut rest = record.charge_minor;
    for p in packages {
        let PackageKind::Credit { countries, credit_minor } = &p.kind else { continue };
        if !record.country.as_ref().is_some_and(|c| countries.contains(c)) {
            continue;
        }
        let give = rest.min((credit_minor - p.used.ild_minor).max(0));
        if give > 0 {
            let add = Amounts { ild_seconds: record.quantity, ild_minor: give, ..Amounts::default() };
            Store::add_package_usage(tx, org, subscription, p.addon, add).await?;
            p.used.ild_seconds += add.ild_seconds;
            p.used.ild_minor += give;
            rest -= give;
        }
        if rest == 0 {
            break;
        }
    }
    Ok(rest)
}
