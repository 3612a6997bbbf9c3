//! Coalescing: which generation job an event creates or joins. One
//! observation job per agent turn (not per tool call), one summary job per
//! turn that ends with Stop, one session summary at SessionEnd.

use super::EventKind;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobPlan {
    /// No job (session start, pre-tool, compaction, …).
    None,
    /// Join the turn's open observation job, creating it when needed.
    JoinTurn,
    /// The turn ended: make its observation job due and create its summary job.
    EndTurn,
    /// The session ended: make the last turn's job due and summarise the session.
    EndSession,
}

pub fn plan(kind: EventKind, generate: bool) -> JobPlan {
    if !generate {
        return JobPlan::None;
    }
    match kind {
        EventKind::PostTool | EventKind::ToolFailure | EventKind::Other => JobPlan::JoinTurn,
        EventKind::Stop => JobPlan::EndTurn,
        EventKind::SessionEnd => JobPlan::EndSession,
        EventKind::SessionStart
        | EventKind::UserPrompt
        | EventKind::PreTool
        | EventKind::SubagentStop
        | EventKind::PreCompact
        | EventKind::SubagentStart
        | EventKind::Notification => JobPlan::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_events_coalesce_and_turn_ends_summarise() {
        assert_eq!(plan(EventKind::PostTool, true), JobPlan::JoinTurn);
        assert_eq!(plan(EventKind::ToolFailure, true), JobPlan::JoinTurn);
        assert_eq!(plan(EventKind::Stop, true), JobPlan::EndTurn);
        assert_eq!(plan(EventKind::SessionEnd, true), JobPlan::EndSession);
        assert_eq!(plan(EventKind::PreTool, true), JobPlan::None);
        assert_eq!(plan(EventKind::UserPrompt, true), JobPlan::None);
        assert_eq!(plan(EventKind::PostTool, false), JobPlan::None);
    }
}
