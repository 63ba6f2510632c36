//! What the crash test sent and heard, key by key, and the judgement of
//! it: a write acknowledged must exist once and replay byte for byte; one
//! never acknowledged must, when retried, execute once or replay.

use crate::http::Response;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::Mutex;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Customer,
    Order,
    Payment,
}

/// One idempotency key: the request (resent byte for byte at the end) and
/// the answers it got.
pub struct Sent {
    pub key: String,
    pub kind: Kind,
    pub request: Vec<u8>,
    /// None: no answer came (the connection broke in a kill)
    pub first: Option<Response>,
    pub retry: Option<Response>,
}

impl Sent {
    fn acknowledged(&self) -> bool {
        self.first.as_ref().is_some_and(Response::is_success)
    }
}

#[derive(Default)]
pub struct Ledger {
    pub sent: Mutex<Vec<Sent>>,
}

impl Ledger {
    /// Records a key as sent; the answer is filled in by its index.
    pub fn sent(&self, key: String, kind: Kind, request: Vec<u8>) -> usize {
        let mut sent = self.sent.lock().expect("ledger lock");
        sent.push(Sent { key, kind, request, first: None, retry: None });
        sent.len() - 1
    }

    pub fn answered(&self, index: usize, answer: Response) {
        self.sent.lock().expect("ledger lock")[index].first = Some(answer);
    }
}

/// The findings of one run.
#[derive(Default)]
pub struct Verdict {
    pub sent: usize,
    pub acknowledged: usize,
    pub unanswered: usize,
    /// first answers that were not 2xx, by status
    pub refused: BTreeMap<u16, usize>,
    pub replayed_on_retry: usize,
    pub lost: usize,
    pub twice: usize,
    pub replay_differs: usize,
    pub unsettled: usize,
    /// payment sessions not SUCCEEDED, or charged other than once
    pub payment_problems: Vec<String>,
    /// a few keys of each failure, with what was seen
    pub examples: Vec<String>,
}

const EXAMPLES_PER_KIND: usize = 3;

impl Verdict {
    pub fn clean(&self) -> bool {
        self.lost == 0 && self.twice == 0 && self.replay_differs == 0 && self.unsettled == 0 && self.payment_problems.is_empty()
    }

    fn example(&mut self, shown: &mut HashMap<&'static str, usize>, what: &'static str, s: &Sent, count: usize) {
        let n = shown.entry(what).or_default();
        *n += 1;
        if *n <= EXAMPLES_PER_KIND {
            let answer = |r: &Option<Response>| {
                r.as_ref().map_or("no answer".to_string(), |r| {
                    let replayed = if r.header("idempotent-replayed") == Some("true") { " (replayed)" } else { "" };
                    let mut body = r.text();
                    body.truncate(160);
                    format!("{}{replayed} {body}", r.status)
                })
            };
            self.examples.push(format!("{what}: {} ({:?}): {count} resource(s); first: {}; retry: {}", s.key, s.kind, answer(&s.first), answer(&s.retry)));
        }
    }
}

/// Judges every key against `resources`: how many resources carry each key.
pub fn judge(sent: &[Sent], resources: &HashMap<String, usize>) -> Verdict {
    let mut v = Verdict { sent: sent.len(), ..Verdict::default() };
    let mut shown = HashMap::new();
    for s in sent {
        let count = resources.get(&s.key).copied().unwrap_or(0);
        match &s.first {
            None => v.unanswered += 1,
            Some(r) if !r.is_success() => *v.refused.entry(r.status).or_default() += 1,
            Some(_) => v.acknowledged += 1,
        }
        let retry_ok = s.retry.as_ref().is_some_and(Response::is_success);
        let replayed = s.retry.as_ref().is_some_and(|r| r.header("idempotent-replayed") == Some("true"));
        v.replayed_on_retry += usize::from(replayed);
        if count > 1 {
            v.twice += 1;
            v.example(&mut shown, "executed twice", s, count);
        }
        let replays_first = replayed && s.first.as_ref().zip(s.retry.as_ref()).is_some_and(|(f, r)| r.status == f.status && r.body == f.body);
        if s.acknowledged() {
            if count == 0 {
                v.lost += 1;
                v.example(&mut shown, "acknowledged but lost", s, count);
            }
            if !replays_first {
                v.replay_differs += 1;
                v.example(&mut shown, "replay differs", s, count);
            }
        } else if count <= 1 {
            // executed once now (or before, its answer lost in the kill),
            // or a refusal that was stored and is replayed as it was
            let settled = (retry_ok && count == 1) || (replays_first && count == 0);
            if !settled {
                v.unsettled += 1;
                v.example(&mut shown, "unacknowledged, not settled by its retry", s, count);
            }
        }
    }
    v
}

/// The lines of a verdict, under a title.
pub fn report(title: &str, v: &Verdict, resources: (usize, usize, usize)) -> String {
    let mut out = format!("{title}\n");
    let refused: Vec<String> = v.refused.iter().map(|(status, n)| format!("{n}× {status}")).collect();
    let _ = writeln!(
        out,
        "  keys sent {}: acknowledged (2xx) {}, no answer (connection broken by a kill) {}, refused {}",
        v.sent,
        v.acknowledged,
        v.unanswered,
        if refused.is_empty() { "0".to_string() } else { refused.join(", ") }
    );
    let _ = writeln!(out, "  every key retried after the last restart: {} replayed, {} answered anew", v.replayed_on_retry, v.sent - v.replayed_on_retry);
    let _ = writeln!(out, "  resources found through the API: {} customers, {} orders, {} payment sessions", resources.0, resources.1, resources.2);
    let _ = writeln!(out, "  acknowledged writes lost:                {}", v.lost);
    let _ = writeln!(out, "  keys executed twice:                     {}", v.twice);
    let _ = writeln!(out, "  replays that differ:                     {}", v.replay_differs);
    let _ = writeln!(out, "  unacknowledged keys not settled by retry: {}", v.unsettled);
    let _ = writeln!(out, "  payment sessions not charged exactly once and SUCCEEDED: {}", v.payment_problems.len());
    for e in v.examples.iter().chain(v.payment_problems.iter().take(EXAMPLES_PER_KIND)) {
        let _ = writeln!(out, "    {e}");
    }
    let _ = writeln!(out, "  => {}", if v.clean() { "exactly once: PASS" } else { "FAIL" });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, body: &str, replayed: bool) -> Option<Response> {
        let headers = if replayed { vec![("idempotent-replayed".to_string(), "true".to_string())] } else { vec![] };
        Some(Response { status, headers, body: body.as_bytes().to_vec() })
    }

    fn sent(key: &str, first: Option<Response>, retry: Option<Response>) -> Sent {
        Sent { key: key.into(), kind: Kind::Customer, request: vec![], first, retry }
    }

    #[test]
    fn each_broken_promise_is_counted_once_and_kept_ones_not_at_all() {
        let all = [
            // kept: acknowledged and replayed; unanswered, executed once on retry
            sent("ok", answer(201, "a", false), answer(201, "a", true)),
            sent("late", None, answer(201, "b", false)),
            // a stored refusal replayed as it was
            sent("refused", answer(500, "e", false), answer(500, "e", true)),
            // broken
            sent("lost", answer(201, "c", false), answer(201, "c", true)),
            sent("twice", None, answer(201, "d", false)),
            sent("differs", answer(201, "x", false), answer(201, "y", true)),
            sent("unmarked", answer(201, "z", false), answer(201, "z", false)),
            sent("unsettled", None, answer(409, "locked", false)),
        ];
        let resources: HashMap<String, usize> = [("ok", 1), ("late", 1), ("twice", 2), ("differs", 1), ("unmarked", 1)].map(|(k, n)| (k.to_string(), n)).into();
        let v = judge(&all, &resources);
        assert_eq!((v.lost, v.twice, v.replay_differs, v.unsettled), (1, 1, 2, 1));
        assert_eq!((v.sent, v.acknowledged, v.unanswered, v.refused.get(&500)), (8, 4, 3, Some(&1)));
        assert!(!v.clean());
    }
}
