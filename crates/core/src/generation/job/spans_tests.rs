use cairn_shared::jobs::JobType;
use chrono::Utc;
use serde_json::{Value, json};
use uuid::Uuid;

use super::*;
use crate::generation::material::{EventRecord, Material};

fn event(tool: &str, input: Value, response: Value) -> EventRecord {
    EventRecord {
        event_type: "PostToolUse".into(),
        tool_name: Some(tool.into()),
        prompt_number: Some(1),
        payload: json!({ "cwd": "/w/app", "tool_input": input, "tool_response": response }),
        occurred_at: Utc::now(),
    }
}

fn material(events: Vec<EventRecord>) -> Material {
    Material {
        job_id: Uuid::nil(),
        job_type: JobType::Observations,
        project: "p".into(),
        agent: None,
        cwd: Some("/w/app".into()),
        prompt_number: Some(1),
        events,
    }
}

fn read(path: &str, start: i64, count: i64, total: i64) -> EventRecord {
    event(
        "Read",
        json!({ "file_path": path }),
        json!({ "type": "text", "file": { "filePath": path, "startLine": start, "numLines": count, "totalLines": total } }),
    )
}

fn edit(path: &str, original: &str, hunks: Value) -> EventRecord {
    event(
        "Edit",
        json!({ "file_path": path, "old_string": "a", "new_string": "b" }),
        json!({ "filePath": path, "originalFile": original, "structuredPatch": hunks }),
    )
}

fn sha(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

#[test]
fn a_partial_read_is_a_span_and_a_whole_read_is_none() {
    let code = TurnCode::of(&material(vec![
        read("/w/app/src/a.rs", 40, 21, 300),
        read("/w/app/src/b.rs", 1, 50, 50),
    ]));
    assert_eq!(code.lines("/w/app/src/a.rs"), Some(&[(40, 60)][..]));
    // The observation may name the file relative to the working directory.
    assert_eq!(code.lines("src/a.rs"), Some(&[(40, 60)][..]));
    assert_eq!(code.lines("src/b.rs"), None);
    assert_eq!(code.lines("src/c.rs"), None);
    assert_eq!(
        code.lines_json(["src/a.rs".to_string(), "src/b.rs".to_string()].iter()),
        json!({ "src/a.rs": [[40, 60]] })
    );
}

#[test]
fn edits_move_earlier_spans_and_add_their_own() {
    let hunk = json!([{ "oldStart": 5, "oldLines": 2, "newStart": 5, "newLines": 5, "lines": [] }]);
    let code = TurnCode::of(&material(vec![
        read("/w/app/src/a.rs", 40, 21, 300),
        edit("/w/app/src/a.rs", "old text\n", hunk),
    ]));
    // Lines 40-60 moved down by the three lines the hunk added above them.
    assert_eq!(code.lines("src/a.rs"), Some(&[(5, 9), (43, 63)][..]));
    assert_eq!(
        code.edits_json(),
        json!({ "src/a.rs": { "before": sha("old text\n"), "hunks": [[[5, 2, 5, 5]]] } })
    );
}

#[test]
fn an_edit_over_a_span_widens_it() {
    let hunk = json!([{ "oldStart": 55, "oldLines": 10, "newStart": 55, "newLines": 2, "lines": [] }]);
    let code = TurnCode::of(&material(vec![
        read("/w/app/src/a.rs", 40, 21, 300),
        edit("/w/app/src/a.rs", "x", hunk),
    ]));
    assert_eq!(code.lines("src/a.rs"), Some(&[(40, 56)][..]));
}

#[test]
fn a_write_or_an_edit_without_a_patch_changes_the_file_in_unknown_places() {
    let code = TurnCode::of(&material(vec![
        read("/w/app/src/a.rs", 40, 21, 300),
        event(
            "Write",
            json!({ "file_path": "/w/app/src/a.rs" }),
            json!({ "type": "update" }),
        ),
        edit("/w/app/src/b.rs", "x", json!([])),
    ]));
    assert_eq!(code.lines("src/a.rs"), None);
    assert_eq!(code.lines("src/b.rs"), None);
    let edits = code.edits_json();
    assert_eq!(edits["src/a.rs"]["before"], Value::Null, "{edits}");
    assert_eq!(edits["src/b.rs"]["before"], Value::Null, "{edits}");
}

#[test]
fn many_spans_become_one() {
    let events = (0..12)
        .map(|i| read("/w/app/src/a.rs", 1 + i * 10, 2, 500))
        .collect();
    let code = TurnCode::of(&material(events));
    let spans = code.lines("src/a.rs").unwrap();
    assert!(spans.len() <= MAX_SPANS, "{spans:?}");
    for i in 0..12 {
        let (a, b) = (1 + i * 10, 2 + i * 10);
        assert!(spans.iter().any(|s| s.0 <= a && b <= s.1), "{a}-{b} in {spans:?}");
    }
    assert_eq!(
        merged((0..12).map(|i| (1 + i * 10, 2 + i * 10)).collect()),
        vec![(1, 112)]
    );
}

#[test]
fn line_mapping_through_hunks() {
    // Two hunks: lines 10-11 replaced by four lines, an insertion after line 30.
    let hunks = [[10, 2, 10, 4], [30, 0, 33, 3]];
    assert_eq!(map_line(5, &hunks, false), 5);
    assert_eq!(map_line(20, &hunks, false), 22);
    assert_eq!(map_line(31, &hunks, false), 36);
    assert_eq!(map_line(11, &hunks, true), 13);
    assert_eq!(
        merged(vec![(5, 9), (1, 3), (4, 4), (20, 30)]),
        vec![(1, 9), (20, 30)]
    );
}
