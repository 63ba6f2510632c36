//! `switchboard admin number ...`: loading an organisation's number pool
//! (from a CSV file or a range) and listing it.

use crate::clock::Clock;
use crate::kinds::NumberType;
use crate::store::Store;
use anyhow::{Context as _, Result, bail};
use clap::Subcommand;
use serde_json::{Value, json};
use std::sync::Arc;
use uuid::Uuid;

/// The most numbers one range may name.
pub const MAX_RANGE: u64 = 1_000_000;

#[derive(Subcommand)]
pub enum NumberCommand {
    /// Add numbers to the organisation's pool, AVAILABLE: from a CSV file
    /// with the header row `msisdn,type` (type CELL, DATA, MBB or M2M;
    /// empty: CELL), or a range `--range +46701000000..+46701000999` of
    /// `--type` (CELL by default). A number already in the pool is left as
    /// it is; one in use at this operator (in another organisation's pool,
    /// or its live subscription's) is left out and listed as `inUse`.
    /// Nothing is added unless every number is valid.
    Import {
        #[arg(long)]
        org: Uuid,
        /// the CSV file
        #[arg(required_unless_present = "range", conflicts_with = "range")]
        file: Option<std::path::PathBuf>,
        /// FIRST..LAST, both E.164 of the same length, LAST not before FIRST
        #[arg(long)]
        range: Option<String>,
        /// the type of the range's numbers
        #[arg(long = "type", default_value = "CELL", requires = "range")]
        number_type: String,
    },
    /// Print the organisation's numbers, by number, with their state now
    /// (by its clock).
    List {
        #[arg(long)]
        org: Uuid,
        /// at most this many
        #[arg(long, default_value_t = 1000)]
        limit: i64,
        /// those after this number
        #[arg(long)]
        after: Option<String>,
    },
}

fn number_type(text: &str) -> Result<NumberType> {
    match text.trim() {
        "" => Ok(NumberType::Cell),
        t => NumberType::from_stored(t).with_context(|| format!("type {t:?} is none of CELL, DATA, MBB, M2M")),
    }
}

/// `text` if it is a valid E.164 number.
fn msisdn(text: &str) -> Result<String> {
    let text = text.trim();
    // written as the API writes it, `+` and digits only: phonenumber also
    // reads "+46 70 ..." and "+46-70-...", which would be kept as typed and
    // never match the number the API is given (found by the number_import
    // fuzz target)
    let e164 = text.strip_prefix('+').is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
    let valid = e164 && phonenumber::parse(None, text).map(|n| phonenumber::is_valid(&n)).unwrap_or(false);
    if !valid {
        bail!("{text:?} is not a valid E.164 number");
    }
    Ok(text.to_string())
}

/// The numbers of a CSV file: a header row `msisdn,type`, then a number
/// and its type per line.
pub fn parse_csv(text: &str) -> Result<Vec<(String, NumberType)>> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let header: Vec<String> = match lines.next() {
        Some((_, h)) => h.split(',').map(|c| c.trim().to_ascii_lowercase()).collect(),
        None => bail!("the file is empty"),
    };
    if header.first().map(String::as_str) != Some("msisdn") || header.len() > 2 || header.get(1).is_some_and(|c| c != "type") {
        bail!("line 1: the header row must be msisdn,type");
    }
    let mut numbers = vec![];
    for (i, line) in lines {
        let mut cells = line.split(',');
        let at = || format!("line {}", i + 1);
        let number = msisdn(cells.next().unwrap_or_default()).with_context(at)?;
        let kind = number_type(cells.next().unwrap_or_default()).with_context(at)?;
        if cells.next().is_some() {
            bail!("{}: more than two cells", at());
        }
        numbers.push((number, kind));
    }
    Ok(numbers)
}

/// The numbers of a range FIRST..LAST.
pub fn parse_range(range: &str, kind: NumberType) -> Result<Vec<(String, NumberType)>> {
    let (first, last) = range.split_once("..").context("--range must be FIRST..LAST")?;
    let (first, last) = (msisdn(first)?, msisdn(last)?);
    if first.len() != last.len() {
        bail!("--range: {first} and {last} differ in length");
    }
    let (a, b): (u64, u64) = (first[1..].parse()?, last[1..].parse()?);
    if b < a {
        bail!("--range: {last} is before {first}");
    }
    if b - a >= MAX_RANGE {
        bail!("--range names more than {MAX_RANGE} numbers");
    }
    let width = first.len() - 1;
    (a..=b).map(|n| msisdn(&format!("+{n:0width$}")).map(|m| (m, kind))).collect()
}

pub async fn run(store: &Store, clock: &Arc<Clock>, command: NumberCommand) -> Result<Value> {
    match command {
        NumberCommand::Import { org, file, range, number_type: kind } => {
            if !store.organisation_exists(org).await? {
                bail!("no organisation {org}");
            }
            let numbers = match (file, range) {
                (Some(path), _) => parse_csv(&std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?)
                    .with_context(|| path.display().to_string())?,
                (None, Some(range)) => parse_range(&range, number_type(&kind)?)?,
                (None, None) => bail!("give a FILE or --range"),
            };
            let imported = store.import_numbers(org, &numbers, store.organisation_time(org, clock.now()).await?).await?;
            // in use: another organisation's pool or live subscription has it
            Ok(json!({ "organisationId": org, "numbers": numbers.len(), "added": imported.added, "inUse": imported.in_use }))
        }
        NumberCommand::List { org, limit, after } => {
            let now = store.organisation_time(org, clock.now()).await?;
            let rows = store.pool_numbers(org, after.as_deref(), limit.clamp(1, 100_000)).await?;
            let shown: Vec<Value> = rows
                .iter()
                .map(
                    |n| json!({ "msisdn": n.msisdn, "type": n.number_type.stored(), "status": n.status_at(now).stored(), "subscriptionId": n.subscription_id }),
                )
                .collect();
            Ok(Value::Array(shown))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_names_every_number_from_first_to_last() {
        let numbers = parse_range("+46701000998..+46701001001", NumberType::Cell).unwrap();
        let shown: Vec<&str> = numbers.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(shown, ["+46701000998", "+46701000999", "+46701001000", "+46701001001"]);
        assert!(parse_range("+46701001001..+46701000998", NumberType::Cell).is_err());
        assert!(parse_range("+4670100..+46701000998", NumberType::Cell).is_err());
    }

    #[test]
    fn a_csv_file_needs_its_header_and_valid_numbers() {
        let numbers = parse_csv("msisdn,type\n+46701000001,M2M\n+46701000002,\n").unwrap();
        assert_eq!(numbers, [("+46701000001".to_string(), NumberType::M2m), ("+46701000002".to_string(), NumberType::Cell)]);
        assert!(parse_csv("+46701000001,CELL\n").is_err());
        assert!(parse_csv("msisdn,type\n+4670,CELL\n").is_err());
        assert!(parse_csv("msisdn,type\n+46701000001,VOICE\n").is_err());
        for spaced in ["+46 70 100 00 01", "+46-701000001", "+46(70)1000001"] {
            assert!(parse_csv(&format!("msisdn,type\n{spaced},CELL\n")).is_err(), "{spaced}");
        }
    }
}
