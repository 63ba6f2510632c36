//! Reading the revision documents in `spec/`: parsing, naming, `$ref` closure.

use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub struct Revision {
    /// `2026-08-21.auk`
    pub name: String,
    /// `auk`: the Rust module and client crate suffix.
    pub short: String,
    /// `2026.8.21`: dropshot routes revisions as semver.
    pub semver: (u64, u64, u64),
    /// The document (parsed as OpenAPI 3.0 once, as it is loaded).
    pub raw: Value,
    /// `spec/2026-08-21.auk.json`
    pub file: String,
}

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf()
}

impl Revision {
    /// The last day the server answers in this revision (`x-supported-until`).
    pub fn supported_until(&self) -> Option<chrono::NaiveDate> {
        self.raw["info"]["x-supported-until"].as_str().and_then(|d| d.parse().ok())
    }

    /// Past its support date today, which it says: the server answers a
    /// retired revision in the oldest one still supported, which the
    /// contract and client checks check on its own.
    pub fn retired_today(&self) -> bool {
        let today = chrono::Utc::now().date_naive();
        match self.supported_until().filter(|until| today > *until) {
            Some(until) => {
                eprintln!("== {}: skipped: retired after {until}", self.name);
                true
            }
            None => false,
        }
    }

    pub fn load(path: &Path) -> Result<Revision> {
        let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
        let raw: Value = serde_json::from_str(&text).with_context(|| format!("{}", path.display()))?;
        Revision::from_value(raw, path)
    }

    pub fn from_value(raw: Value, path: &Path) -> Result<Revision> {
        let spec: openapiv3::OpenAPI = serde_json::from_value(raw.clone()).with_context(|| format!("{}", path.display()))?;
        let name = spec.info.version.clone();
        let (date, short) = name.split_once('.').ok_or_else(|| anyhow!("info.version {name} is not DATE.name"))?;
        let d: Vec<u64> = date.split('-').map(str::parse).collect::<Result<_, _>>()?;
        let [y, m, dd] = d[..] else { bail!("bad date in {name}") };
        let file = path.strip_prefix(root()).unwrap_or(path).to_string_lossy().into_owned();
        Ok(Revision { short: short.to_string(), semver: (y, m, dd), name, raw, file })
    }

    pub fn semver_lit(&self) -> String {
        format!("{}.{}.{}", self.semver.0, self.semver.1, self.semver.2)
    }

    pub fn schemas(&self) -> serde_json::Map<String, Value> {
        self.raw["components"]["schemas"].as_object().cloned().unwrap_or_default()
    }

    /// Transitive closure of the component schemas `v` refers to.
    pub fn closure(&self, v: &Value) -> BTreeMap<String, Value> {
        let schemas = &self.raw["components"]["schemas"];
        let mut todo = BTreeSet::new();
        collect_refs(v, &mut todo);
        let mut done = BTreeMap::new();
        while let Some(n) = todo.pop_first() {
            if done.contains_key(&n) {
                continue;
            }
            let s = schemas[&n].clone();
            collect_refs(&s, &mut todo);
            done.insert(n, s);
        }
        done
    }

    /// Replaces `$ref`s to components.parameters/headers/responses by their
    /// targets, so an operation can be read (and compared) on its own.
    pub fn inline_components(&self, v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    for kind in ["parameters", "headers", "responses"] {
                        if let Some(n) = r.strip_prefix(&format!("#/components/{kind}/")) {
                            return self.inline_components(&self.raw["components"][kind][n]);
                        }
                    }
                }
                Value::Object(m.iter().map(|(k, v)| (k.clone(), self.inline_components(v))).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(|v| self.inline_components(v)).collect()),
            _ => v.clone(),
        }
    }
}

/// Every document in `spec/`, oldest revision first.
pub fn load_revisions() -> Result<Vec<Revision>> {
    let mut revs = vec![];
    for e in std::fs::read_dir(root().join("spec"))? {
        let p = e?.path();
        if p.extension().and_then(|s| s.to_str()) == Some("json") {
            revs.push(Revision::load(&p)?);
        }
    }
    revs.sort_by_key(|r| r.semver);
    if revs.is_empty() {
        bail!("no revision documents in spec/");
    }
    Ok(revs)
}

/// SHA-256 over the revision documents, in revision order. Recorded in the
/// generated code so `build.rs` can refuse a stale `generated/` cheaply.
/// (build.rs computes the same: sorted file names, then contents.)
pub fn spec_hash(revs: &[Revision]) -> Result<String> {
    let mut files: Vec<&String> = revs.iter().map(|r| &r.file).collect();
    files.sort();
    let mut h = Sha256::new();
    for f in files {
        h.update(f.as_bytes());
        h.update(std::fs::read(root().join(f))?);
    }
    Ok(hex::encode(h.finalize()))
}

pub fn collect_refs(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref")
                && let Some(n) = r.strip_prefix("#/components/schemas/")
            {
                out.insert(n.to_string());
            }
            m.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

pub fn ref_name(v: &Value) -> Option<String> {
    v.get("$ref")?.as_str()?.strip_prefix("#/components/schemas/").map(str::to_string)
}
