//! The secret rule table: which text is a secret, of which kind, in which order.
//!
//! Rules run in table order, so more specific kinds come first (an Anthropic
//! key is counted as `anthropic_key`, never `openai_key`; a token inside a
//! `.env` line is counted as its own kind, not `env_assignment`). When a
//! pattern has capture groups named `v1`, `v2`, ..., only the first one that
//! took part in the match is replaced (the password of a URL, the value of an
//! assignment); otherwise the whole match is. A group named `name` is handed
//! to the rule's [`Check`]. Word boundaries are ASCII (`(?-u:\b)`) so the
//! fast DFA engines stay usable on non-ASCII text.

use super::checks::Check;

/// One entry of the table.
#[derive(Debug)]
pub(super) struct Rule {
    pub(super) kind: &'static str,
    pub(super) pattern: &'static str,
    pub(super) check: Check,
    /// The rule's gate: every text it matches contains one of these (ASCII
    /// case ignored), so a text with none of them is not scanned for it.
    /// Empty: always scanned. `gates_tests.rs` proves each list from the
    /// pattern itself.
    pub(super) keywords: &'static [&'static str],
}

const fn rule(kind: &'static str, pattern: &'static str, check: Check) -> Rule {
    Rule {
        kind,
        pattern,
        check,
        keywords: &[],
    }
}

impl Rule {
    const fn gated(mut self, keywords: &'static [&'static str]) -> Self {
        self.keywords = keywords;
        self
    }
}

/// The words a secret's name is made of in the assignment-style rules
/// (`SECRET|TOKEN|PASSWORD|PASSWD|PWD|API[_-]?KEY|ACCESS[_-]?KEY|PRIVATE[_-]?KEY|CREDENTIAL|AUTH`).
const NAME_WORDS: &[&str] = &[
    "secret",
    "token",
    "passw",
    "pwd",
    "apikey",
    "api_key",
    "api-key",
    "access",
    "private",
    "credential",
    "auth",
];

/// Every kind a report can contain, in table order.
#[cfg(test)]
pub(super) const KINDS: &[&str] = &[
    "private_key",
    "anthropic_key",
    "openai_key",
    "aws_access_key",
    "aws_secret_key",
    "gcp_api_key",
    "gcp_service_account_key",
    "azure_storage_key",
    "azure_client_secret",
    "azure_sas",
    "github_token",
    "gitlab_token",
    "slack_token",
    "stripe_key",
    "npm_token",
    "huggingface_token",
    "sendgrid_key",
    "twilio_key",
    "jwt",
    "cli_password",
    "url_password",
    "auth_header",
    "env_assignment",
    "high_entropy",
];

pub(super) const RULES: &[Rule] = &[
    // PEM private keys (RSA, EC, DSA, OPENSSH, PGP, PKCS#8 plain or ENCRYPTED),
    // with real newlines or JSON `\n` escapes. Terminated: BEGIN through END.
    // Unterminated: from a header that is followed by key material to the end
    // of the string (a lone header quoted in code is not a key).
    rule(
        "private_key",
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:(?s:.*?)-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|(?:\s|\\[rn])+(?:[A-Za-z0-9+/]{16}|Proc-Type:)(?s:.*))",
        Check::Always,
    ).gated(&["-----begin"]),
    rule(
        "anthropic_key",
        r"(?-u:\b)sk-ant-[A-Za-z0-9_\-]{20,}",
        Check::Always,
    ).gated(&["sk-ant-"]),
    // Project, service-account and admin keys, and legacy `sk-` + alphanumerics.
    // The legacy branch needs 20 alphanumerics right after `sk-`, so `sk-ant-`
    // can never match it.
    rule(
        "openai_key",
        r"(?-u:\b)sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}|[A-Za-z0-9]{20}[A-Za-z0-9_\-]*)",
        Check::Always,
    ).gated(&["sk-"]),
    rule(
        "aws_access_key",
        r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?-u:\b)",
        Check::Always,
    ).gated(&["akia", "asia", "abia", "acca"]),
    // `aws_secret_access_key = ...`, `AWS_SECRET_ACCESS_KEY=...`, `"SecretAccessKey": "..."`.
    rule(
        "aws_secret_key",
        r#"(?i)secret_?access_?key\\?["']?[ \t]*[:=][ \t]*\\?["']?(?P<v1>[A-Za-z0-9/+=]{40,})"#,
        Check::Always,
    ).gated(&["access"]),
    rule("gcp_api_key", r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}", Check::Always).gated(&["aiza"]),
    // The service account's `private_key` itself is a PEM block (rule above).
    rule(
        "gcp_service_account_key",
        r#"(?i)private_key_id\\?["']?[ \t]*[:=][ \t]*\\?["']?(?P<v1>[0-9a-f]{40})"#,
        Check::Always,
    ).gated(&["private_key_id"]),
    // Storage / Service Bus connection strings.
    rule(
        "azure_storage_key",
        r"(?i)(?:AccountKey|SharedAccessKey)[ \t]*=[ \t]*(?P<v1>[A-Za-z0-9+/]{20,}={0,2})",
        Check::Always,
    ).gated(&["accountkey", "sharedaccesskey"]),
    rule(
        "azure_client_secret",
        r#"(?i)azure_?client_?secret\\?["']?[ \t]*[:=][ \t]*\\?["']?(?P<v1>[^\s"'\\;&]{8,})"#,
        Check::NotPlaceholder,
    ).gated(&["azure"]),
    // The signature of a shared access signature, in a URL or a connection
    // string: base64 of an HMAC, often URL-encoded (`%2B`, `%2F`, `%3D`).
    rule(
        "azure_sas",
        r"(?-u:\b)sig=(?P<v1>(?:[A-Za-z0-9+/]|%[0-9A-Fa-f]{2}){30,}={0,2})",
        Check::RandomLooking,
    ).gated(&["sig="]),
    rule(
        "github_token",
        r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
        Check::Always,
    ).gated(&["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"]),
    rule(
        "gitlab_token",
        r"(?-u:\b)gl(?:pat|ptt|dt|rt|soat|cbt)-[A-Za-z0-9_\-]{20,}",
        Check::Always,
    ).gated(&["glpat-", "glptt-", "gldt-", "glrt-", "glsoat-", "glcbt-"]),
    // Bot/user/app tokens, and the secret path of incoming-webhook URLs.
    rule(
        "slack_token",
        r"(?-u:\b)(?:xox[abposre]-[A-Za-z0-9\-]{10,}|xapp-[0-9]-[A-Za-z0-9\-]{10,})|hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v1>[A-Za-z0-9_/\-]{10,})",
        Check::Always,
    ).gated(&["xox", "xapp-", "hooks.slack.com/"]),
    rule(
        "stripe_key",
        r"(?-u:\b)(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
        Check::Always,
    ).gated(&["_live_", "_test_"]),
    rule("npm_token", r"(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)", Check::Always).gated(&["npm_"]),
    // `.npmrc` credentials of a registry, and `npm config set //host/:_authToken value`.
    rule(
        "npm_token",
        r#":_(?:authToken|auth|password)(?:[ \t]*=[ \t]*|[ \t]+)(?:"(?P<v1>[^"\r\n]+)"|'(?P<v2>[^'\r\n]+)'|(?P<v3>[^\s"'][^\s"']*))"#,
        Check::NotPlaceholder,
    ).gated(&[":_auth", ":_password"]),
    rule(
        "huggingface_token",
        r"(?-u:\b)hf_[A-Za-z0-9]{34,}(?-u:\b)",
        Check::RandomLooking,
    ).gated(&["hf_"]),
    rule(
        "sendgrid_key",
        r"(?-u:\b)SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
        Check::Always,
    ).gated(&["sg."]),
    // Twilio API key SIDs: `SK` and exactly 32 lowercase hex digits.
    rule("twilio_key", r"(?-u:\b)SK[0-9a-f]{32}(?-u:\b)", Check::Always).gated(&["sk"]),
    // Header and payload segments; the signature may be empty (`alg: none`).
    rule(
        "jwt",
        r"(?-u:\b)eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.(?:[A-Za-z0-9_\-]{10,})?",
        Check::Always,
    ).gated(&["eyj"]),
    // A password glued to `-p` of the MySQL / MariaDB clients (`mysql -u root
    // -pS3cret`); a bare `-p` prompts and `-P` is the port. The command may go
    // on over `\`-continued lines, not past `|`, `;`, `&` or a `\n` escape;
    // quotes may be `\"`-escaped (a command inside JSON text).
    rule(
        "cli_password",
        r#"(?-u:\b)(?:mysql[a-z]*|mariadb[a-z\-]*)(?-u:\b)(?:[^\r\n|;&\\]|\\[^n]|\\\r?\n)*?[ \t]-p(?:\\?'(?P<v1>[^'\r\n]+?)\\?'|\\?"(?P<v2>[^"\r\n]+?)\\?"|(?P<v3>[^\s'"`\\;|&()<>][^\s'"`\\;|&()<>]*))"#,
        Check::CliPassword,
    ).gated(&["mysql", "mariadb"]),
    // `curl -u user:PASSWORD`, `--user 'user:PASSWORD'`: the user name stays.
    rule(
        "cli_password",
        r#"(?-u:\b)curl(?-u:\b)(?:[^\r\n|;&\\]|\\[^n]|\\\r?\n)*?[ \t](?:-[A-Za-z]*u|--user)(?:[ \t]+|=)?(?:\\?'[^'\\\s:]*:(?P<v1>[^'\r\n]+?)\\?'|\\?"[^"\\\s:]*:(?P<v2>[^"\r\n]+?)\\?"|[^\s:'"\\]*:(?P<v3>[^\s'"`\\;|&()<>]+))"#,
        Check::CliPassword,
    ).gated(&["curl"]),
    // `scheme://user:PASSWORD@host`: only the password goes.
    rule(
        "url_password",
        r#"(?i)(?-u:\b)[a-z][a-z0-9+.\-]{1,20}://[^\s:/?#@"'<>\[\]]*:(?P<v1>[^\s/?#"'<>]+)@"#,
        Check::NotPlaceholder,
    ).gated(&["://"]),
    // HTTP credentials: `Authorization: Bearer x`, `X-Api-Key: x`, bare `Bearer x`.
    rule(
        "auth_header",
        r#"(?i)(?-u:\b)(?:proxy-)?authorization\\?["']?[ \t]*[:=][ \t]*\\?["']?(?:(?:bearer|basic|token|bot|apikey)[ \t]+)?(?P<v1>[A-Za-z0-9\-._~+/]{8,}=*)"#,
        Check::RandomLooking,
    ).gated(&["authorization"]),
    rule(
        "auth_header",
        r#"(?i)(?-u:\b)x-[a-z0-9\-]*(?:api-?key|token|auth|secret)[a-z0-9\-]*\\?["']?[ \t]*:[ \t]*\\?["']?(?P<v1>[A-Za-z0-9\-._~+/]{8,}=*)"#,
        Check::RandomLooking,
    ).gated(&["apikey", "api-key", "token", "auth", "secret"]),
    rule(
        "auth_header",
        r"(?i)(?-u:\b)bearer[ \t]+(?P<v1>[A-Za-z0-9\-._~+/]{16,}=*)",
        Check::RandomLooking,
    ).gated(&["bearer"]),
    // `.env` / shell / CLI flag style: `NAME=value`, `export NAME="v"`, `--password=v`.
    // No spaces around `=`, so code such as `let token = next();` is not touched.
    rule(
        "env_assignment",
        r#"(?i)(?-u:\b)(?P<name>[A-Za-z0-9_.\-]*(?:SECRET|TOKEN|PASSWORD|PASSWD|PWD|API[_\-]?KEY|ACCESS[_\-]?KEY|PRIVATE[_\-]?KEY|CREDENTIAL|AUTH)[A-Za-z0-9_]*)=(?:"(?P<v1>[^"\r\n]+)"|'(?P<v2>[^'\r\n]+)'|(?P<v3>[^\s"'`=\\&;,<>()\[\]{}|][^\s"'`\\&;,<>()\[\]{}|]*))"#,
        Check::EnvValue,
    ).gated(NAME_WORDS),
    // JSON / YAML / TOML / source keys with a quoted value: `"password": "v"`,
    // `api_key = 'v'`, `token := "v"`, also `\"`-escaped JSON.
    rule(
        "env_assignment",
        r#"(?i)(?P<name>[A-Za-z0-9_.\-]*(?:SECRET|TOKEN|PASSWORD|PASSWD|PWD|API[_\-]?KEY|ACCESS[_\-]?KEY|PRIVATE[_\-]?KEY|CREDENTIAL|AUTH)[A-Za-z0-9_.\-]*)\\?["']?[ \t]*(?::=?|=)[ \t]*\\?(?:"(?P<v1>[^"\\\r\n]+)\\?"|'(?P<v2>[^'\\\r\n]+)')"#,
        Check::QuotedValue,
    ).gated(NAME_WORDS),
    // Ruby / PHP / Perl hashes with a quoted key: `'password' => 'v'` (an
    // unquoted `Kind::Token => "..."` is a match arm, not a secret).
    rule(
        "env_assignment",
        r#"(?i)["'](?P<name>[A-Za-z0-9_.\-]*(?:SECRET|TOKEN|PASSWORD|PASSWD|PWD|API[_\-]?KEY|ACCESS[_\-]?KEY|PRIVATE[_\-]?KEY|CREDENTIAL|AUTH)[A-Za-z0-9_.\-]*)["'][ \t]*=>[ \t]*(?:"(?P<v1>[^"\\\r\n]+)"|'(?P<v2>[^'\\\r\n]+)')"#,
        Check::QuotedValue,
    ).gated(NAME_WORDS),
    // Unquoted YAML values on their own line: `  db_password: hunter2`.
    rule(
        "env_assignment",
        r#"(?im)^[ \t]*(?:-[ \t]+)?(?P<name>[A-Za-z0-9_.\-]*(?:SECRET|TOKEN|PASSWORD|PASSWD|PWD|API[_\-]?KEY|ACCESS[_\-]?KEY|PRIVATE[_\-]?KEY|CREDENTIAL|AUTH)[A-Za-z0-9_.\-]*)[ \t]*:[ \t]+(?P<v1>[^\s"'#&*!|>{}\[\],][^\s]*)[ \t]*(?:[ \t]#[^\r\n]*)?\r?$"#,
        Check::YamlValue,
    ).gated(NAME_WORDS),
    // Last resort for labels the rules above do not read (`token: v` inside a
    // line, `password = v` in INI files, `--api-key v`, `.netrc`): the value
    // must read as a random token (`Check::HighEntropy`, see `entropy.rs`),
    // and not be followed by what makes it code (`(`, `[`, `<`, `::`, `?`).
    rule(
        "high_entropy",
        r#"(?i)(?-u:\b)(?P<name>[A-Za-z0-9_.\-]*(?:SECRET|TOKEN|PASSWORD|PASSWD|PWD|API[_\-]?KEY|ACCESS[_\-]?KEY|PRIVATE[_\-]?KEY|CREDENTIAL|AUTH)[A-Za-z0-9_.\-]*)\\?["']?(?:[ \t]*(?::=?|=)[ \t]*|[ \t]+)\\?["']?(?P<v1>[A-Za-z0-9+/_\-.~!@#$%^*]{16,}=*)(?:$|[^A-Za-z0-9+/_\-.~!@#$%^*=(\[<:?])"#,
        Check::HighEntropy,
    ).gated(NAME_WORDS),
];
