//! Retrieval: for each question, the rank of the first item that carries
//! its fact, in (a) `GET /v1/search` hits (summaries included) per search
//! mode, (b) the memory injected at a new session's SessionStart, and (c)
//! the related memories answered on a new session's first prompt when that
//! prompt is the question.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::{
    data::{Check, Dataset},
    events::text_of,
    replay::Replayed,
};

/// Hits asked of search per question (MRR is counted over these).
pub const SEARCH_LIMIT: usize = 10;

/// Rank (1-based) of the first relevant item per question, `None` when absent.
#[derive(Clone, Debug, Default)]
pub struct Ranks {
    /// Mode → (fact id, question) → rank.
    pub search: HashMap<String, HashMap<(String, usize), Option<usize>>>,
    pub session_start: HashMap<(String, usize), Option<usize>>,
    pub prompt_context: HashMap<(String, usize), Option<usize>>,
    /// (fact id, question) → what the later session was given in all.
    pub moment: HashMap<(String, usize), Moment>,
    /// Project slug → (unrelated prompts asked, how many got memory injected).
    pub unrelated: HashMap<String, (usize, usize)>,
}

/// Prompts no project of the data is about: each should inject nothing.
pub const UNRELATED_PROMPTS: [&str; 12] = [
    "write a haiku about autumn leaves",
    "what is the capital of France",
    "explain how binary search works",
    "translate good morning into Spanish",
    "suggest a name for a grey cat",
    "summarise the plot of Hamlet in two sentences",
    "convert 72 Fahrenheit to Celsius",
    "how many days are there in a leap year",
    "recommend a book about sailing",
    "what is the time complexity of quicksort",
    "write a limerick about a lighthouse",
    "give me a recipe for pancakes",
];

/// The moment of need: a later session starts (SessionStart) and its first
/// prompt is the question (UserPromptSubmit). What reached the agent.
#[derive(Clone, Copy, Debug, Default)]
pub struct Moment {
    /// The fact was in what either injected.
    pub reached: bool,
    /// Items injected (SessionStart's plus the prompt's).
    pub items: usize,
    /// Of them, items that hold the fact.
    pub relevant: usize,
    /// Tokens injected (characters / 4).
    pub tokens: usize,
}

/// The search modes a server answers.
#[derive(Clone, Debug)]
pub struct Modes {
    /// Always `fulltext`; `vector` and `hybrid` with embeddings.
    pub list: Vec<String>,
    /// Whether search takes `mode` at all (else it is not sent).
    pub param: bool,
    /// Why a mode is missing.
    pub notes: Vec<String>,
}

/// Asks the server which modes it answers: an unknown `mode` refused means
/// the parameter exists; `mode=vector` answered means embeddings are on.
pub async fn modes(replayed: &Replayed, project: &str) -> anyhow::Result<Modes> {
    let probe = |mode: &str| format!("/v1/search?project={project}&query=probe&limit=1&mode={mode}");
    let fulltext = Modes {
        list: vec!["fulltext".into()],
        param: false,
        notes: vec!["search has no `mode` parameter on this build: fulltext only".into()],
    };
    let (unknown, _) = replayed.get(&probe("no-such-mode")).await?;
    if unknown == 200 {
        return Ok(fulltext);
    }
    let (vector, body) = replayed.get(&probe("vector")).await?;
    if vector != 200 {
        let why = body["error"]["message"].as_str().unwrap_or("refused").to_string();
        return Ok(Modes {
            param: true,
            notes: vec![format!(
                "mode=vector answered {vector} ({why}): embeddings unavailable, fulltext only"
            )],
            ..fulltext
        });
    }
    Ok(Modes {
        list: vec!["fulltext".into(), "vector".into(), "hybrid".into()],
        param: true,
        notes: Vec::new(),
    })
}

fn rank(items: &[String], check: &Check) -> Option<usize> {
    items.iter().position(|i| check.found_in(i)).map(|p| p + 1)
}

/// Measures every question of `data` against the replayed server. The
/// generator must be stopped: the prompts posted here must write nothing.
pub async fn measure(replayed: &Replayed, data: &Dataset, modes: &Modes) -> anyhow::Result<Ranks> {
    let mut ranks = Ranks::default();
    for session in &data.sessions {
        for fact in &session.facts {
            for (q, question) in fact.questions.iter().enumerate() {
                for mode in &modes.list {
                    let param = modes.param.then_some(mode.as_str());
                    let scored = search(replayed, &session.project, question, param).await?;
                    let hits: Vec<String> =
                        scored.iter().take(SEARCH_LIMIT).map(|(t, _)| t.clone()).collect();
                    let found = rank(&hits, &fact.check);
                    if std::env::var("CAIRN_RECALL_SHOW_SCORES").is_ok() {
                        show_scores(&fact.id, q, mode, &scored, &fact.check);
                    }
                    if std::env::var("CAIRN_RECALL_SHOW_MISSES").is_ok() && found.is_none_or(|r| r > 5) {
                        let top: Vec<String> = hits
                            .iter()
                            .take(5)
                            .map(|h| h.chars().take(110).collect::<String>().replace('\n', " "))
                            .collect();
                        eprintln!(
                            "search {mode} missed {} at {found:?} ({question:?}):\n  {}",
                            fact.id,
                            top.join("\n  ")
                        );
                    }
                    ranks
                        .search
                        .entry(mode.clone())
                        .or_default()
                        .insert((fact.id.clone(), q), found);
                }
            }
        }
    }
    let mut start_items: HashMap<String, Vec<String>> = HashMap::new();
    let mut start_tokens: HashMap<String, usize> = HashMap::new();
    for project in &data.projects {
        let body = json!({ "session_id": format!("recall-probe-{}", project.slug),
            "hook_event_name": "SessionStart", "source": "startup", "cwd": project.cwd,
            "transcript_path": "/home/dev/.claude/projects/probe.jsonl" });
        let answer = replayed.post_hook(&project.slug, &body, None).await?;
        let markdown = injected(&answer);
        start_tokens.insert(project.slug.clone(), markdown.chars().count() / 4);
        start_items.insert(project.slug.clone(), items(&markdown));
    }
    let mut asked = 0;
    for session in &data.sessions {
        let cwd = data
            .project(&session.project)
            .map(|p| p.cwd.clone())
            .unwrap_or_default();
        for fact in &session.facts {
            for (q, question) in fact.questions.iter().enumerate() {
                let key = (fact.id.clone(), q);
                let start = start_items
                    .get(&session.project)
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                ranks.session_start.insert(key.clone(), rank(start, &fact.check));
                asked += 1;
                let body = json!({ "session_id": format!("recall-ask-{asked}"),
                    "hook_event_name": "UserPromptSubmit", "prompt": question, "cwd": cwd,
                    "transcript_path": "/home/dev/.claude/projects/ask.jsonl" });
                let answer = replayed.post_hook(&session.project, &body, None).await?;
                let markdown = injected(&answer);
                let prompt = items(&markdown);
                let in_prompt = rank(&prompt, &fact.check);
                let show = std::env::var("CAIRN_RECALL_SHOW_MISSES").ok();
                if show.as_deref() == Some("all") || (in_prompt.is_none() && show.is_some()) {
                    eprintln!(
                        "prompt context {} {} ({question:?}): {}",
                        if in_prompt.is_some() { "found" } else { "missed" },
                        fact.id,
                        if markdown.is_empty() {
                            "nothing injected"
                        } else {
                            &markdown
                        }
                    );
                }
                let all: Vec<&String> = start.iter().chain(&prompt).collect();
                ranks.moment.insert(
                    key.clone(),
                    Moment {
                        reached: rank(start, &fact.check).is_some() || in_prompt.is_some(),
                        items: all.len(),
                        relevant: all.iter().filter(|i| fact.check.found_in(i)).count(),
                        tokens: start_tokens.get(&session.project).copied().unwrap_or_default()
                            + markdown.chars().count() / 4,
                    },
                );
                ranks.prompt_context.insert(key, in_prompt);
            }
        }
    }
    for project in &data.projects {
        let mut injected_for = 0;
        for (i, prompt) in UNRELATED_PROMPTS.iter().enumerate() {
            let body = json!({ "session_id": format!("recall-unrelated-{}-{i}", project.slug),
                "hook_event_name": "UserPromptSubmit", "prompt": prompt, "cwd": project.cwd,
                "transcript_path": "/home/dev/.claude/projects/unrelated.jsonl" });
            let answer = replayed.post_hook(&project.slug, &body, None).await?;
            let markdown = injected(&answer);
            if !markdown.is_empty() {
                injected_for += 1;
                let first = items(&markdown).into_iter().next().unwrap_or_default();
                eprintln!(
                    "unrelated prompt injected memory in {}: {prompt:?} -> {}",
                    project.slug,
                    first.chars().take(120).collect::<String>().replace('\n', " ")
                );
            }
        }
        ranks
            .unrelated
            .insert(project.slug.clone(), (UNRELATED_PROMPTS.len(), injected_for));
    }
    Ok(ranks)
}

/// Prints where a fact ranks among a search's hits and the scores of
/// the best five (`CAIRN_RECALL_SHOW_SCORES`, to read a fusion by).
fn show_scores(fact: &str, q: usize, mode: &str, scored: &[(String, f64)], check: &Check) {
    let at = scored.iter().position(|(t, _)| check.found_in(t));
    let top: Vec<String> = scored
        .iter()
        .take(5)
        .map(|(t, s)| {
            format!(
                "{s:.4} {}",
                t.chars().take(70).collect::<String>().replace('\n', " ")
            )
        })
        .collect();
    eprintln!(
        "scores {fact} q{q} {mode}: fact at {:?} score {:?}\n    {}",
        at.map(|p| p + 1),
        at.map(|p| scored[p].1),
        top.join("\n    ")
    );
}

/// The hits of one search, each as its text and score, best first (the
/// first `SEARCH_LIMIT`, or 100 when scores are shown).
async fn search(
    replayed: &Replayed,
    project: &str,
    question: &str,
    mode: Option<&str>,
) -> anyhow::Result<Vec<(String, f64)>> {
    let limit = match std::env::var("CAIRN_RECALL_SHOW_SCORES") {
        Ok(_) => 100,
        Err(_) => SEARCH_LIMIT,
    };
    let mut path = format!(
        "/v1/search?project={project}&limit={limit}&summaries=true&query={}",
        encode(question)
    );
    if let Some(mode) = mode {
        path.push_str(&format!("&mode={mode}"));
    }
    let (status, body) = replayed.get(&path).await?;
    anyhow::ensure!(status == 200, "search answered {status}: {body}");
    Ok(body["results"]
        .as_array()
        .map(|hits| {
            hits.iter()
                .map(|h| (text_of(h), h["score"].as_f64().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default())
}

/// `additionalContext` of a Claude Code hook answer, or empty.
fn injected(answer: &Value) -> String {
    answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The injected markdown as its list of items, in render order: under
/// "In detail" and in a related-memory block each `### ` block is one item
/// (with its fact lines); elsewhere each `- ` line is one (a summary, an
/// index line). Headers, day lines and the footer are not items.
pub fn items(markdown: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut blocks = markdown.contains("# Related memory");
    let mut open = false;
    for line in markdown.lines() {
        if let Some(section) = line.strip_prefix("## ") {
            blocks = section.trim() == "In detail";
            open = false;
        } else if line.starts_with("# ") || line.is_empty() || line.starts_with("</cairn-context") {
            open = false;
        } else if blocks && line.starts_with("### ") {
            out.push(line.to_string());
            open = true;
        } else if blocks && open {
            if let Some(last) = out.last_mut() {
                last.push('\n');
                last.push_str(line);
            }
        } else if !blocks && line.starts_with("- ") {
            out.push(line.to_string());
        }
    }
    out
}

/// Percent-encodes a query-string value.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_items_in_render_order() {
        let md = "<cairn-context>\n# Project memory: p (Cairn)\nRecorded notes.\n\n## Recent work\n\
                  - 2024-03-02 turn: fix it; done: half-to-even\n\n## Recent observations\n### 2024-03-02\n\
                  - 10:00 change Switch money (~90 tokens) `x`\n\n## In detail\n### Title (change, t, `x`)\n\
                  sub\n- Ran `cargo test`\nnarrative 1536Mi\n\nEvery observation is shown above.\n</cairn-context>";
        let found = items(md);
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found[0].contains("half-to-even"));
        assert!(found[2].starts_with("### Title") && found[2].contains("1536Mi"));
        let related = "<cairn-context>\n# Related memory (Cairn)\nRecorded.\n### A (x)\n- fact a\n### B (y)\n- fact b\n</cairn-context>";
        assert_eq!(items(related), vec!["### A (x)\n- fact a", "### B (y)\n- fact b"]);
        assert_eq!(encode("a b&c?"), "a%20b%26c%3F");
    }
}
