//! An older revision from the one after it: a change file
//! (`spec/src/changes/<revision>.yaml`) says what the older revision has
//! that the newer lacks, and `apply` puts it back, the way dated API
//! versions keep each version change as a step backwards.
//!
//! ```yaml
//! info: {version: 2026-08-21.auk, description: ..., x-supported-until: '2026-12-01'}
//! changes:
//!   - summary: what the step is, in a sentence
//!     paths:                 # path items the older revision has
//!       - path: /orders/{orderId}/calculate-price
//!         after: /orders/{orderId}/submit
//!         item: {post: ...}
//!     properties:            # schema properties it has (appended)
//!       Price:
//!         netPrice:
//!           schema: {type: number, deprecated: true}
//!           example: {major: netPriceMinor}
//! ```
//!
//! A property with `required: true` is also added to the schema's required
//! list: the older revision always sends it (the twin of a required field).
//!
//! A property's `example` rule fills it into every example of an object
//! of that schema, so an operation added to the source gets its older
//! examples without touching the change file: `major: F` is the minor
//! units of `F` in major units (by the ISO 4217 exponent of the nearest
//! `currency`), `major-map: F` the same for a map of currency -> minor
//! units, `copy: [a, b]` the value at that path of the object. A step's
//! `examples` (schema -> property -> `{value: V}`; also at the top of the
//! file, for what is not a step) sets a property the schema has in both
//! revisions to V in every example (a webhook payload's `apiRevision`).
//! A top-level `set` (JSON pointer -> value) replaces single values that
//! name the revision itself (the Api-Revision parameter's example).

use anyhow::{Result, anyhow, bail};
use std::collections::HashMap;
use yaml_serde::{Mapping, Number, Value};

/// How a property's value is found in an example object.
enum Rule {
    Major(String),
    MajorMap(String),
    Copy(Vec<String>),
    /// the property is there in both revisions; its examples say V
    Set(Value),
}

impl Rule {
    fn of(v: &Value) -> Result<Rule> {
        let field = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        if let Some(f) = field("major") {
            return Ok(Rule::Major(f));
        }
        if let Some(f) = field("major-map") {
            return Ok(Rule::MajorMap(f));
        }
        if let Some(path) = v.get("copy").and_then(Value::as_sequence) {
            return Ok(Rule::Copy(path.iter().filter_map(|p| p.as_str().map(str::to_string)).collect()));
        }
        if let Some(value) = v.get("value") {
            return Ok(Rule::Set(value.clone()));
        }
        bail!("an example rule is one of major, major-map, copy, value: {v:?}")
    }

    /// The value `obj` (an example object in `currency`) gives the property.
    fn value(&self, obj: &Mapping, currency: Option<&str>) -> Option<Value> {
        match self {
            Rule::Major(f) => obj.get(f.as_str()).and_then(Value::as_f64).map(|minor| major(minor, currency)),
            Rule::MajorMap(f) => {
                let map = obj.get(f.as_str())?.as_mapping()?;
                let mut out = Mapping::new();
                for (code, minor) in map {
                    out.insert(code.clone(), major(minor.as_f64()?, code.as_str()));
                }
                Some(Value::Mapping(out))
            }
            Rule::Copy(path) => {
                let mut v = obj.get(path.first()?.as_str())?;
                for p in &path[1..] {
                    v = v.get(p.as_str())?;
                }
                Some(v.clone())
            }
            Rule::Set(v) => Some(v.clone()),
        }
    }
}

fn major(minor: f64, currency: Option<&str>) -> Value {
    let exponent = currency.and_then(iso_currency::Currency::from_code).and_then(|c| c.exponent()).unwrap_or(2);
    Value::Number(Number::from(minor / 10f64.powi(i32::from(exponent))))
}

/// `v` as a mapping, or an error naming `what`.
pub(crate) fn mapping<'a>(v: &'a mut Value, what: &str) -> Result<&'a mut Mapping> {
    v.as_mapping_mut().ok_or_else(|| anyhow!("{what} is not a mapping"))
}

/// `doc` one revision back, by `change`.
pub fn apply(mut doc: Value, change: &Value) -> Result<Value> {
    let top = mapping(&mut doc, "the document")?;
    if let Some(info) = change.get("info").and_then(Value::as_mapping) {
        let into = mapping(top.get_mut("info").ok_or_else(|| anyhow!("a document without info"))?, "info")?;
        for (k, v) in info {
            into.insert(k.clone(), v.clone());
        }
    }
    let mut rules: HashMap<String, Vec<(String, Rule)>> = HashMap::new();
    for step in change.get("changes").and_then(Value::as_sequence).into_iter().flatten() {
        for p in step.get("paths").and_then(Value::as_sequence).into_iter().flatten() {
            let path = p.get("path").and_then(Value::as_str).ok_or_else(|| anyhow!("a path without `path`"))?;
            let item = p.get("item").cloned().ok_or_else(|| anyhow!("{path}: no `item`"))?;
            let paths = mapping(top.get_mut("paths").ok_or_else(|| anyhow!("no paths"))?, "paths")?;
            insert_after(paths, path, item, p.get("after").and_then(Value::as_str))?;
        }
        for (schema, props) in step.get("properties").and_then(Value::as_mapping).into_iter().flatten() {
            let name = schema.as_str().ok_or_else(|| anyhow!("a schema name is text"))?;
            let object = top
                .get_mut("components")
                .and_then(|c| c.get_mut("schemas"))
                .and_then(|s| s.get_mut(name))
                .and_then(Value::as_mapping_mut)
                .ok_or_else(|| anyhow!("no schema {name}"))?;
            for (prop, def) in props.as_mapping().ok_or_else(|| anyhow!("{name}: properties is a mapping"))? {
                let prop_name = prop.as_str().ok_or_else(|| anyhow!("{name}: a property name is text"))?;
                let target = object.get_mut("properties").and_then(Value::as_mapping_mut).ok_or_else(|| anyhow!("no schema {name} with properties"))?;
                if target.contains_key(prop) {
                    bail!("{name}.{prop_name} is in the newer revision already");
                }
                target.insert(prop.clone(), def.get("schema").cloned().ok_or_else(|| anyhow!("{name}.{prop_name}: no `schema`"))?);
                if def.get("required").and_then(Value::as_bool) == Some(true) {
                    let required = object.entry("required".into()).or_insert_with(|| Value::Sequence(vec![]));
                    required.as_sequence_mut().ok_or_else(|| anyhow!("{name}: required is a list"))?.push(prop.clone());
                }
                if let Some(rule) = def.get("example") {
                    rules.entry(name.to_string()).or_default().push((prop_name.to_string(), Rule::of(rule)?));
                }
            }
        }
        set_examples(step, &mut rules)?;
    }
    set_examples(change, &mut rules)?;
    if !rules.is_empty() {
        let schemas = top.get("components").and_then(|c| c.get("schemas")).and_then(Value::as_mapping).cloned().unwrap_or_default();
        let walker = Examples { schemas: &schemas, rules: &rules };
        walker.media_types(&mut doc);
    }
    for (pointer, value) in change.get("set").and_then(Value::as_mapping).into_iter().flatten() {
        let pointer = pointer.as_str().ok_or_else(|| anyhow!("a `set` key is a JSON pointer"))?;
        *at(&mut doc, pointer)? = value.clone();
    }
    Ok(doc)
}

/// The value `pointer` (RFC 6901) names in `doc`, which must be there.
fn at<'v>(doc: &'v mut Value, pointer: &str) -> Result<&'v mut Value> {
    let mut v = doc;
    for token in pointer.split('/').skip(1) {
        let key = token.replace("~1", "/").replace("~0", "~");
        v = match v {
            Value::Sequence(items) => key.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
            Value::Mapping(m) => m.get_mut(key.as_str()),
            _ => None,
        }
        .ok_or_else(|| anyhow!("{pointer}: nothing at {key}"))?;
    }
    Ok(v)
}

/// The `examples` of a step or of the whole change: schema -> property
/// -> rule.
fn set_examples(from: &Value, rules: &mut HashMap<String, Vec<(String, Rule)>>) -> Result<()> {
    for (schema, props) in from.get("examples").and_then(Value::as_mapping).into_iter().flatten() {
        let name = schema.as_str().ok_or_else(|| anyhow!("a schema name is text"))?;
        for (prop, rule) in props.as_mapping().ok_or_else(|| anyhow!("{name}: examples is a mapping"))? {
            let prop_name = prop.as_str().ok_or_else(|| anyhow!("{name}: a property name is text"))?;
            rules.entry(name.to_string()).or_default().push((prop_name.to_string(), Rule::of(rule)?));
        }
    }
    Ok(())
}

/// Inserts `key: value` into `m` after the entry `after` (at the end when
/// None); an entry of that key already there is an error.
fn insert_after(m: &mut Mapping, key: &str, value: Value, after: Option<&str>) -> Result<()> {
    if m.contains_key(key) {
        bail!("{key} is in the newer revision already");
    }
    let Some(anchor) = after else {
        m.insert(Value::String(key.into()), value);
        return Ok(());
    };
    if !m.contains_key(anchor) {
        bail!("{key}: no {anchor} to stand after");
    }
    let mut out = Mapping::new();
    let mut value = Some(value);
    for (k, v) in std::mem::take(m) {
        let at_anchor = k.as_str() == Some(anchor);
        out.insert(k, v);
        if at_anchor {
            out.insert(Value::String(key.into()), value.take().unwrap_or(Value::Null));
        }
    }
    *m = out;
    Ok(())
}

/// Fills the example rules into every example, walking it along its schema.
struct Examples<'a> {
    schemas: &'a Mapping,
    rules: &'a HashMap<String, Vec<(String, Rule)>>,
}

impl Examples<'_> {
    /// Every media type object (`content: {type: {schema, example(s)}}`).
    fn media_types(&self, v: &mut Value) {
        match v {
            Value::Mapping(m) => {
                if let Some(Value::Mapping(content)) = m.get_mut("content") {
                    for (_, media) in content.iter_mut() {
                        self.media(media);
                    }
                }
                for (_, child) in m.iter_mut() {
                    self.media_types(child);
                }
            }
            Value::Sequence(s) => s.iter_mut().for_each(|c| self.media_types(c)),
            _ => {}
        }
    }

    fn media(&self, media: &mut Value) {
        let Some(schema) = media.get("schema").cloned() else { return };
        if let Some(example) = media.get_mut("example") {
            self.walk(example, &schema, None);
        }
        if let Some(Value::Mapping(examples)) = media.get_mut("examples") {
            for (_, e) in examples.iter_mut() {
                if let Some(value) = e.get_mut("value") {
                    self.walk(value, &schema, None);
                }
            }
        }
    }

    /// `schema` with its `$ref`s and one-member `allOf`s followed: the name
    /// of the last component reached, and the schema.
    fn resolve<'s>(&'s self, mut schema: &'s Value) -> (Option<&'s str>, &'s Value) {
        let mut name = None;
        loop {
            if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
                let n = r.rsplit('/').next().unwrap_or(r);
                match self.schemas.get(n) {
                    Some(s) => (name, schema) = (Some(n), s),
                    None => return (name, schema),
                }
            } else if let Some([only]) = schema.get("allOf").and_then(Value::as_sequence).map(Vec::as_slice) {
                schema = only;
            } else {
                return (name, schema);
            }
        }
    }

    /// The shapes an object of `schema` has at once: the schema, and each
    /// member of an `allOf` of several (a webhook payload: the envelope and
    /// its type's `data`), each with its component's name.
    fn shapes<'s>(&'s self, schema: &'s Value) -> Vec<(Option<&'s str>, &'s Value)> {
        let (name, s) = self.resolve(schema);
        let mut out = vec![(name, s)];
        for member in s.get("allOf").and_then(Value::as_sequence).into_iter().flatten() {
            out.extend(self.shapes(member));
        }
        out
    }

    fn walk(&self, v: &mut Value, schema: &Value, currency: Option<String>) {
        let shapes = self.shapes(schema);
        let (_, s) = shapes[0];
        for choice in ["oneOf", "anyOf"] {
            if let (Some(branches), Value::Mapping(obj)) = (s.get(choice).and_then(Value::as_sequence), &*v) {
                // the branch whose properties hold every key and whose
                // required keys are all there
                let fits = |b: &&Value| {
                    let (_, b) = self.resolve(b);
                    let props = b.get("properties").and_then(Value::as_mapping);
                    let required = b.get("required").and_then(Value::as_sequence);
                    obj.keys().all(|k| props.is_some_and(|p| p.contains_key(k))) && required.into_iter().flatten().all(|r| obj.contains_key(r))
                };
                if let Some(branch) = branches.iter().find(fits) {
                    self.walk(v, &branch.clone(), currency);
                }
                return;
            }
        }
        match v {
            Value::Mapping(obj) => {
                let currency = obj.get("currency").and_then(Value::as_str).map(str::to_string).or(currency);
                for (k, child) in obj.iter_mut() {
                    // the last member that declares it refines the ones before
                    // (an envelope's open `data`, then the event's own)
                    let declared = shapes.iter().rev().find_map(|(_, s)| s.get("properties").and_then(|p| p.get(k)));
                    let additional = shapes.iter().find_map(|(_, s)| s.get("additionalProperties").filter(|a| a.is_mapping()));
                    if let Some(child_schema) = declared.or(additional) {
                        self.walk(child, child_schema, currency.clone());
                    }
                }
                let rules = shapes.iter().filter_map(|(n, _)| n.and_then(|n| self.rules.get(n))).flatten();
                for (prop, rule) in rules {
                    let present = obj.contains_key(prop.as_str());
                    // a set value replaces what the newer revision's example
                    // says; a derived one is added where it is missing
                    if present != matches!(rule, Rule::Set(_)) {
                        continue;
                    }
                    if let Some(value) = rule.value(obj, currency.as_deref()) {
                        obj.insert(Value::String(prop.clone()), value);
                    }
                }
            }
            Value::Sequence(items) => {
                if let Some(item_schema) = shapes.iter().find_map(|(_, s)| s.get("items")) {
                    for item in items {
                        self.walk(item, item_schema, currency.clone());
                    }
                }
            }
            _ => {}
        }
    }
}
