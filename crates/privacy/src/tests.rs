//! End-to-end tests of `PrivacyFilter`: hook payloads, step order, idempotency, generated input.

use serde_json::{Value, json};

use super::secret_tests::{ALNUM, B64, B64URL, FILTER, HEX, UPPER_NUM, fake};
use super::{DEFAULT_MAX_FIELD_BYTES, FilterReport, MIN_FIELD_BYTES, PrivacyConfig, PrivacyFilter};

fn filter_with_max(max_field_bytes: usize) -> PrivacyFilter {
    PrivacyFilter::new(PrivacyConfig {
        max_field_bytes,
        ..PrivacyConfig::default()
    })
}

fn keys(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                keys(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

fn all_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Object(map) => map.values().for_each(|v| all_strings(v, out)),
        Value::Array(items) => items.iter().for_each(|v| all_strings(v, out)),
        _ => {}
    }
}

#[test]
fn config_defaults_and_filter_is_shareable() {
    let config = PrivacyConfig::default();
    assert!(config.skip_tools.is_empty());
    assert_eq!(config.max_field_bytes, 16 * 1024);
    assert_eq!(DEFAULT_MAX_FIELD_BYTES, 16 * 1024);
    fn shareable<T: Send + Sync + 'static>() {}
    shareable::<PrivacyFilter>();
    let parsed: PrivacyConfig = serde_json::from_str(r#"{"skip_tools": ["Read"]}"#).unwrap_or_default();
    assert_eq!(parsed.skip_tools, vec!["Read".to_string()]);
    assert_eq!(parsed.max_field_bytes, DEFAULT_MAX_FIELD_BYTES);
}

#[test]
fn skip_list_comes_from_config() {
    let filter = PrivacyFilter::new(PrivacyConfig {
        skip_tools: vec!["WebFetch".into(), "mcp__secret__*".into()],
        ..PrivacyConfig::default()
    });
    assert!(filter.is_skipped_tool("webfetch"));
    assert!(filter.is_skipped_tool("MCP__SECRET__get_password"));
    assert!(!filter.is_skipped_tool("Bash"));
    assert!(!FILTER.is_skipped_tool("Bash"));
}

#[test]
fn filter_value_cleans_a_claude_code_post_tool_use_payload() {
    let ghp = ["gh", "p_", &fake(ALNUM, 36, 300)].concat();
    let ant = ["sk-an", "t-api03-", &fake(B64URL, 93, 301)].concat();
    let mcp_key = format!("plain{}", fake(ALNUM, 12, 302));
    let aws = ["AK", "IA", &fake(UPPER_NUM, 16, 303)].concat();
    let mut payload = json!({
        "session_id": "0b7c2f1e-7d4a-4a55-9d0b-6f3d2a1c9e88",
        "transcript_path": "/home/dev/.claude/projects/cairn/0b7c2f1e.jsonl",
        "cwd": "/home/dev/cairn",
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {
            "command": "cat .env && ./deploy.sh",
            "description": "Show env and deploy",
            "timeout": 120000,
            "api_key": mcp_key,
            "api_key_ref": "$API_KEY"
        },
        "tool_response": {
            "stdout": format!("NODE_ENV=production\nGITHUB_TOKEN={ghp}\n"),
            "stderr": "<private>internal hostnames</private>warning: slow",
            "interrupted": false,
            "isImage": false,
            "nested": [[{"deep": [format!("key {ant} end"), null, 1.5]}], []],
            "structuredPatch": [{"lines": [format!("+aws_key = {aws}"), "+fn main() {}"]}]
        }
    });
    let mut keys_before = Vec::new();
    keys(&payload, &mut keys_before);
    let report = FILTER.filter_value(&mut payload);
    let mut keys_after = Vec::new();
    keys(&payload, &mut keys_after);
    assert_eq!(keys_before, keys_after, "keys must be untouched");

    let mut strings = Vec::new();
    all_strings(&payload, &mut strings);
    for secret in [&ghp, &ant, &mcp_key, &aws, &"internal hostnames".to_string()] {
        assert!(
            strings.iter().all(|s| !s.contains(secret.as_str())),
            "{secret} left"
        );
    }
    assert_eq!(report.private_spans, 1);
    assert_eq!(report.redactions.get("github_token"), Some(&1));
    assert_eq!(report.redactions.get("anthropic_key"), Some(&1));
    assert_eq!(report.redactions.get("aws_access_key"), Some(&1));
    assert_eq!(report.redactions.get("env_assignment"), Some(&1));
    assert_eq!(report.redaction_count(), 4, "{report:?}");
    assert_eq!(report.elided_bytes, 0);

    let resp = &payload["tool_response"];
    assert_eq!(
        resp["stdout"],
        "NODE_ENV=production\nGITHUB_TOKEN=[REDACTED:github_token]\n"
    );
    assert_eq!(resp["stderr"], "warning: slow");
    assert_eq!(
        resp["nested"][0][0]["deep"][0],
        "key [REDACTED:anthropic_key] end"
    );
    assert_eq!(resp["nested"][0][0]["deep"][2], 1.5);
    assert_eq!(resp["structuredPatch"][0]["lines"][1], "+fn main() {}");
    assert_eq!(payload["tool_input"]["api_key"], "[REDACTED:env_assignment]");
    assert_eq!(payload["tool_input"]["api_key_ref"], "$API_KEY");
    assert_eq!(payload["tool_input"]["timeout"], 120000);
    assert_eq!(payload["tool_input"]["command"], "cat .env && ./deploy.sh");
    assert_eq!(payload["session_id"], "0b7c2f1e-7d4a-4a55-9d0b-6f3d2a1c9e88");

    let before_second = payload.clone();
    let second = FILTER.filter_value(&mut payload);
    assert!(second.is_clean(), "{second:?}");
    assert_eq!(payload, before_second);
}

#[test]
fn string_values_under_secret_keys_are_redacted_whole() {
    let mut value = json!({
        "headers": {"Authorization": "Bearer not-random-enough", "Accept": "application/json"},
        "db": {"password": "admin", "passwordHint": "the usual one", "user": "bob"},
        "author": "Jane Doe",
        "auth_mode": "token",
        "max_tokens": 4096,
        "api_key": "$OPENAI_API_KEY",
        "secrets": ["listed values are not keyed"],
        "client_secret": ""
    });
    let report = FILTER.filter_value(&mut value);
    assert_eq!(value["headers"]["Authorization"], "[REDACTED:env_assignment]");
    assert_eq!(value["db"]["password"], "[REDACTED:env_assignment]");
    assert_eq!(value["db"]["passwordHint"], "[REDACTED:env_assignment]");
    assert_eq!(report.redactions.get("env_assignment"), Some(&3), "{report:?}");
    assert_eq!(value["headers"]["Accept"], "application/json");
    assert_eq!(value["db"]["user"], "bob");
    assert_eq!(value["author"], "Jane Doe");
    assert_eq!(value["auth_mode"], "token");
    assert_eq!(value["api_key"], "$OPENAI_API_KEY");
    assert_eq!(value["secrets"][0], "listed values are not keyed");
    assert_eq!(value["client_secret"], "");
}

/// An MCP tool's answer as a hook sends it: a service-account key as an
/// object, at some depth, beside values that must stay.
#[test]
fn secret_named_keys_are_redacted_at_any_depth_of_a_structured_payload() {
    let mut payload = json!({
        "hook_event_name": "PostToolUse",
        "tool_name": "mcp__gcp__create_key",
        "tool_input": {"account": "bot@demo.iam.gserviceaccount.com"},
        "tool_response": {
            "key": {
                "type": "service_account",
                "private_key_id": "4788ab12cd34ef56",
                "private_key": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
                "client_id": "104235468612345678901",
                "project_id": "demo"
            },
            "aws": [{"credentials": {"secret": "wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEY"}, "region": "eu-west-1"}],
            "login": {"password": "correct horse", "clientSecret": "s3cr3t-value", "token": "tok_8f7a6b5c",
                      "apiKey": "k-1234-5678", "secret_pin": 48213377, "retries": 3}
        }
    });
    let report = FILTER.filter_value(&mut payload);
    let key = &payload["tool_response"]["key"];
    assert_eq!(key["private_key_id"], "[REDACTED:env_assignment]");
    assert_eq!(key["private_key"], "[REDACTED:env_assignment]");
    assert_eq!(key["client_id"], "104235468612345678901");
    assert_eq!(key["project_id"], "demo");
    assert_eq!(key["type"], "service_account");
    let aws = &payload["tool_response"]["aws"][0];
    assert_eq!(aws["credentials"]["secret"], "[REDACTED:env_assignment]");
    assert_eq!(aws["region"], "eu-west-1");
    let login = &payload["tool_response"]["login"];
    for field in ["password", "clientSecret", "token", "apiKey", "secret_pin"] {
        assert_eq!(login[field], "[REDACTED:env_assignment]", "{field}");
    }
    assert_eq!(login["retries"], 3);
    assert_eq!(
        payload["tool_input"]["account"],
        "bot@demo.iam.gserviceaccount.com"
    );
    assert_eq!(report.redactions.get("env_assignment"), Some(&8), "{report:?}");
    let text = payload.to_string();
    for secret in [
        "4788ab12cd34ef56",
        "wJalrXUtnFEMI",
        "correct horse",
        "48213377",
        "tok_8f7a6b5c",
    ] {
        assert!(!text.contains(secret), "{secret} kept in {text}");
    }
}

#[test]
fn filter_value_handles_scalars_empty_and_deep_values() {
    for mut v in [
        json!(null),
        json!(true),
        json!(3),
        json!(""),
        json!([]),
        json!({}),
        json!([[[[""]]]]),
    ] {
        let before = v.clone();
        assert!(FILTER.filter_value(&mut v).is_clean());
        assert_eq!(v, before);
    }
    let mut top = json!("AKIA");
    assert!(FILTER.filter_value(&mut top).is_clean());

    // Deep nesting is walked without recursion. Built and dropped on a big
    // stack because serde_json's own Drop is recursive.
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024 * 1024)
        .spawn(|| {
            let mut deep = json!("<private>x</private>y");
            for _ in 0..20_000 {
                deep = Value::Array(vec![deep]);
            }
            let report = FILTER.filter_value(&mut deep);
            let mut inner = &deep;
            while let Value::Array(items) = inner {
                inner = &items[0];
            }
            (report.private_spans, inner.as_str().map(str::to_owned))
        })
        .expect("spawn");
    let (spans, inner) = handle.join().expect("no panic");
    assert_eq!(spans, 1);
    assert_eq!(inner.as_deref(), Some("y"));
}

#[test]
fn steps_run_in_order_strip_redact_cap() {
    // A secret inside a private span is stripped, not redacted.
    let key = ["gh", "p_", &fake(ALNUM, 36, 310)].concat();
    let (out, report) = FILTER.filter_text(&format!("a <private>{key}</private> b"));
    assert_eq!(out, "a  b");
    assert_eq!(report.private_spans, 1);
    assert_eq!(report.redaction_count(), 0);

    // A huge private span does not count against the size budget.
    let filter = filter_with_max(100);
    let text = format!("head <private>{}</private> tail", "x".repeat(10_000));
    let (out, report) = filter.filter_text(&text);
    assert_eq!(out, "head  tail");
    assert_eq!(report.elided_bytes, 0);

    // A secret is redacted before the cap cuts, even one spanning the cut.
    let pem_body = fake(B64, 5_000, 311);
    let text = format!(
        "{}-----BEGIN EC PRIVATE KEY-----\n{pem_body}\n-----END EC PRIVATE KEY-----{}",
        "start ".repeat(300),
        " end".repeat(300)
    );
    let (out, report) = filter.filter_text(&text);
    assert!(out.len() <= 100, "{}", out.len());
    assert!(!out.contains(&pem_body[..20]) && !out.contains(&pem_body[pem_body.len() - 20..]));
    assert_eq!(report.redactions.get("private_key"), Some(&1));
    assert!(report.elided_bytes > 0);
    assert!(out.contains("…[cairn: elided "));
}

#[test]
fn size_cap_through_the_filter() {
    let filter = filter_with_max(1_000);
    let exact = "y".repeat(1_000);
    let (out, report) = filter.filter_text(&exact);
    assert_eq!(out, exact);
    assert!(report.is_clean());
    let over = "y".repeat(1_001);
    let (out, report) = filter.filter_text(&over);
    assert!(out.len() <= 1_000);
    assert!(out.contains(&format!("\n…[cairn: elided {} bytes]…\n", report.elided_bytes)));
    assert_eq!(
        out.len() - format!("\n…[cairn: elided {} bytes]…\n", report.elided_bytes).len()
            + report.elided_bytes as usize,
        1_001
    );
    let multibyte = "日本語🦀".repeat(1_000);
    let (out, report) = filter.filter_text(&multibyte);
    assert!(out.len() <= 1_000 && report.elided_bytes > 0);
    assert!(out.starts_with("日本語🦀"));
    assert!(out.ends_with("日本語🦀"));
    let (again, second) = filter.filter_text(&out);
    assert_eq!(again, out);
    assert!(second.is_clean());
}

#[test]
fn entirely_private_through_the_filter() {
    assert!(FILTER.is_entirely_private("<private>x</private>  "));
    assert!(FILTER.is_entirely_private("\n<Private>\nline\n</Private>\n"));
    assert!(!FILTER.is_entirely_private(""));
    assert!(!FILTER.is_entirely_private("x <private>y</private>"));
}

#[test]
fn filter_text_on_clean_input_reports_nothing() {
    for text in [
        "",
        "a",
        "plain words",
        "日本語 🦀",
        &"z".repeat(DEFAULT_MAX_FIELD_BYTES),
    ] {
        let (out, report) = FILTER.filter_text(text);
        assert_eq!(out, text);
        assert_eq!(report, FilterReport::default());
    }
}

/// Small deterministic generator for the property test.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() as usize) % n.max(1)
    }
}

const FRAGMENTS: &[&str] = &[
    "a",
    "word ",
    " ",
    "  ",
    "\n",
    "\r\n",
    "\t",
    "é",
    "日本",
    "🦀",
    "\u{0}",
    "\u{feff}",
    "<private>",
    "</private>",
    "<PRIVATE>",
    "<private x=\"1\">",
    "<cairn-context>",
    "</cairn-context>",
    "<claude-mem-context>",
    "</claude-mem-context>",
    "<",
    ">",
    "/",
    "AKIA",
    "ASIA",
    "sk-ant-",
    "sk-",
    "sk-proj-",
    "ghp_",
    "gho_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "sk_live_",
    "AIza",
    "eyJ",
    ".",
    "-",
    "_",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----",
    "\\n",
    "PASSWORD=",
    "export API_KEY=",
    "\"password\": \"",
    "\"",
    "'",
    "password: ",
    "  db_token: ",
    "postgres://",
    "user:",
    "@",
    "://",
    "Authorization: Bearer ",
    "x-api-key: ",
    "Bearer ",
    "AccountKey=",
    "aws_secret_access_key = ",
    "\"private_key_id\": \"",
    "AZURE_CLIENT_SECRET=",
    "hooks.slack.com/services/",
    "[REDACTED:",
    "]",
    "[REDACTED:jwt]",
    "\n…[cairn: elided 5 bytes]…\n",
    "=",
    ":",
    "$",
    "${X}",
    "{",
    "}",
    "#",
    ";",
    "&",
];

/// Where two strings first differ, with some context (keeps failure output short).
fn first_difference(a: &str, b: &str) -> String {
    let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let window = |s: &str| {
        let start = (at.saturating_sub(80)..=at)
            .find(|i| s.is_char_boundary(*i))
            .unwrap_or(0);
        let end = (at + 160..s.len())
            .find(|i| s.is_char_boundary(*i))
            .unwrap_or(s.len());
        s[start.min(s.len())..end.max(start.min(s.len()))].to_string()
    };
    format!("at byte {at}:\n  {:?}\n  {:?}", window(a), window(b))
}

fn generate(rng: &mut Lcg) -> String {
    let target = rng.below(4_000);
    let mut s = String::new();
    while s.len() < target {
        match rng.below(4) {
            0 => {
                let alphabet = [ALNUM, UPPER_NUM, HEX, B64, B64URL][rng.below(5)];
                let len = rng.below(100);
                s.push_str(&fake(alphabet, len, rng.next()));
            }
            _ => s.push_str(FRAGMENTS[rng.below(FRAGMENTS.len())]),
        }
    }
    s
}

#[test]
fn generated_strings_never_panic_respect_the_cap_and_are_idempotent() {
    let filters: Vec<(usize, PrivacyFilter)> = [0, 1, 7, 40, 64, 200, 1_000, DEFAULT_MAX_FIELD_BYTES]
        .into_iter()
        .map(|max| (max.max(MIN_FIELD_BYTES), filter_with_max(max)))
        .collect();
    let mut rng = Lcg(42);
    for case in 0..400 {
        let input = generate(&mut rng);
        let (max, filter) = &filters[case % filters.len()];
        let (once, report) = filter.filter_text(&input);
        assert!(once.len() <= *max, "case {case}: {} > {max}", once.len());
        if report.is_clean() {
            assert!(
                once == input,
                "case {case}: clean but {}",
                first_difference(&input, &once)
            );
        }
        let (twice, second) = filter.filter_text(&once);
        assert!(
            twice == once,
            "case {case}: not idempotent: {}",
            first_difference(&once, &twice)
        );
        assert!(second.is_clean(), "case {case}: second pass {second:?}");
        let _ = filter.is_entirely_private(&input);
        let _ = filter.is_skipped_tool(&input);

        let mut value = json!({"a": [input.clone(), {"password": input, "n": case}], "b": null});
        filter.filter_value(&mut value);
        let mut strings = Vec::new();
        all_strings(&value, &mut strings);
        assert!(strings.iter().all(|s| s.len() <= *max), "case {case}");
    }
}
