//! The checks of `cargo xtask clients`, one function per generator: how
//! each is run (the command lines docs/clients.md shows integrators), and
//! what each generated client must then pass. A check whose client could
//! not be generated is not run; every other runs after a failure.

use super::{Revision, Target, Tools, examples, output, show, with_path};
use crate::contract::{check_status, step};
use anyhow::{Result, bail};
use std::path::Path;
use std::process::Command;

/// Runs a step and tells whether it passed, for the checks that need it.
fn passed(label: &str, failed: &mut Vec<String>, f: impl FnOnce() -> Result<()>) -> bool {
    let before = failed.len();
    step(label, failed, f);
    failed.len() == before
}

/// The clients venv's python, importing from `package`, in the revision's folder.
fn python(t: &Tools, package: &Path, r: &Revision) -> Command {
    let mut cmd = Command::new(t.venv_bin.join("python"));
    cmd.env("PYTHONPATH", package).current_dir(&r.dir);
    cmd
}

/// openapi-generator's warnings about any document, the documents' own
/// aside: fixed in no release yet (docs/clients.md names them).
const OPENAPI_GENERATOR_OWN_WARNINGS: [&str; 2] =
    ["Failed to get the schema name: null", "Date (reserved word) cannot be used as model name. Renamed to ModelDate"];

/// A scenario's command with the live server in its environment.
fn scenario(mut cmd: Command, live: &Target, r: &Revision) -> Command {
    cmd.env("SWITCHBOARD_URL", &live.url).env("SWITCHBOARD_KEY", &live.key).env("SWITCHBOARD_REVISION", &r.name);
    cmd
}

/// openapi-typescript's `schema.d.ts` with its default flags but one: a
/// field with a `default` stays optional (`--default-non-nullable=false`),
/// as a request may leave it out (the server fills it in); every example
/// assigned to its type under `tsc --strict`; the openapi-fetch scenario
/// compiled against it and run with node.
pub(crate) fn typescript(t: &Tools, root: &Path, r: &Revision, live: &Target, failed: &mut Vec<String>) {
    let short = &r.short;
    let dir = r.dir.join("typescript");
    let generated =
        passed(&format!("openapi-typescript, {short}: openapi-typescript openapi.json --default-non-nullable=false -o schema.d.ts"), failed, || {
            std::fs::create_dir_all(&dir)?;
            let mut cmd = Command::new(t.node_bin.join("openapi-typescript"));
            let (ok, text) =
                output(cmd.args(["../openapi.json", "--default-non-nullable=false", "-o", "schema.d.ts"]).current_dir(&dir), "openapi-typescript")?;
            show(&text);
            // its warnings (` ⚠  ...`) are what it could not type
            if !ok || text.contains('\u{26A0}') {
                bail!("openapi-typescript failed or warned");
            }
            Ok(())
        });
    if !generated {
        return;
    }
    // the compiler settings are contract/clients/tsconfig.json's; each
    // compilation names its one file
    let tsconfig = |name: &str, file: &str, emit: bool| -> Result<()> {
        let base = serde_json::to_string(&root.join("contract/clients/tsconfig.json"))?;
        let options = if emit { r#"{"outDir": "out"}"# } else { r#"{"noEmit": true}"# };
        let text = format!("{{\"extends\": {base}, \"compilerOptions\": {options}, \"files\": [\"{file}\"]}}\n");
        Ok(std::fs::write(dir.join(name), text)?)
    };
    let label = format!("openapi-typescript, {short}: tsc --strict, {} examples as their types", r.examples.len());
    step(&label, failed, || {
        let (text, spans) = examples::typescript(&r.examples)?;
        std::fs::write(dir.join("examples.mts"), text)?;
        tsconfig("tsconfig.examples.json", "examples.mts", false)?;
        let mut cmd = Command::new(t.node_bin.join("tsc"));
        cmd.args(["--project", "tsconfig.examples.json", "--strict", "--pretty", "false"]).current_dir(&dir);
        let (ok, out) = output(&mut cmd, "tsc")?;
        show(&name_examples(&out, &spans));
        if !ok {
            bail!("tsc found examples that are not their types (typescript/examples.mts)");
        }
        Ok(())
    });
    step(&format!("openapi-fetch, {short}: tsc --strict scenario.mts"), failed, || {
        std::fs::copy(root.join("contract/clients/scenario.mts"), dir.join("scenario.mts"))?;
        tsconfig("tsconfig.scenario.json", "scenario.mts", true)?;
        let mut cmd = Command::new(t.node_bin.join("tsc"));
        cmd.args(["--project", "tsconfig.scenario.json", "--strict", "--pretty", "false"]).current_dir(&dir);
        let (ok, out) = output(&mut cmd, "tsc")?;
        show(&out);
        if !ok {
            bail!("the openapi-fetch scenario does not type-check");
        }
        Ok(())
    });
    // tsc writes the JavaScript despite type errors: the run still shows
    // whether the server answers as the scenario expects
    if dir.join("out/scenario.mjs").exists() {
        step(&format!("openapi-fetch, {short}: node scenario.mjs against the server"), failed, || {
            check_status(scenario(Command::new("node"), live, r).arg("out/scenario.mjs").current_dir(&dir), "node scenario.mjs")
        });
    }
}

/// tsc's messages, each about `examples.mts` followed by the example it
/// is in (the document's pointer, not the file's line).
fn name_examples(out: &str, spans: &[examples::Span]) -> String {
    let mut named = String::new();
    for line in out.lines() {
        named.push_str(line);
        named.push('\n');
        let at = line.strip_prefix("examples.mts(").and_then(|rest| rest.split(',').next()?.parse::<usize>().ok());
        if let Some((_, _, place)) = at.and_then(|n| spans.iter().find(|(start, end, _)| (*start..=*end).contains(&n))) {
            named.push_str(&format!("    in {place}\n"));
        }
    }
    named
}

/// openapi-python-client's package, failing on any warning (each is a
/// model or an operation it dropped); `mypy --strict` over it (and the
/// scenario); every example through its models' `from_dict`; the scenario
/// against the server.
pub(crate) fn python_client(t: &Tools, root: &Path, work: &Path, r: &Revision, live: &Target, failed: &mut Vec<String>) {
    let short = &r.short;
    let clients = root.join("contract/clients");
    let package = r.dir.join("python-client");
    let label = format!(
        "openapi-python-client, {short}: generate --path openapi.json \
         --output-path python-client/switchboard_client --meta none --fail-on-warning"
    );
    let generated = passed(&label, failed, || {
        // --meta none: the package alone, importable from python-client/
        // (the default also writes a pyproject.toml around it)
        let mut cmd = with_path(Command::new(t.venv_bin.join("openapi-python-client")), &t.venv_bin);
        cmd.args(["generate", "--path", "openapi.json", "--output-path", "python-client/switchboard_client"])
            .args(["--meta", "none", "--fail-on-warning"])
            .current_dir(&r.dir);
        let (ok, text) = output(&mut cmd, "openapi-python-client")?;
        show(&text);
        if !ok || text.to_lowercase().contains("warning") {
            bail!("openapi-python-client failed or warned: a warning is a model or an endpoint left out");
        }
        Ok(())
    });
    if !generated {
        return;
    }
    let checked = [package.join("switchboard_client").into_os_string(), clients.join("scenario_python_client.py").into_os_string()];
    step(&format!("openapi-python-client, {short}: mypy --strict (package and scenario)"), failed, || {
        let mut cmd = Command::new(t.venv_bin.join("mypy"));
        cmd.args(["--strict", "--config-file"])
            .arg(clients.join("mypy.ini"))
            .arg("--cache-dir")
            .arg(work.join("mypy-cache").join(short))
            .args(&checked)
            .env("MYPYPATH", &package)
            .current_dir(&r.dir);
        check_status(&mut cmd, "mypy")
    });
    let python = || python(t, &package, r);
    step(&format!("openapi-python-client, {short}: from_dict on every example"), failed, || {
        let mut cmd = python();
        cmd.arg(clients.join("examples.py")).args(["--models", "switchboard_client.models", "examples.json"]);
        check_status(&mut cmd, "examples.py")
    });
    step(&format!("openapi-python-client, {short}: scenario against the server"), failed, || {
        check_status(scenario(python(), live, r).arg(clients.join("scenario_python_client.py")), "scenario_python_client.py")
    });
}

/// openapi-generator's `python` client; every example through its models'
/// `from_dict` (pydantic validates each); the scenario against the server.
pub(crate) fn openapi_generator(t: &Tools, root: &Path, r: &Revision, live: &Target, failed: &mut Vec<String>) {
    let short = &r.short;
    let clients = root.join("contract/clients");
    let package = r.dir.join("openapi-generator");
    let label = format!("openapi-generator python, {short}: generate -g python -i openapi.json --package-name switchboard_openapi");
    let generated = passed(&label, failed, || {
        let mut cmd = with_path(Command::new(t.venv_bin.join("openapi-generator-cli")), &t.venv_bin);
        cmd.args(["generate", "-g", "python", "-i", "openapi.json", "-o", "openapi-generator"])
            .args(["--package-name", "switchboard_openapi"])
            // leaves out the generated test stubs and Markdown docs, which
            // the check never reads: the client is the same
            .args(["--global-property", "apiTests=false,modelTests=false,apiDocs=false,modelDocs=false"])
            .current_dir(&r.dir);
        let (ok, text) = output(&mut cmd, "openapi-generator-cli")?;
        let log = r.dir.join("openapi-generator.log");
        std::fs::write(&log, &text)?;
        // its INFO lines name every file it writes; what it warns of is
        // shown, and any warning but its own fails the check
        let warnings: Vec<&str> = text.lines().filter(|l| l.contains(" WARN ") || l.contains(" ERROR ")).collect();
        show(&warnings.join("\n"));
        if !ok {
            bail!("openapi-generator-cli failed; see {}", log.display());
        }
        let ours: Vec<&&str> = warnings.iter().filter(|w| !OPENAPI_GENERATOR_OWN_WARNINGS.iter().any(|own| w.contains(own))).collect();
        if !ours.is_empty() {
            bail!("openapi-generator warned {} time(s) about the document; see {}", ours.len(), log.display());
        }
        Ok(())
    });
    if !generated {
        return;
    }
    let python = || python(t, &package, r);
    step(&format!("openapi-generator python, {short}: from_dict on every example"), failed, || {
        let mut cmd = python();
        cmd.arg(clients.join("examples.py")).args(["--models", "switchboard_openapi.models", "examples.json"]);
        check_status(&mut cmd, "examples.py")
    });
    step(&format!("openapi-generator python, {short}: scenario against the server"), failed, || {
        let script = clients.join("scenario_openapi_generator.py");
        check_status(scenario(python(), live, r).arg(script), "scenario_openapi_generator.py")
    });
}
