//! `serve --config switchboard.toml`: a file of `serve`'s settings, named
//! as its flags are (`rate-limit = 100`, `webhooks-allow-private = true`;
//! a table's keys join its name: `[webhooks] allow-private = true`). A
//! setting given as a flag or in its environment variable wins over the
//! file; the file wins over the default. Each value is checked by the
//! flag's own parser, so a file and a command line accept the same values,
//! and a bad one is one line naming its key.

use anyhow::{Context, anyhow, bail};
use std::ffi::OsString;
use std::path::Path;

/// One setting of the file: its flag and its value(s) as text. `None`
/// for a switch turned off (`demo = false`), which adds nothing.
struct Setting {
    key: String,
    flag: String,
    values: Option<Vec<String>>,
}

/// The command line a command runs with: `args` (the process's) with each
/// setting of `file` added that neither `args` nor the environment gives:
/// the global ones (`database-url`, `sqlite-synchronous`) for every
/// command, the others for `serve`. `command` is the whole CLI's
/// (`Cli::command()`).
pub fn with_file(file: &Path, command: &clap::Command, args: &[OsString]) -> anyhow::Result<Vec<OsString>> {
    let settings = read(file, command)?;
    let given = |flag: &str| args.iter().any(|a| a.to_str().is_some_and(|a| a == format!("--{flag}") || a.starts_with(&format!("--{flag}="))));
    let (mut global, mut serve) = (vec![], vec![]);
    for s in settings {
        let arg = serve_arg(command, &s.flag).expect("checked by read");
        let from_env = arg.get_env().is_some_and(|name| std::env::var_os(name).is_some());
        if given(&s.flag) || from_env {
            continue;
        }
        let is_global = command.get_arguments().any(|a| a.get_id() == arg.get_id());
        (if is_global { &mut global } else { &mut serve }).extend(s.as_args().into_iter().map(OsString::from));
    }
    let mut out: Vec<OsString> = args[..1].to_vec();
    out.extend(global);
    match args.iter().position(|a| a == "serve") {
        Some(at) => {
            out.extend(args[1..=at].iter().cloned());
            out.extend(serve);
            out.extend(args[at + 1..].iter().cloned());
        }
        None => out.extend(args[1..].iter().cloned()),
    }
    Ok(out)
}

/// Checks `file` as `serve` would read it; its settings' number.
pub fn check(file: &Path, command: &clap::Command) -> anyhow::Result<usize> {
    Ok(read(file, command)?.len())
}

impl Setting {
    fn as_args(&self) -> Vec<String> {
        match &self.values {
            None => vec![],
            Some(values) if values.is_empty() => vec![format!("--{}", self.flag)],
            Some(values) => values.iter().map(|v| format!("--{}={v}", self.flag)).collect(),
        }
    }
}

/// `serve`'s argument (or a global one) whose long flag is `flag`.
fn serve_arg<'a>(command: &'a clap::Command, flag: &str) -> Option<&'a clap::Arg> {
    let serve = command.find_subcommand("serve")?;
    serve.get_arguments().chain(command.get_arguments()).find(|a| a.get_long() == Some(flag) && !matches!(flag, "config" | "help" | "version"))
}

/// The file's settings, each checked by its flag's parser.
fn read(file: &Path, command: &clap::Command) -> anyhow::Result<Vec<Setting>> {
    let name = file.display();
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {name}"))?;
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let at = e.span().map(|s| format!(" (line {})", text[..s.start].matches('\n').count() + 1)).unwrap_or_default();
        anyhow!("{name}{at}: not TOML: {}", e.message().trim())
    })?;
    let mut settings = vec![];
    flatten(&table, "", &mut settings).map_err(|e| anyhow!("{name}: {e}"))?;
    for s in &settings {
        let arg = serve_arg(command, &s.flag)
            .ok_or_else(|| anyhow!("{name}: {}: no such setting (the settings are serve's flags: switchboard serve --help)", s.key))?;
        let switch = !arg.get_action().takes_values();
        match (&s.values, switch) {
            (Some(v), true) if !v.is_empty() => bail!("{name}: {}: must be true or false", s.key),
            (Some(v), false) if v.is_empty() => bail!("{name}: {}: needs a value", s.key),
            (None, false) => bail!("{name}: {}: needs a value, not false", s.key),
            _ => {}
        }
        // the flag's own parser, alone on a command line
        let mut line = vec!["switchboard".to_string(), "serve".to_string()];
        line.extend(s.as_args());
        if let Err(e) = command.clone().try_get_matches_from(line) {
            let why = e.to_string();
            let why = why.lines().next().unwrap_or_default().trim_start_matches("error: ");
            bail!("{name}: {}: {why}", s.key);
        }
    }
    Ok(settings)
}

/// The settings of `table`, a table's keys prefixed by its name.
fn flatten(table: &toml::Table, prefix: &str, out: &mut Vec<Setting>) -> Result<(), String> {
    for (key, value) in table {
        let key = format!("{prefix}{key}");
        let flag = key.replace('_', "-");
        let text = |v: &toml::Value| match v {
            toml::Value::String(s) => Ok(s.clone()),
            toml::Value::Integer(i) => Ok(i.to_string()),
            toml::Value::Float(f) => Ok(f.to_string()),
            toml::Value::Boolean(b) => Ok(b.to_string()),
            _ => Err(format!("{key}: must be a string, a number, true or false")),
        };
        let values = match value {
            toml::Value::Table(inner) => {
                flatten(inner, &format!("{key}-"), out)?;
                continue;
            }
            toml::Value::Boolean(false) => None,
            toml::Value::Boolean(true) => Some(vec![]),
            toml::Value::Array(items) => Some(items.iter().map(text).collect::<Result<_, _>>()?),
            v => Some(vec![text(v)?]),
        };
        out.push(Setting { key, flag, values });
    }
    Ok(())
}
