//! The report run's states and its transition table. Nothing a request does moves a run:
//! the worker takes it, writes its file and ends it, so a move the table
//! has no row for finds nothing to move.

use crate::error::InternalCode;
use crate::kinds::kind;
use crate::states::{Operation, Table};
use ReportRunStatus as S;

kind! {
    /// Where a report run is (`report_runs.status`).
    ReportRunStatus <=> ReportRunStatus {
        Queued = "QUEUED" <=> Queued,
        Running = "RUNNING" <=> Running,
        Succeeded = "SUCCEEDED" <=> Succeeded,
        Failed = "FAILED" <=> Failed,
    }
}

/// What moves a report run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOp {
    /// a worker takes it (again, when the instance that had it stopped)
    Start,
    /// its file is written and stored
    Succeed,
    /// its file could not be written, tries after tries
    Fail,
}

impl Operation for RunOp {
    fn name(self) -> &'static str {
        match self {
            RunOp::Start => "a worker takes it",
            RunOp::Succeed => "its file is stored",
            RunOp::Fail => "its file cannot be written",
        }
    }

    fn done(self) -> &'static str {
        match self {
            RunOp::Start => "started",
            RunOp::Succeed => "completed",
            RunOp::Fail => "failed",
        }
    }

    fn requested(self) -> bool {
        false
    }
}

pub const REPORT_RUN: Table<S, RunOp> = Table {
    resource: "report run",
    states: &[S::Queued, S::Running, S::Succeeded, S::Failed],
    moves: &[
        (RunOp::Start, &[S::Queued, S::Running], S::Running),
        (RunOp::Succeed, &[S::Running], S::Succeeded),
        (RunOp::Fail, &[S::Queued, S::Running], S::Failed),
    ],
    // never answered: no request moves a run
    refused: |_| InternalCode::ReportRunNotFound,
};

#[cfg(test)]
mod tests {
    /// The Reports tag of every document publishes this table.
    #[test]
    fn the_documents_publish_the_table() {
        for document in crate::wire::DOCUMENTS {
            let tag = crate::states::tag_description(document, "Reports");
            assert!(tag.contains(&super::REPORT_RUN.markdown()), "the Reports tag lacks the table:\n{}", super::REPORT_RUN.markdown());
        }
    }
}
