//! Deterministic filler that surrounds planted facts: lines that look like
//! Rust, TypeScript, Python, TOML, YAML, logs, test runs and so on, drawn
//! by a seeded generator, so the same seed always gives the same text.

use super::data::Piece;

/// The corpus's seeded generator (SplitMix64): same output everywhere.
pub use crate::corpus::Rng;

/// FNV-1a of `text`: a stable seed from a name.
pub fn seed(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

const WORDS: [&str; 24] = [
    "buffer", "handler", "request", "queue", "record", "entry", "value", "result", "item", "index", "token",
    "batch", "window", "frame", "chunk", "node", "worker", "session", "event", "payload", "filter", "limit",
    "offset", "cursor",
];
const VERBS: [&str; 12] = [
    "parse", "load", "apply", "render", "merge", "flush", "encode", "decode", "resolve", "collect",
    "dispatch", "validate",
];
const DIRS: [&str; 6] = ["core", "io", "api", "util", "store", "net"];

/// Line templates per kind: `{w}` a word, `{W}` a capitalised word, `{v}` a
/// verb, `{d}` a directory, `{n}` a number below 1000, `{t}` a time of day.
fn templates(kind: &str) -> &'static [&'static str] {
    match kind {
        "rust" => &[
            "/// {W}s the {w} of one {w}.",
            "pub fn {v}_{w}(input: &[u8], limit: usize) -> Result<{W}, Error> {",
            "    let {w} = {w}s.get(&key).copied().unwrap_or_default();",
            "    if {w}.len() > limit {",
            "        return Err(Error::{W}({n}));",
            "    }",
            "    Ok({W}::new({w}, {n}))",
            "}",
            "",
            "#[derive(Clone, Debug, Default)]",
            "pub struct {W}{W} {",
            "    pub {w}: Vec<{W}>,",
            "    {w}_count: usize,",
            "impl {W} {",
            "    for {w} in self.{w}s.iter().take({n}) {",
            "use crate::{d}::{W};",
        ],
        "ts" => &[
            "export async function {v}{W}({w}: {W}, opts: Options = {}): Promise<{W}> {",
            "  const {w} = await this.{w}s.get({w}.id);",
            "  if (!{w}) throw new HarborError('{w} missing', {n});",
            "  return { ...{w}, {w}: {w}.{w} ?? {n} };",
            "}",
            "import { {W} } from '../{d}/{w}';",
            "  // {v} the {w} before the {w} is sent",
            "  for (const {w} of {w}s) {",
            "",
            "export interface {W}{W} {",
            "  {w}: {W};",
        ],
        "py" => &[
            "def {v}_{w}(self, {w}, *, limit={n}):",
            "    \"\"\"{W} the {w} of a {w}.\"\"\"",
            "    for {w} in self._{w}s[:limit]:",
            "        if not {w}:",
            "            continue",
            "    return {W}({w}, {w}={n})",
            "from quill.{d} import {W}",
            "",
            "class {W}{W}:",
            "    {w}: {W} | None = None",
        ],
        "toml" => &[
            "[{w}.{w}]",
            "{w}_{w} = {n}",
            "{w} = \"{w}-{n}\"",
            "# {W} of the {w}, in {w}s",
            "enabled = true",
            "",
        ],
        "yaml" => &[
            "  {w}:",
            "    {w}: {w}-{n}",
            "    - name: {w}-{w}",
            "      value: \"{n}\"",
            "  labels:",
            "    app.kubernetes.io/component: {w}",
            "# {w} settings",
        ],
        "json" => &[
            "  \"{w}\": \"^{n}.{n}.0\",",
            "  \"{w}-{w}\": \"{n}.0.{n}\",",
            "  \"scripts\": { \"{v}\": \"node scripts/{v}.js\" },",
        ],
        "sql" => &[
            "CREATE INDEX IF NOT EXISTS {w}_{w}_idx ON {w}s ({w}_id);",
            "ALTER TABLE {w}s ADD COLUMN {w}_{w} bigint NOT NULL DEFAULT {n};",
            "-- {W} lookups by {w}",
        ],
        "csv" => &[
            "{n}{n},2024-0{n}-1{n},{W} {W},{n}.{n},EUR",
            "{n}{n},2024-0{n}-2{n},{W} GmbH,{n}.00,USD",
        ],
        "tests" => &[
            "test {d}::{w}::tests::{v}_{w} ... ok",
            "test {d}::{w}::tests::{v}s_{w}_{w} ... ok",
            "test {d}::tests::{v}_rejects_empty_{w} ... ok",
            "   Compiling {w}-{w} v0.{n}.0",
        ],
        "jest" => &[
            " PASS  src/{d}/{w}.test.ts",
            "  ✓ {v}s the {w} ({n} ms)",
            "  ✓ rejects a {w} without {w} ({n} ms)",
        ],
        "pytest" => &[
            "tests/test_{w}.py::test_{v}_{w} PASSED",
            "tests/test_{d}.py::test_{w}_{w} PASSED",
            "..........................................                               [ {n}%]",
        ],
        "log" => &[
            "2024-03-02T{t}Z DEBUG ledger::{d}: {v} {w} id={n}{n} in {n}ms",
            "2024-03-02T{t}Z INFO  ledger::{d}::{w}: {n} {w}s {v}d",
            "2024-03-02T{t}Z TRACE ledger::{d}: {w}={n} {w}={w}",
        ],
        "npm" => &[
            "[harbor] {v} {w} {d}/{w} ({n} ms)",
            "npm info {w} {v}ing {w}@{n}.{n}.0",
            "[harbor] {w}: {w}-{n} {v}d",
        ],
        "kube" => &[
            "  {W}:   {w}-{n}",
            "    {W}:  {w}/{w}:{n}",
            "  Normal  {W}  {n}s  kubelet  {W} {w} \"{w}\"",
        ],
        "sphinx" => &[
            "reading sources... [ {n}%] {d}/{w}",
            "writing output... [ {n}%] {d}/{w}",
            "copying static files... done",
        ],
        "profile" => &["     {n}    0.{n}    0.000    0.{n}    0.000 {w}.py:{n}({v}_{w})"],
        "stack" => &["    at {W}.{v} (/home/dev/harbor/packages/cli/dist/{w}.js:{n}:{n})"],
        "grep" => &[
            "src/{d}/{w}.rs:{n}:    let {w} = {v}_{w}(&{w})?;",
            "src/{d}/{w}.rs:{n}:        .{v}({w})",
            "src/{d}/mod.rs:{n}:pub mod {w};",
        ],
        _ => &["{w} {w} {v} {n}"],
    }
}

fn fill(template: &str, rng: &mut Rng) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '{' || !matches!(chars.peek(), Some('w' | 'W' | 'v' | 'd' | 'n' | 't')) {
            out.push(c);
            continue;
        }
        let key = chars.next().unwrap_or('w');
        if chars.peek() != Some(&'}') {
            out.push('{');
            out.push(key);
            continue;
        }
        chars.next();
        match key {
            'w' => out.push_str(rng.pick::<&str>(&WORDS)),
            'W' => {
                let w = *rng.pick(&WORDS);
                out.push_str(&w[..1].to_uppercase());
                out.push_str(&w[1..]);
            }
            'v' => out.push_str(rng.pick::<&str>(&VERBS)),
            'd' => out.push_str(rng.pick::<&str>(&DIRS)),
            'n' => out.push_str(&rng.below(1000).to_string()),
            _ => out.push_str(&format!(
                "{:02}:{:02}:{:02}",
                rng.below(24),
                rng.below(60),
                rng.below(60)
            )),
        }
    }
    out
}

/// About `bytes` bytes of `kind` filler, whole lines.
pub fn noise(kind: &str, bytes: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let lines = templates(kind);
    let mut out = String::with_capacity(bytes + 80);
    while out.len() < bytes {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&fill(lines[rng.below(lines.len())], &mut rng));
    }
    out
}

/// The pieces as one text, lines joined with `\n`; each noise piece seeded
/// by `seed_name` and its position.
pub fn expand(pieces: &[Piece], seed_name: &str) -> String {
    pieces
        .iter()
        .enumerate()
        .map(|(i, piece)| match piece {
            Piece::Line(line) => line.clone(),
            Piece::Noise { noise: kind, bytes } => noise(kind, *bytes, seed(&format!("{seed_name}/{i}"))),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_text_and_about_the_size_asked() {
        let a = noise("rust", 2_000, 7);
        assert_eq!(a, noise("rust", 2_000, 7));
        assert_ne!(a, noise("rust", 2_000, 8));
        assert!((2_000..2_200).contains(&a.len()), "{}", a.len());
        let text = expand(
            &[
                Piece::Line("a".into()),
                Piece::Noise {
                    noise: "toml".into(),
                    bytes: 100,
                },
            ],
            "s",
        );
        assert!(text.starts_with("a\n") && text.len() > 100);
    }
}
