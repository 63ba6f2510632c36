//! Each stateful resource's states and its transition table, in one
//! module per resource below the store and the domain (both read the
//! states; the domain moves them by the table): which
//! operation moves which state to which. Every other combination is a 409
//! naming the state, with the resource's `internalCode`. The documents
//! publish each table (`Table::markdown` in the tag's description), and a
//! test holds them equal.

pub mod deliveries;
pub mod invoices;
pub mod licenses;
pub mod orders;
pub mod payments;
pub mod porting;
pub mod reports;
pub mod subscription_addons;
pub mod subscriptions;

use crate::error::{Error, InternalCode, Result};
use std::fmt::Display;

/// An operation that moves a resource: its name in the table and in the
/// refusal's message ("cannot be approved").
pub trait Operation: Copy + Eq + 'static {
    fn name(self) -> &'static str;
    fn done(self) -> &'static str;
    /// Asked for by a request (so a refusal is answered), or something that
    /// happens (time passes, a parent moves), which does nothing where the
    /// table has no move.
    fn requested(self) -> bool {
        true
    }
}

/// One resource's table.
pub struct Table<S: 'static, O: 'static> {
    /// the resource, as a refusal names it: "order", "line item"
    pub resource: &'static str,
    /// every state, in the order the published table shows them
    pub states: &'static [S],
    /// (operation, the states it moves from, the state it moves to)
    pub moves: &'static [(O, &'static [S], S)],
    /// the `internalCode` of a move refused from this state
    pub refused: fn(S) -> InternalCode,
}

impl<S: Copy + Eq + Display, O: Operation> Table<S, O> {
    /// The state `op` moves `from` to, or `None` when the table refuses it.
    pub fn target(&self, op: O, from: S) -> Option<S> {
        self.moves.iter().find(|(o, froms, _)| *o == op && froms.contains(&from)).map(|(_, _, to)| *to)
    }

    /// The state `op` moves `from` to, or the 409 naming `from`.
    pub fn next(&self, op: O, from: S) -> Result<S> {
        self.target(op, from).ok_or_else(|| Error::Conflict {
            code: (self.refused)(from),
            message: format!("A{} {} in status {from} cannot be {}.", article(self.resource), self.resource, op.done()),
            property: "status",
        })
    }

    /// The table as the documents show it: a row per operation, a column
    /// per state, each cell the state moved to, the refusal's code, or `—`
    /// where something that happens finds nothing to move.
    pub fn markdown(&self) -> String {
        let mut out = format!("| operation | {} |\n", self.states.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(" | "));
        out.push_str(&format!("|---|{}\n", "---|".repeat(self.states.len())));
        let mut ops: Vec<O> = vec![];
        for (op, _, _) in self.moves {
            if !ops.contains(op) {
                ops.push(*op);
            }
        }
        for op in ops {
            let cells: Vec<String> = self
                .states
                .iter()
                .map(|s| match self.target(op, *s) {
                    Some(to) => format!("→ {to}"),
                    None if op.requested() => format!("409 `{}`", (self.refused)(*s).as_str()),
                    None => "—".to_string(),
                })
                .collect();
            out.push_str(&format!("| {} | {} |\n", op.name(), cells.join(" | ")));
        }
        out
    }
}

fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) { "n" } else { "" }
}

/// The description of the tag `tag` in the published document `document`.
#[cfg(test)]
pub fn tag_description(document: &str, tag: &str) -> String {
    let doc: serde_json::Value = serde_json::from_str(document).expect("the documents are JSON");
    let tags = doc["tags"].as_array().expect("the documents have tags");
    let found = tags.iter().find(|t| t["name"] == tag).unwrap_or_else(|| panic!("no tag {tag}"));
    found["description"].as_str().unwrap_or_default().to_string()
}

/// The result of a move its table was asked about first (or that the
/// caller's own match made sure of): an internal error, never a panic,
/// should the two ever disagree.
pub fn agreed<T>(moved: Option<T>, what: &str) -> Result<T> {
    moved.ok_or_else(|| Error::Internal(format!("{what}: the transition table refused a move it was asked about")))
}
