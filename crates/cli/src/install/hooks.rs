//! Cairn's entries under a JSON document's `hooks` object, in the two shapes
//! agents use: nested (`{"matcher", "hooks": [handler]}` groups: Claude Code,
//! Codex, Gemini CLI) and flat (handlers directly: Cursor, Windsurf).

use jsonc_parser::cst::{CstArray, CstObject};
use serde_json::Value;

use super::json_edit::{self, Json, value_of};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Nested,
    Flat,
}

/// One event's entry as Cairn wants it.
#[derive(Debug, Clone)]
pub struct EventHook {
    pub event: &'static str,
    /// Nested shape only: the group's `matcher`, when the event takes one.
    pub matcher: Option<&'static str>,
    pub handler: Json,
}

/// Everything Cairn puts under `hooks` for one agent.
#[derive(Debug, Clone)]
pub struct HookSet {
    pub shape: Shape,
    pub events: Vec<EventHook>,
    /// Top-level properties the format needs, set only when absent (Cursor's
    /// `"version": 1`).
    pub top_level: Vec<(&'static str, Json)>,
    /// Whether a handler (a plain value) is Cairn's own.
    pub is_ours: fn(&Value) -> bool,
}

impl HookSet {
    /// The same handler on every event, with no matcher.
    pub fn uniform(
        shape: Shape,
        events: &[&'static str],
        handler: Json,
        is_ours: fn(&Value) -> bool,
    ) -> Self {
        Self {
            shape,
            events: events
                .iter()
                .map(|&event| EventHook {
                    event,
                    matcher: None,
                    handler: handler.clone(),
                })
                .collect(),
            top_level: Vec::new(),
            is_ours,
        }
    }

    /// What one event's array should hold for Cairn.
    fn entry(&self, hook: &EventHook) -> Json {
        match self.shape {
            Shape::Flat => hook.handler.clone(),
            Shape::Nested => {
                let mut props = Vec::new();
                if let Some(m) = hook.matcher {
                    props.push(("matcher", json_edit::string(m)));
                }
                props.push(("hooks", Json::Array(vec![hook.handler.clone()])));
                json_edit::object(props)
            }
        }
    }

    /// Adds Cairn's hooks, replacing older ones of its own; leaves an event
    /// alone when it already holds exactly what Cairn wants (so a second
    /// install changes no byte).
    pub fn install(&self, root: &CstObject) -> anyhow::Result<()> {
        for (name, value) in &self.top_level {
            if root.get(name).is_none() {
                root.append(name, value.clone());
            }
        }
        let hooks = json_edit::child_object(root, "hooks")?;
        for hook in &self.events {
            let array = json_edit::child_array(&hooks, hook.event)
                .map_err(|e| anyhow::anyhow!("hooks.{}: {e}", hook.event))?;
            let wanted = self.entry(hook);
            if self.holds_exactly(&array, &json_edit::to_value(&wanted)) {
                continue;
            }
            self.remove_ours(&array);
            array.append(wanted);
        }
        Ok(())
    }

    /// Removes every Cairn handler under `hooks` (whatever the event), the
    /// groups and events left empty by that, and `hooks` itself when Cairn's
    /// removal emptied it. Everything else stays as it is.
    pub fn uninstall(&self, root: &CstObject) {
        let Some(hooks_prop) = root.get("hooks") else {
            return;
        };
        let Some(hooks) = hooks_prop.object_value() else {
            return;
        };
        let mut removed_any = false;
        for prop in hooks.properties() {
            let Some(array) = prop.array_value() else { continue };
            if self.remove_ours(&array) {
                removed_any = true;
                if array.elements().is_empty() {
                    prop.remove();
                }
            }
        }
        if removed_any && hooks.properties().is_empty() {
            hooks_prop.remove();
        }
    }

    /// Whether Cairn has exactly one handler in this event, inside an entry
    /// equal to `wanted`.
    fn holds_exactly(&self, array: &CstArray, wanted: &Value) -> bool {
        let values: Vec<Value> = array.elements().iter().map(value_of).collect();
        let ours: usize = values.iter().map(|v| self.count_ours(v)).sum();
        ours == 1 && values.iter().any(|v| v == wanted)
    }

    fn count_ours(&self, entry: &Value) -> usize {
        match self.shape {
            Shape::Flat => usize::from((self.is_ours)(entry)),
            Shape::Nested => entry
                .get("hooks")
                .and_then(Value::as_array)
                .map_or(0, |hs| hs.iter().filter(|h| (self.is_ours)(h)).count()),
        }
    }

    /// Removes Cairn's handlers from one event's array (and nested groups
    /// that held only them). True when anything was removed.
    fn remove_ours(&self, array: &CstArray) -> bool {
        let mut removed = false;
        for element in array.elements() {
            match self.shape {
                Shape::Flat => {
                    if (self.is_ours)(&value_of(&element)) {
                        element.remove();
                        removed = true;
                    }
                }
                Shape::Nested => {
                    let Some(group) = element.as_object() else {
                        continue;
                    };
                    let Some(inner) = group.array_value("hooks") else {
                        continue;
                    };
                    let mut removed_here = false;
                    for handler in inner.elements() {
                        if (self.is_ours)(&value_of(&handler)) {
                            handler.remove();
                            removed_here = true;
                        }
                    }
                    if removed_here && inner.elements().is_empty() {
                        element.remove();
                    }
                    removed |= removed_here;
                }
            }
        }
        removed
    }
}

impl HookSet {
    /// In a document (as a plain value): the events holding a Cairn handler,
    /// and the commands of those handlers.
    pub fn found(&self, doc: &Value) -> (Vec<&'static str>, Vec<String>) {
        let mut events = Vec::new();
        let mut commands = Vec::new();
        for hook in &self.events {
            let Some(entries) = doc
                .get("hooks")
                .and_then(|h| h.get(hook.event))
                .and_then(Value::as_array)
            else {
                continue;
            };
            let handlers: Vec<&Value> = match self.shape {
                Shape::Flat => entries.iter().collect(),
                Shape::Nested => entries
                    .iter()
                    .filter_map(|e| e.get("hooks").and_then(Value::as_array))
                    .flatten()
                    .collect(),
            };
            let ours: Vec<&Value> = handlers.into_iter().filter(|h| (self.is_ours)(h)).collect();
            if !ours.is_empty() {
                events.push(hook.event);
            }
            commands.extend(
                ours.iter()
                    .filter_map(|h| h.get("command").and_then(Value::as_str))
                    .map(String::from),
            );
        }
        (events, commands)
    }
}
