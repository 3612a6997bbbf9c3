//! The group-commit path for the commonest event: a tool call (or any
//! event that neither opens nor ends a turn) of a session already stored,
//! written with whatever else arrived meanwhile (`group_commit.rs`).
//! Same outcome as the transaction path (`write.rs`); anything it cannot
//! decide alone — a new session, a turn boundary, a plan — goes to the
//! transaction path instead.

use uuid::Uuid;

use super::{
    EventKind, IncomingEvent, SessionTarget,
    plan::{JobPlan, plan},
    write::Written,
};
use crate::{
    engine::Engine,
    error::Result,
    store::{events::EventRow, turn_events::TurnEventInput},
    tenancy::ProjectRef,
};

/// Whether the event can take the one-statement path.
fn eligible(ev: &IncomingEvent) -> bool {
    let in_turn = !matches!(
        ev.kind,
        EventKind::SessionStart | EventKind::UserPrompt | EventKind::SessionEnd
    ) && ev.kind.is_turn_scoped();
    in_turn
        && matches!(ev.session, SessionTarget::Agent(_))
        && matches!(plan(ev.kind, ev.generate), JobPlan::JoinTurn | JobPlan::None)
        && super::plan_capture::detect(ev).is_none()
}

/// Stores `ev` in one statement when it can; `None` sends it down the
/// transaction path.
pub async fn store(state: &Engine, project: ProjectRef, ev: &IncomingEvent) -> Result<Option<Written>> {
    let SessionTarget::Agent(key) = &ev.session else {
        return Ok(None);
    };
    if !eligible(ev) {
        return Ok(None);
    }
    let input = TurnEventInput {
        id: Uuid::now_v7(),
        team_id: project.team_id,
        project_id: project.id,
        agent: key.agent.clone(),
        external_session_id: key.external_session_id.clone(),
        job_id: Uuid::now_v7(),
        source_adapter: ev.source_adapter.clone(),
        source_type: ev.source_type.clone(),
        event_type: ev.event_type.clone(),
        platform_source: ev.platform_source.clone(),
        source_event_id: ev.source_event_id.clone(),
        key_per_turn: ev.key_per_turn,
        idempotency_key: ev.idempotency_key.clone(),
        tool_name: ev.tool_name.clone(),
        payload: ev.payload.clone(),
        metadata: ev.metadata.clone(),
        occurred_at: ev.occurred_at,
        member_id: ev.actor.member_id,
        generate: plan(ev.kind, ev.generate) == JobPlan::JoinTurn,
        seal_now: ev.seal_now,
        traceparent: cairn_telemetry::otel::current_traceparent(),
    };
    let stored = state.group_commit.store(input).await?;
    let Some(stored) = stored else {
        return Ok(None);
    };
    if stored.private_turn() {
        return Ok(Some(Written::PrivateTurn));
    }
    let Some((id, received_at, created_at)) = stored.stored else {
        return Ok(Some(Written::Duplicate {
            key: stored.idempotency_key,
        }));
    };
    let session = stored.session;
    let event = EventRow {
        id,
        team_id: project.team_id,
        project_id: project.id,
        session_id: Some(session.id),
        job_id: stored.job.as_ref().map(|j| j.id),
        source_adapter: ev.source_adapter.clone(),
        source_type: ev.source_type.clone(),
        event_type: ev.event_type.clone(),
        platform_source: ev.platform_source.clone(),
        source_event_id: ev.source_event_id.clone(),
        prompt_number: Some(session.prompt_counter),
        tool_name: ev.tool_name.clone(),
        payload: serde_json::Value::Null,
        metadata: serde_json::Value::Null,
        occurred_at: ev.occurred_at,
        received_at,
        created_at,
    };
    super::observe::stored(ev);
    let due = stored.job.iter().filter(|j| j.is_due()).map(|j| j.id).collect();
    Ok(Some(Written::Stored {
        event,
        session: Some(session),
        job: stored.job,
        due,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sessions::SessionKey;

    fn event(kind: EventKind, session: SessionTarget) -> IncomingEvent {
        IncomingEvent {
            source_adapter: "claude-code".into(),
            source_type: "hook".into(),
            event_type: "x".into(),
            kind,
            session,
            platform_source: None,
            source_event_id: None,
            idempotency_key: "k".into(),
            key_per_turn: false,
            tool_name: Some("Read".into()),
            prompt: None,
            payload: serde_json::json!({"tool_input": {"file_path": "src/a.rs"}}),
            metadata: serde_json::json!({}),
            occurred_at: chrono::Utc::now(),
            generate: true,
            seal_now: false,
            actor: Default::default(),
        }
    }

    #[test]
    fn only_events_inside_a_turn_of_an_agent_session_take_one_statement() {
        let agent = || SessionTarget::Agent(SessionKey::default());
        assert!(eligible(&event(EventKind::PostTool, agent())));
        assert!(eligible(&event(EventKind::PreTool, agent())));
        assert!(eligible(&event(EventKind::ToolFailure, agent())));
        for kind in [
            EventKind::SessionStart,
            EventKind::UserPrompt,
            EventKind::Stop,
            EventKind::SessionEnd,
            EventKind::SubagentStart,
        ] {
            assert!(!eligible(&event(kind, agent())), "{kind:?}");
        }
        assert!(!eligible(&event(
            EventKind::PostTool,
            SessionTarget::Server(Uuid::nil())
        )));
        assert!(!eligible(&event(EventKind::PostTool, SessionTarget::None)));
        let mut plan_write = event(EventKind::PostTool, agent());
        plan_write.tool_name = Some("Write".into());
        plan_write.payload =
            serde_json::json!({"tool_input": {"file_path": "/h/.claude/plans/p.md", "content": "x"}});
        assert!(!eligible(&plan_write));
    }
}
