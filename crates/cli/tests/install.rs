//! `cairn install` / `cairn uninstall` against real files: the binary runs in
//! a temporary repository with HOME and XDG_CONFIG_HOME pointed into it.

use std::{
    fs,
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    process::{Command, Output},
};

use serde_json::Value;

const TOKEN: &str = "tok_sEcReT_4f1d9c";

struct Sandbox {
    _dir: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
    path_var: String,
    /// The `cairn` this sandbox runs: a hard link of the built binary in a
    /// directory of its own, so what sits beside it (`cairn-hook` or not)
    /// is the test's choice, not the build's.
    bin: PathBuf,
}

impl Sandbox {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let repo = dir.path().join("repo");
        fs::create_dir_all(home.join(".config")).unwrap();
        fs::create_dir_all(repo.join(".git")).unwrap();
        fs::create_dir_all(repo.join("src/deep")).unwrap();
        let path_var = std::env::var("PATH").unwrap_or_default();
        let bin = dir.path().join("bin/cairn");
        link_binary(&bin);
        Sandbox {
            _dir: dir,
            home,
            repo,
            path_var,
            bin,
        }
    }

    /// Puts a `cairn-hook` beside the sandbox's `cairn` (as a release
    /// install does); install only checks that it is there.
    fn with_hook_binary(&self) -> PathBuf {
        let hook = self.bin.with_file_name("cairn-hook");
        link_binary(&hook);
        hook
    }

    /// Runs `cairn <args>` from a subdirectory of the repository, whatever it exits with.
    fn run(&self, args: &[&str]) -> Output {
        Command::new(&self.bin)
            .args(args)
            .current_dir(self.repo.join("src/deep"))
            .env_clear()
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("PATH", &self.path_var)
            .output()
            .unwrap()
    }

    /// Runs `cairn <args>`, which must succeed.
    fn cairn(&self, args: &[&str]) -> Output {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "cairn {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn config_file(&self) -> PathBuf {
        self.home.join(".config/cairn/config.toml")
    }
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A JSON (or JSONC: Gemini's settings may hold comments) document's value.
fn json(text: &str) -> Value {
    let root = jsonc_parser::cst::CstRootNode::parse(text, &Default::default())
        .unwrap_or_else(|e| panic!("{e}: {text}"));
    root.to_serde_value()
        .unwrap_or_else(|| panic!("no value: {text}"))
}

/// One agent's files as a user might already have them: other hooks, other
/// MCP servers, other settings, unusual key order and indentation.
struct Case {
    agent: &'static str,
    /// (path relative to the repo or, with `~/`, to HOME; original text)
    files: Vec<(&'static str, &'static str)>,
    /// Files install creates when none exist (project scope).
    fresh: Vec<&'static str>,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            agent: "claude-code",
            files: vec![
                (
                    ".claude/settings.json",
                    "{\n\t\"permissions\": {\"allow\": [\"Bash(ls)\"]},\n\t\"hooks\": {\n\t\t\"Stop\": [\n\t\t\t{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\"}]}\n\t\t],\n\t\t\"PreToolUse\": [\n\t\t\t{\n\t\t\t\t\"matcher\": \"Bash\",\n\t\t\t\t\"hooks\": [{\"type\": \"command\", \"command\": \"./guard.sh\"}]\n\t\t\t}\n\t\t]\n\t},\n\t\"model\": \"opus\"\n}\n",
                ),
                (
                    ".mcp.json",
                    "{\n    \"mcpServers\": {\n        \"docs\": {\n            \"command\": \"npx\",\n            \"args\": [\"-y\", \"docs-mcp\"]\n        }\n    }\n}\n",
                ),
            ],
            fresh: vec![".claude/settings.json", ".mcp.json"],
        },
        Case {
            agent: "cursor",
            files: vec![
                (
                    ".cursor/hooks.json",
                    "{\n    \"hooks\": {\n        \"afterFileEdit\": [{ \"command\": \"./hooks/format.sh\" }],\n        \"stop\": [\n            { \"command\": \"say done\" }\n        ]\n    },\n    \"version\": 1\n}\n",
                ),
                (
                    ".cursor/mcp.json",
                    "{\n\t\"mcpServers\": {\n\t\t\"linear\": {\"url\": \"https://mcp.linear.app/sse\"}\n\t}\n}",
                ),
            ],
            fresh: vec![".cursor/hooks.json", ".cursor/mcp.json"],
        },
        Case {
            agent: "codex",
            files: vec![
                (
                    ".codex/hooks.json",
                    "{\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\n                \"matcher\": \"Bash\",\n                \"hooks\": [{\"type\": \"command\", \"command\": \"python3 policy.py\", \"timeout\": 30}]\n            }\n        ]\n    }\n}\n",
                ),
                (
                    ".codex/config.toml",
                    "# team settings\nmodel = \"o3\"   # fast enough\n\n[mcp_servers.docs]\ncommand = \"npx\"\nargs = [\"-y\", \"docs-mcp\"]\n\n[tui]\nnotifications = true\n",
                ),
            ],
            fresh: vec![".codex/hooks.json", ".codex/config.toml"],
        },
        Case {
            agent: "gemini",
            files: vec![(
                ".gemini/settings.json",
                "{\n\t// project settings\n\t\"mcpServers\": {\n\t\t\"github\": {\"httpUrl\": \"https://api.githubcopilot.com/mcp/\"}\n\t},\n\t\"hooks\": {\n\t\t\"BeforeTool\": [\n\t\t\t{\n\t\t\t\t\"matcher\": \"run_shell_command\",\n\t\t\t\t\"hooks\": [{\"type\": \"command\", \"command\": \"./check.sh\", \"timeout\": 5000}]\n\t\t\t}\n\t\t]\n\t},\n\t\"theme\": \"GitHub\",\n}\n",
            )],
            fresh: vec![".gemini/settings.json"],
        },
        Case {
            agent: "windsurf",
            files: vec![
                (
                    ".windsurf/hooks.json",
                    "{\n    \"hooks\": {\n        \"post_write_code\": [\n            {\"command\": \"npx prettier --write\", \"show_output\": true}\n        ]\n    }\n}\n",
                ),
                (
                    "~/.codeium/windsurf/mcp_config.json",
                    "{\n  \"mcpServers\": {\n    \"figma\": {\"serverUrl\": \"https://figma.example/mcp\"}\n  }\n}\n",
                ),
            ],
            fresh: vec![".windsurf/hooks.json", "~/.codeium/windsurf/mcp_config.json"],
        },
    ]
}

fn resolve(sb: &Sandbox, rel: &str) -> PathBuf {
    match rel.strip_prefix("~/") {
        Some(r) => sb.home.join(r),
        None => sb.repo.join(rel),
    }
}

/// Every file of a case, as text (None: absent).
fn snapshot(sb: &Sandbox, rels: &[&str]) -> Vec<Option<String>> {
    rels.iter()
        .map(|r| fs::read_to_string(resolve(sb, r)).ok())
        .collect()
}

#[test]
fn install_merges_and_uninstall_restores_byte_for_byte() {
    for case in cases() {
        let sb = Sandbox::new();
        for (rel, text) in &case.files {
            write(&resolve(&sb, rel), text);
        }
        let rels: Vec<&str> = case.files.iter().map(|(r, _)| *r).collect();
        let before = snapshot(&sb, &rels);

        let out = sb.cairn(&[
            "install",
            case.agent,
            "--token",
            TOKEN,
            "--url",
            "http://127.0.0.1:9",
        ]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("token saved to ~/.config/cairn/config.toml"),
            "{stdout}"
        );
        let installed = snapshot(&sb, &rels);
        let hook = format!("hook {}", case.agent);
        let all: String = installed.iter().flatten().cloned().collect();
        assert!(all.contains(&hook), "{}: {all}", case.agent);
        assert!(
            all.contains("\"mcp\"") || all.contains("[\"mcp\"]"),
            "{}: no MCP server: {all}",
            case.agent
        );
        assert!(
            !all.contains(TOKEN),
            "{}: token leaked into agent files",
            case.agent
        );

        // The other tool's hooks, servers and settings are all still there.
        for ((rel, original), now) in case.files.iter().zip(&installed) {
            let now = now.as_deref().unwrap();
            for needle in [
                "notify-send done",
                "./guard.sh",
                "docs-mcp",
                "./hooks/format.sh",
                "say done",
                "linear",
                "python3 policy.py",
                "o3",
                "notifications",
                "github",
                "./check.sh",
                "GitHub",
                "prettier",
                "figma",
                "// project settings",
                "# team settings",
            ] {
                if original.contains(needle) {
                    assert!(
                        now.contains(needle),
                        "{}: {rel} lost {needle}:\n{now}",
                        case.agent
                    );
                }
            }
            if rel.ends_with(".json") {
                json(now);
            }
        }

        // A second install changes nothing.
        sb.cairn(&["install", case.agent]);
        assert_eq!(
            snapshot(&sb, &rels),
            installed,
            "{}: second install changed files",
            case.agent
        );

        sb.cairn(&["uninstall", case.agent]);
        assert_eq!(
            snapshot(&sb, &rels),
            before,
            "{}: uninstall did not restore",
            case.agent
        );
    }
}

#[test]
fn install_into_nothing_then_uninstall_leaves_nothing() {
    for case in cases() {
        let sb = Sandbox::new();
        let out = sb.cairn(&["install", case.agent]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("no token configured"), "{}: {stderr}", case.agent);
        for rel in &case.fresh {
            let text = read(&resolve(&sb, rel));
            assert!(text.ends_with('\n'), "{}: {rel} has no final newline", case.agent);
        }
        sb.cairn(&["uninstall", case.agent]);
        for rel in &case.fresh {
            let path = resolve(&sb, rel);
            assert!(!path.exists(), "{}: {} left behind", case.agent, path.display());
            let parent = path.parent().unwrap();
            if parent != sb.repo {
                assert!(
                    !parent.exists(),
                    "{}: {} left behind",
                    case.agent,
                    parent.display()
                );
            }
        }
        assert!(
            !sb.home.join(".codeium").exists(),
            "{}: ~/.codeium left behind",
            case.agent
        );
        let mut left: Vec<_> = fs::read_dir(&sb.repo)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        left.sort();
        assert_eq!(left, vec![".git", "src"], "{}", case.agent);
    }
}

#[test]
fn hooks_are_written_at_the_repository_root_in_each_agents_shape() {
    let sb = Sandbox::new();
    for agent in ["claude-code", "cursor", "codex", "gemini", "windsurf"] {
        sb.cairn(&["install", agent]);
    }
    let exe = fs::canonicalize(&sb.bin).unwrap();
    let cmd = |agent: &str| format!("{} hook {agent}", exe.display());

    let claude = json(&read(&sb.repo.join(".claude/settings.json")));
    let events = claude["hooks"].as_object().unwrap();
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "SubagentStop",
        "PreCompact",
        "SessionEnd",
    ] {
        let handler = &events[event][0]["hooks"][0];
        assert_eq!(handler["type"], "command", "{event}");
        assert_eq!(handler["command"], cmd("claude-code"), "{event}");
        assert_eq!(handler["timeout"], 10, "{event}");
    }
    assert_eq!(events["PreToolUse"][0]["matcher"], "*");
    assert!(events["UserPromptSubmit"][0].get("matcher").is_none());
    let mcp = json(&read(&sb.repo.join(".mcp.json")));
    assert_eq!(mcp["mcpServers"]["cairn"]["command"], exe.display().to_string());
    assert_eq!(mcp["mcpServers"]["cairn"]["args"], serde_json::json!(["mcp"]));

    let cursor = json(&read(&sb.repo.join(".cursor/hooks.json")));
    assert_eq!(cursor["version"], 1);
    assert_eq!(cursor["hooks"]["sessionStart"][0]["command"], cmd("cursor"));
    assert_eq!(cursor["hooks"]["postToolUse"][0]["command"], cmd("cursor"));
    assert_eq!(
        json(&read(&sb.repo.join(".cursor/mcp.json")))["mcpServers"]["cairn"]["args"][0],
        "mcp"
    );

    let codex = json(&read(&sb.repo.join(".codex/hooks.json")));
    assert_eq!(
        codex["hooks"]["SessionStart"][0]["hooks"][0]["command"],
        cmd("codex")
    );
    let toml_text = read(&sb.repo.join(".codex/config.toml"));
    let toml: toml::Table = toml::from_str(&toml_text).unwrap();
    assert_eq!(toml["mcp_servers"]["cairn"]["args"][0].as_str(), Some("mcp"));
    assert!(!toml_text.contains("[mcp_servers]\n"), "{toml_text}");

    let gemini = json(&read(&sb.repo.join(".gemini/settings.json")));
    assert_eq!(
        gemini["hooks"]["BeforeAgent"][0]["hooks"][0]["command"],
        cmd("gemini")
    );
    assert_eq!(gemini["hooks"]["AfterTool"][0]["hooks"][0]["timeout"], 10_000);
    assert_eq!(gemini["mcpServers"]["cairn"]["args"][0], "mcp");

    let windsurf = json(&read(&sb.repo.join(".windsurf/hooks.json")));
    assert_eq!(
        windsurf["hooks"]["pre_user_prompt"][0]["command"],
        cmd("windsurf")
    );
    assert!(sb.home.join(".codeium/windsurf/mcp_config.json").exists());
}

#[test]
fn token_goes_to_a_private_config_and_nowhere_else() {
    let sb = Sandbox::new();
    let mut printed = String::new();
    for agent in ["claude-code", "cursor", "codex", "gemini", "windsurf"] {
        let out = sb.cairn(&["install", agent, "--token", TOKEN, "--project", "web"]);
        printed.push_str(&String::from_utf8_lossy(&out.stdout));
        printed.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    let out = sb.cairn(&["install", "claude-code", "--http", "--scope", "user"]);
    printed.push_str(&String::from_utf8_lossy(&out.stdout));
    assert!(!printed.contains(TOKEN), "token printed:\n{printed}");
    assert!(!printed.contains("no token configured"), "{printed}");

    let config = sb.config_file();
    let mode = fs::metadata(&config).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let text = read(&config);
    assert!(text.contains(TOKEN) && text.contains("web"), "{text}");

    for entry in walk(&sb.repo).into_iter().chain(walk(&sb.home)) {
        if entry == config {
            continue;
        }
        let bytes = fs::read(&entry).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(TOKEN),
            "token in {}",
            entry.display()
        );
    }
}

#[test]
fn a_token_pasted_with_another_line_is_refused_before_anything_is_written() {
    let sb = Sandbox::new();
    let pasted = format!("{TOKEN}\n=====");
    let out = sb.run(&["install", "claude-code", "--token", &pasted]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--token holds spaces or line breaks"), "{err}");
    assert!(!err.contains(TOKEN), "the token is not echoed: {err}");
    assert!(!sb.config_file().exists());
    assert!(!sb.repo.join(".claude/settings.json").exists());
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn user_scope_writes_home_files_and_restores_them() {
    let sb = Sandbox::new();
    let settings = sb.home.join(".claude/settings.json");
    let claude_json = sb.home.join(".claude.json");
    write(&settings, "{\n  \"theme\": \"dark\"\n}\n");
    write(&claude_json, "{\"numStartups\":3,\"mcpServers\":{}}");
    fs::set_permissions(&claude_json, fs::Permissions::from_mode(0o600)).unwrap();
    let before = (read(&settings), read(&claude_json));

    sb.cairn(&["install", "claude-code", "--scope", "user"]);
    assert!(read(&settings).contains("hook claude-code"));
    assert!(json(&read(&claude_json))["mcpServers"]["cairn"].is_object());
    assert_eq!(
        fs::metadata(&claude_json).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(!sb.repo.join(".claude").exists(), "project untouched");

    sb.cairn(&["uninstall", "claude-code", "--scope", "user"]);
    assert_eq!((read(&settings), read(&claude_json)), before);

    // Codex's user files follow $CODEX_HOME's default, ~/.codex.
    sb.cairn(&["install", "codex", "--scope", "user"]);
    assert!(read(&sb.home.join(".codex/hooks.json")).contains("hook codex"));
    assert!(read(&sb.home.join(".codex/config.toml")).contains("[mcp_servers.cairn]"));
    sb.cairn(&["uninstall", "codex", "--scope", "user"]);
    assert!(!sb.home.join(".codex").exists());
}

#[test]
fn changes_made_after_install_survive_uninstall() {
    let sb = Sandbox::new();
    let path = sb.repo.join(".cursor/hooks.json");
    write(
        &path,
        "{\n  \"version\": 1,\n  \"hooks\": {\n    \"stop\": [{\"command\": \"say done\"}]\n  }\n}\n",
    );
    sb.cairn(&["install", "cursor"]);
    // The user adds a hook of their own next to Cairn's.
    let edited = read(&path).replace(
        "\"stop\": [",
        "\"beforeReadFile\": [{\"command\": \"./scan.sh\"}],\n    \"stop\": [",
    );
    fs::write(&path, &edited).unwrap();

    sb.cairn(&["uninstall", "cursor"]);
    let after = read(&path);
    let v = json(&after);
    assert_eq!(v["hooks"]["beforeReadFile"][0]["command"], "./scan.sh");
    assert_eq!(v["hooks"]["stop"], serde_json::json!([{"command": "say done"}]));
    assert!(!after.contains("hook cursor"), "{after}");
    assert!(v["hooks"].get("sessionStart").is_none(), "{after}");
}

#[test]
fn a_committed_install_is_removed_without_a_local_record() {
    // A teammate's install arrives through git: no record on this machine.
    let sb = Sandbox::new();
    sb.cairn(&["install", "gemini"]);
    fs::remove_dir_all(sb.home.join(".config/cairn/installs")).unwrap();
    let path = sb.repo.join(".gemini/settings.json");
    let with_theme = read(&path).replacen('{', "{\n  \"theme\": \"Dracula\",", 1);
    fs::write(&path, with_theme).unwrap();

    sb.cairn(&["uninstall", "gemini"]);
    let v = json(&read(&path));
    assert_eq!(v, serde_json::json!({"theme": "Dracula"}));
}

#[test]
fn http_mode_keeps_session_start_a_command_and_switching_back_restores() {
    let sb = Sandbox::new();
    let path = sb.repo.join(".claude/settings.json");
    let original = "{\n    \"hooks\": {}\n}\n";
    write(&path, original);
    sb.cairn(&[
        "install",
        "claude-code",
        "--url",
        "http://cairn.test:8080",
        "--project",
        "web app",
    ]);
    let command_form = read(&path);

    sb.cairn(&["install", "claude-code", "--http"]);
    let v = json(&read(&path));
    assert_eq!(v["hooks"]["SessionStart"][0]["hooks"][0]["type"], "command");
    let post = &v["hooks"]["PostToolUse"][0]["hooks"][0];
    assert_eq!(post["type"], "http");
    assert_eq!(
        post["url"],
        "http://cairn.test:8080/v1/hooks/claude-code?project=web%20app"
    );
    assert_eq!(post["headers"]["Authorization"], "Bearer $CAIRN_TOKEN");
    assert_eq!(post["allowedEnvVars"], serde_json::json!(["CAIRN_TOKEN"]));
    for event in v["hooks"].as_object().unwrap().values() {
        assert_eq!(
            event.as_array().unwrap().len(),
            1,
            "one Cairn entry per event: {v}"
        );
    }

    sb.cairn(&["install", "claude-code"]);
    assert_eq!(read(&path), command_form);
    sb.cairn(&["uninstall", "claude-code"]);
    assert_eq!(read(&path), original);
}

#[test]
fn http_is_refused_for_other_agents() {
    let sb = Sandbox::new();
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["install", "cursor", "--http"])
        .current_dir(&sb.repo)
        .env_clear()
        .env("HOME", &sb.home)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(!sb.repo.join(".cursor").exists());
}

#[test]
fn windsurf_mcp_config_is_shared_by_both_scopes() {
    let sb = Sandbox::new();
    let mcp = sb.home.join(".codeium/windsurf/mcp_config.json");
    sb.cairn(&["install", "windsurf", "--scope", "user"]);
    sb.cairn(&["install", "windsurf"]);
    sb.cairn(&["uninstall", "windsurf"]);
    assert!(
        read(&mcp).contains("\"cairn\""),
        "user install still relies on it"
    );
    assert!(!sb.repo.join(".windsurf").exists());
    sb.cairn(&["uninstall", "windsurf", "--scope", "user"]);
    assert!(!sb.home.join(".codeium").exists());
}

#[test]
fn plain_cairn_when_it_is_the_one_on_path() {
    let sb = Sandbox::new();
    let bin = sb.home.join("bin");
    fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(&sb.bin, bin.join("cairn")).unwrap();
    let sb = Sandbox {
        path_var: format!("{}:{}", bin.display(), sb.path_var),
        ..sb
    };
    sb.cairn(&["install", "cursor"]);
    let v = json(&read(&sb.repo.join(".cursor/hooks.json")));
    assert_eq!(v["hooks"]["stop"][0]["command"], "cairn hook cursor");
    assert_eq!(
        json(&read(&sb.repo.join(".cursor/mcp.json")))["mcpServers"]["cairn"]["command"],
        "cairn"
    );
}

/// A hard link of the built `cairn` at `to` (a copy across file systems).
fn link_binary(to: &std::path::Path) {
    fs::create_dir_all(to.parent().unwrap()).unwrap();
    let built = env!("CARGO_BIN_EXE_cairn");
    if fs::hard_link(built, to).is_err() {
        fs::copy(built, to).unwrap();
    }
}

#[test]
fn hooks_run_the_small_hook_binary_when_it_is_installed_beside_cairn() {
    let sb = Sandbox::new();
    let hook = fs::canonicalize(sb.with_hook_binary()).unwrap();
    sb.cairn(&["install", "cursor"]);
    let first = read(&sb.repo.join(".cursor/hooks.json"));
    assert_eq!(
        json(&first)["hooks"]["stop"][0]["command"],
        format!("{} cursor", hook.display())
    );
    let entries = first.matches("cairn-hook cursor").count();
    assert!(entries > 1, "{first}");
    // The MCP server is still `cairn mcp`.
    assert_eq!(
        json(&read(&sb.repo.join(".cursor/mcp.json")))["mcpServers"]["cairn"]["command"],
        fs::canonicalize(&sb.bin).unwrap().display().to_string()
    );
    // On PATH, by name; the absolute entries are Cairn's own and replaced.
    let sb = Sandbox {
        path_var: format!("{}:{}", sb.bin.parent().unwrap().display(), sb.path_var),
        ..sb
    };
    sb.cairn(&["install", "cursor"]);
    let text = read(&sb.repo.join(".cursor/hooks.json"));
    assert_eq!(json(&text)["hooks"]["stop"][0]["command"], "cairn-hook cursor");
    assert_eq!(text.matches("cairn-hook cursor").count(), entries, "{text}");
    assert!(!text.contains(&hook.display().to_string()), "{text}");
    sb.cairn(&["uninstall", "cursor"]);
    assert!(!sb.repo.join(".cursor/hooks.json").exists());
}
