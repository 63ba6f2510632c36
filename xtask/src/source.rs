//! The revision documents from one source. `spec/src/` holds the newest
//! revision, split for reading: `openapi.yaml` (the frame: info, tags by
//! name, the shared components), `tags/<tag>.md` (each tag's description),
//! `paths/<tag>.yaml` and `schemas/<tag>.yaml` (the paths of a tag and the
//! schemas its paths reach first; `schemas/common.yaml` for the rest) and
//! `events.yaml` (`x-webhooks`). Each older revision is a change file,
//! `changes/<revision>.yaml`: what it has that the revision after it
//! lacks, applied backwards from the newest (`changes`). `cargo xtask spec`
//! writes every published document into `spec/`, in a byte-stable form.

use crate::backwards::{self, mapping};
use anyhow::{Context, Result, anyhow, bail};
use std::path::{Path, PathBuf};
use yaml_serde::{Mapping, Value};

fn src() -> PathBuf {
    crate::spec::root().join("spec/src")
}

fn read_yaml(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
    yaml_serde::from_str(&text).with_context(|| path.display().to_string())
}

fn key(s: &str) -> Value {
    Value::String(s.to_string())
}

/// The file name a tag's pieces have: its name in lower case, words joined
/// by `-` ("Subscription Add-ons" -> `subscription-add-ons`).
fn slug(tag: &str) -> String {
    let mut out = String::new();
    for word in tag.to_lowercase().split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(word);
    }
    out
}

/// Appends the entries of `file` (a mapping, when the file exists) to
/// `into`; an entry already there is an error (one source for each).
fn append(into: &mut Mapping, file: &Path) -> Result<bool> {
    if !file.exists() {
        return Ok(false);
    }
    let Value::Mapping(entries) = read_yaml(file)? else { bail!("{} is not a mapping", file.display()) };
    for (k, v) in entries {
        if into.contains_key(&k) {
            bail!("{}: {k:?} is defined twice", file.display());
        }
        into.insert(k, v);
    }
    Ok(true)
}

/// The newest revision's document, assembled from `spec/src/`.
pub fn newest() -> Result<Value> {
    let dir = src();
    let mut doc = read_yaml(&dir.join("openapi.yaml"))?;
    let top = mapping(&mut doc, "openapi.yaml")?;
    let tags: Vec<String> = top
        .get("tags")
        .and_then(Value::as_sequence)
        .ok_or_else(|| anyhow!("openapi.yaml names no tags"))?
        .iter()
        .map(|t| t.get("name").and_then(Value::as_str).map(str::to_string).ok_or_else(|| anyhow!("a tag without a name")))
        .collect::<Result<_>>()?;
    let mut used = vec![];
    // each tag's description, from its markdown (the file's last newline
    // is the file's, not the description's)
    for tag in top.get_mut("tags").and_then(Value::as_sequence_mut).into_iter().flatten() {
        let name = tag.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
        let file = dir.join("tags").join(format!("{}.md", slug(&name)));
        if file.exists() {
            let text = std::fs::read_to_string(&file)?;
            let text = text.strip_suffix('\n').unwrap_or(&text).to_string();
            let t = mapping(tag, "a tag")?;
            let mut with = Mapping::new();
            for (k, v) in std::mem::take(t) {
                let is_name = k == key("name");
                with.insert(k, v);
                if is_name {
                    with.insert(key("description"), Value::String(text.clone()));
                }
            }
            *t = with;
            used.push(file);
        }
    }
    let mut paths = Mapping::new();
    let mut schemas = Mapping::new();
    for tag in &tags {
        for (kind, into) in [("paths", &mut paths), ("schemas", &mut schemas)] {
            let file = dir.join(kind).join(format!("{}.yaml", slug(tag)));
            if append(into, &file)? {
                used.push(file);
            }
        }
    }
    let common = dir.join("schemas/common.yaml");
    if append(&mut schemas, &common)? {
        used.push(common);
    }
    let mut events = Mapping::new();
    let events_file = dir.join("events.yaml");
    if append(&mut events, &events_file)? {
        used.push(events_file);
    }
    // a piece no tag names would be silently left out
    for kind in ["tags", "paths", "schemas"] {
        for e in std::fs::read_dir(dir.join(kind)).into_iter().flatten() {
            let path = e?.path();
            if !used.contains(&path) {
                bail!("{} belongs to no tag of openapi.yaml", path.display());
            }
        }
    }
    put(top, "paths", Value::Mapping(paths))?;
    let components = top.get_mut("components").ok_or_else(|| anyhow!("openapi.yaml has no components"))?;
    put(mapping(components, "components")?, "schemas", Value::Mapping(schemas))?;
    put(top, "x-webhooks", Value::Mapping(events))?;
    Ok(doc)
}

/// Fills the placeholder `name` of `m` (kept where it stands).
fn put(m: &mut Mapping, name: &str, v: Value) -> Result<()> {
    let slot = m.get_mut(name).ok_or_else(|| anyhow!("openapi.yaml has no `{name}` placeholder"))?;
    *slot = v;
    Ok(())
}

/// The document as `spec/` publishes it: JSON, two-space indented, keys
/// in source order, one newline at the end.
pub fn to_json(doc: &Value) -> Result<String> {
    Ok(serde_json::to_string_pretty(doc)? + "\n")
}

/// Every published document: (path under the repository, text), the
/// newest first, each older one the change file applied to the one after.
pub fn documents() -> Result<Vec<(String, String)>> {
    let mut doc = newest()?;
    let mut out = vec![(published(&doc)?, to_json(&doc)?)];
    let mut files: Vec<PathBuf> = std::fs::read_dir(src().join("changes")).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
    // newest first: each change goes back one revision
    files.sort();
    files.reverse();
    for file in files {
        let change = read_yaml(&file)?;
        doc = backwards::apply(doc, &change).with_context(|| file.display().to_string())?;
        out.push((published(&doc)?, to_json(&doc)?));
    }
    Ok(out)
}

/// The summaries of the steps in `revision`'s change file (none for the
/// newest, which has no change file).
pub fn steps(revision: &str) -> Result<Vec<String>> {
    let file = src().join("changes").join(format!("{revision}.yaml"));
    if !file.exists() {
        return Ok(vec![]);
    }
    let change = read_yaml(&file)?;
    Ok(change
        .get("changes")
        .and_then(Value::as_sequence)
        .into_iter()
        .flatten()
        .filter_map(|s| s.get("summary").and_then(Value::as_str).map(str::to_string))
        .collect())
}

/// `spec/<info.version>.json`.
fn published(doc: &Value) -> Result<String> {
    let version = doc.get("info").and_then(|i| i.get("version")).and_then(Value::as_str).ok_or_else(|| anyhow!("a document without info.version"))?;
    Ok(format!("spec/{version}.json"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_tags_files_are_named_by_its_words() {
        assert_eq!(super::slug("Subscription Add-ons"), "subscription-add-ons");
        assert_eq!(super::slug("Product Catalogs"), "product-catalogs");
    }
}
