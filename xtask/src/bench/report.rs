//! The printed result of `cargo xtask bench`: when, on what machine and by
//! which command it was measured, then one Markdown table row per scenario
//! (medians over the rounds), Switchboard's figures also as ratios to the
//! baseline measured in the same run, ready to paste into docs/performance.md.

use super::scenarios::Kind;
use crate::load::Figures;
use std::fmt::Write as _;
use std::time::Duration;

/// One scenario in one round.
#[derive(Debug, Clone, Copy)]
pub struct Measured {
    pub figures: Figures,
    /// the server's peak resident set during the scenario
    pub peak_rss_kib: u64,
}

pub struct Row {
    pub label: String,
    /// the database under it: ratios are to the baseline over the same one
    pub db: String,
    pub kind: Kind,
    pub rounds: Vec<Measured>,
}

/// The middle value (the mean of the two middle ones for an even count).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Medians over a row's rounds: (req/s, p50 s, p99 s, peak RSS KiB), and its errors in all.
struct Medians {
    rps: f64,
    p50: f64,
    p99: f64,
    rss_kib: f64,
    errors: u64,
}

impl Row {
    fn medians(&self) -> Medians {
        let of = |f: fn(&Measured) -> f64| median(self.rounds.iter().map(f).collect());
        Medians {
            rps: of(|m| m.figures.rps),
            p50: of(|m| m.figures.p50.as_secs_f64()),
            p99: of(|m| m.figures.p99.as_secs_f64()),
            rss_kib: of(|m| m.peak_rss_kib as f64),
            errors: self.rounds.iter().map(|m| m.figures.errors).sum(),
        }
    }
}

fn ms(seconds: f64) -> String {
    format!("{:.2} ms", seconds * 1000.0)
}

/// The lines above the table: date, machine, command, settings.
pub fn header(command: &str, settings: &str) -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, m)| m.trim().to_string()))
        .unwrap_or_else(|| "unknown CPU".into());
    let memory = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:").and_then(|r| r.trim().trim_end_matches("kB").trim().parse::<f64>().ok()))
        .map_or_else(String::new, |kib| format!(", {:.0} GiB memory", kib / 1024.0 / 1024.0));
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let date = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC");
    format!(
        "date:     {date}\nmachine:  {cores} cores (nproc), {model}{memory}; load generator, servers and databases on the same machine\n\
         command:  {command}\nsettings: {settings}\n"
    )
}

/// The table; ratios are Switchboard / the baseline over the same
/// database, scenario by scenario (`Kind::compared_with`; req/s: higher is
/// better; p99: lower is better).
pub fn table(rows: &[Row]) -> String {
    let medians: Vec<Medians> = rows.iter().map(Row::medians).collect();
    let base = |kind: Kind, db: &str| rows.iter().position(|r| r.kind == kind && r.db == db).map(|i| &medians[i]);
    let mut out =
        String::from("| scenario | req/s | p50 | p99 | peak RSS | errors | req/s vs baseline | p99 vs baseline |\n|---|--:|--:|--:|--:|--:|--:|--:|\n");
    for (row, m) in rows.iter().zip(&medians) {
        let (rps_ratio, p99_ratio) = match row.kind.compared_with().and_then(|k| base(k, &row.db)) {
            Some(b) => (format!("{:.2}×", m.rps / b.rps), format!("{:.2}×", m.p99 / b.p99)),
            None => ("".into(), "".into()),
        };
        let _ = writeln!(
            out,
            "| {} | {:.0} | {} | {} | {:.1} MiB | {} | {rps_ratio} | {p99_ratio} |",
            row.label,
            m.rps,
            ms(m.p50),
            ms(m.p99),
            m.rss_kib / 1024.0,
            m.errors
        );
    }
    out
}

/// A one-line progress report of a measurement.
pub fn progress(label: &str, m: &Measured) -> String {
    let f = &m.figures;
    format!(
        "{label}: {:.0} req/s, p50 {}, p99 {}, peak RSS {:.1} MiB{}",
        f.rps,
        ms(f.p50.as_secs_f64()),
        ms(f.p99.as_secs_f64()),
        m.peak_rss_kib as f64 / 1024.0,
        if f.errors > 0 { format!(", {} ERRORS", f.errors) } else { String::new() }
    )
}

/// Seconds, as the settings line shows them.
pub fn secs(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_median_is_the_middle_or_the_mean_of_the_two_middle_values() {
        assert_eq!(super::median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(super::median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
