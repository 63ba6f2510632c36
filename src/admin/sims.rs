//! `switchboard admin sim import`: loading an organisation's SIM
//! inventory from a CSV file.

use crate::clock::Clock;
use crate::domain::values::iccid;
use crate::kinds::SimType;
use crate::store::Store;
use anyhow::{Context as _, Result, bail};
use clap::Subcommand;
use serde_json::{Value, json};
use std::sync::Arc;
use uuid::Uuid;

#[derive(Subcommand)]
pub enum SimCommand {
    /// Add SIMs to the organisation's inventory, AVAILABLE, from a CSV file
    /// of `iccid,type` lines (type PSIM or ESIM), with or without the
    /// header row `iccid,type`. A SIM the organisation has already, or one
    /// any subscription has had, is left out. Nothing is added unless
    /// every line is valid.
    Import {
        #[arg(long)]
        org: Uuid,
        /// the CSV file
        file: std::path::PathBuf,
    },
}

/// The SIMs of a CSV file: `iccid,type` per line, after an optional header
/// row.
pub fn parse_csv(text: &str) -> Result<Vec<(String, SimType)>> {
    let mut sims = vec![];
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if i == 0 && cells.first().is_some_and(|c| c.eq_ignore_ascii_case("iccid")) {
            continue;
        }
        let at = format!("line {}", i + 1);
        let [number, kind] = cells[..] else { bail!("{at}: two cells are needed, iccid,type") };
        if !iccid::valid(number) {
            bail!("{at}: {number:?} is not an ICCID (19 or 20 digits starting with 89, the last a Luhn check digit)");
        }
        let kind = SimType::from_stored(kind).with_context(|| format!("{at}: type {kind:?} is neither PSIM nor ESIM"))?;
        sims.push((number.to_string(), kind));
    }
    if sims.is_empty() {
        bail!("the file names no SIM");
    }
    Ok(sims)
}

pub async fn run(store: &Store, clock: &Arc<Clock>, command: SimCommand) -> Result<Value> {
    match command {
        SimCommand::Import { org, file } => {
            if !store.organisation_exists(org).await? {
                bail!("no organisation {org}");
            }
            let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
            let sims = parse_csv(&text).with_context(|| file.display().to_string())?;
            let added = store.import_sims(org, &sims, store.organisation_time(org, clock.now()).await?).await?;
            Ok(json!({ "organisationId": org, "sims": sims.len(), "added": added }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_csv_file_names_valid_iccids_with_their_types() {
        let sims = parse_csv("iccid,type\n89460000000000012344,ESIM\n").unwrap();
        assert_eq!(sims, [("89460000000000012344".to_string(), SimType::Esim)]);
        assert_eq!(parse_csv("89460000000000012344, PSIM\n").unwrap().len(), 1, "the header row is optional");
        assert!(parse_csv("89460000000000012345,ESIM\n").is_err(), "a wrong check digit");
        assert!(parse_csv("89460000000000012344,USIM\n").is_err());
        assert!(parse_csv("iccid,type\n").is_err());
    }
}
