//! Vetoes for secret-rule hits that are clearly not secrets (placeholders, booleans, code).

use super::entropy;

/// Extra test a rule's hit must pass before it is redacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    /// The pattern alone is specific enough.
    Always,
    /// Not a variable reference or mask such as `$TOKEN`, `${X}`, `<your-key>`, `****`.
    NotPlaceholder,
    /// Not a placeholder, and random-looking: has a digit, or is long and mixed-case.
    RandomLooking,
    /// `NAME=value` style: NAME really names a secret and the value is a real value.
    EnvValue,
    /// Like `EnvValue`, for a quoted value in code or data: also long enough or
    /// not a plain word (`token: "error"` in code is not a secret).
    QuotedValue,
    /// Like `QuotedValue`, and the value does not look like a type or code (`token: String,`).
    YamlValue,
    /// The name names a secret and the value reads as a random token (see `entropy.rs`).
    HighEntropy,
    /// A password given to a command: not a placeholder, not the word itself
    /// (`-pPASSWORD`, `user:password`), nor a port mapping (`docker run
    /// --name mysql -p3306:3306`).
    CliPassword,
}

/// Words that make a variable, key or field name secret-bearing. Names are
/// compared upper-cased with separators removed (`api_key`, `API-KEY` and
/// `apiKey` all read `APIKEY`).
const NAME_KEYWORDS: &[&str] = &[
    "SECRET",
    "TOKEN",
    "PASSWORD",
    "PASSWD",
    "PWD",
    "APIKEY",
    "ACCESSKEY",
    "PRIVATEKEY",
    "CREDENTIAL",
    "AUTH",
];

/// Name parts that contain a keyword but are not secrets: `GIT_AUTHOR_NAME`,
/// `max_tokens`, and the pagination / progress tokens of APIs and MCP.
const NAME_FALSE_FRIENDS: &[&str] = &[
    "AUTHOR",
    "TOKENIZER",
    "TOKENS",
    "PROGRESSTOKEN",
    "NEXTTOKEN",
    "PAGETOKEN",
    "CONTINUATIONTOKEN",
    "CANCELLATIONTOKEN",
];

/// Endings of names that describe a secret rather than hold it (`TOKEN_URL`,
/// `PASSWORD_FILE`, `auth_mode`), compared without separators.
const NAME_NON_SECRET_SUFFIXES: &[&str] = &[
    "URL",
    "URI",
    "ENDPOINT",
    "HOST",
    "PATH",
    "FILE",
    "DIR",
    "TYPE",
    "MODE",
    "METHOD",
    "NAME",
    "HEADER",
    "PREFIX",
    "SIZE",
    "MIN",
    "MAX",
    "LEN",
    "LENGTH",
    "TTL",
    "TIMEOUT",
    "EXPIRY",
    "EXPIRES",
    "EXPIRESIN",
    "ENABLED",
    "REQUIRED",
    "COUNT",
    "LIMIT",
    "ID",
    "FORMAT",
    "VERSION",
];

/// Values that carry no secret whatever the name says.
const TRIVIAL_VALUES: &[&str] = &[
    "true",
    "false",
    "null",
    "nil",
    "none",
    "yes",
    "no",
    "on",
    "off",
    "undefined",
    "required",
    "optional",
    "read",
    "write",
    "token",
    "bearer",
    "basic",
    "oauth",
    "oauth2",
    "jwt",
    "session",
    "cookie",
    "header",
];

/// What documentation writes where a command's password goes.
const CLI_PLACEHOLDER_WORDS: &[&str] = &[
    "password", "passwd", "pass", "pw", "pwd", "secret", "token", "apikey", "api_key",
];

/// Type names that follow `name:` in code rather than in YAML.
const TYPE_WORDS: &[&str] = &[
    "string", "str", "number", "boolean", "bool", "int", "integer", "float", "any", "unknown", "bytes",
    "object", "dict", "list", "usize", "u64", "u32", "i64", "i32", "void",
];

pub(super) fn accept(check: Check, name: &str, value: &str) -> bool {
    match check {
        Check::Always => true,
        Check::NotPlaceholder => !is_placeholder(value),
        Check::RandomLooking => !is_placeholder(value) && looks_random(value),
        Check::EnvValue => env_value(name, value),
        Check::QuotedValue => env_value(name, value) && plausible(value),
        Check::YamlValue => env_value(name, value) && plausible(value) && !looks_like_code(value),
        Check::HighEntropy => env_value(name, value) && entropy::is_high_entropy(value),
        Check::CliPassword => {
            !is_placeholder(value)
                && !is_port_mapping(value)
                && !CLI_PLACEHOLDER_WORDS
                    .iter()
                    .any(|w| value.eq_ignore_ascii_case(w))
        }
    }
}

/// True when a key or variable name denotes a secret (`DB_PASSWORD`, `apiKey`,
/// `"client_secret"`), but not `PWD`, `GIT_AUTHOR_NAME` or `max_tokens`.
pub(super) fn is_sensitive_name(name: &str) -> bool {
    let compact = compact_upper(name);
    if compact == "PWD" || compact == "OLDPWD" {
        return false;
    }
    // `private_key_id`: a service account's key id is kept with the key (and
    // names which key leaked), unlike `user_id` or an access key's public id.
    if compact.ends_with("PRIVATEKEYID") {
        return true;
    }
    if NAME_NON_SECRET_SUFFIXES.iter().any(|s| compact.ends_with(s)) {
        return false;
    }
    // AUTHORIZATION / AUTHORISE are credentials, unlike AUTHOR or AUTHORITY.
    let mut rest = compact.replace("AUTHORIZ", "AUTH ").replace("AUTHORIS", "AUTH ");
    for friend in NAME_FALSE_FRIENDS {
        if rest.contains(friend) {
            rest = rest.replace(friend, " ");
        }
    }
    has_keyword(&rest)
}

fn compact_upper(text: &str) -> String {
    text.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

fn has_keyword(compact: &str) -> bool {
    NAME_KEYWORDS.iter().any(|k| compact.contains(k))
}

/// True when a value under a sensitive name is worth redacting.
pub(super) fn is_secret_value(name: &str, value: &str) -> bool {
    let value = value.trim();
    !value.is_empty()
        && !TRIVIAL_VALUES.iter().any(|t| value.eq_ignore_ascii_case(t))
        && !is_placeholder(value)
        && !same_identifier(name, value)
        && !is_small_number(value)
}

/// `MYSQL_ALLOW_EMPTY_PASSWORD: 1`, `AUTH_TIMEOUT=30`: flags and sizes, not PINs.
fn is_small_number(value: &str) -> bool {
    value.len() < 6 && value.bytes().all(|b| b.is_ascii_digit())
}

/// `token=token`, `ClientSecret => "CLIENT_SECRET"`: the value repeats the name.
fn same_identifier(name: &str, value: &str) -> bool {
    let norm = |s: &str| {
        s.bytes()
            .filter(u8::is_ascii_alphanumeric)
            .map(|b| b.to_ascii_lowercase())
            .collect::<Vec<u8>>()
    };
    let name = norm(name);
    !name.is_empty() && name == norm(value)
}

/// A value that talks about a secret instead of being one: prose such as
/// `"invalid token"` or an identifier such as `GITHUB_TOKEN`, `mysql_native_password`.
fn names_a_secret(value: &str) -> bool {
    if !has_keyword(&compact_upper(value)) {
        return false;
    }
    let identifier = value.contains(['_', '-', '.'])
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    identifier || value.contains(char::is_whitespace)
}

/// For values found in code or prose: long enough or not a plain word
/// (`hunter2`, `changeme`, `p@ss`, not `error`), and not about a secret.
fn plausible(value: &str) -> bool {
    let value = value.trim();
    (value.len() >= 8 || (value.len() >= 4 && !value.bytes().all(|b| b.is_ascii_alphabetic())))
        && !names_a_secret(value)
}

fn env_value(name: &str, value: &str) -> bool {
    is_sensitive_name(name) && is_secret_value(name, value)
}

fn is_placeholder(value: &str) -> bool {
    let v = value.trim();
    if let Some(rest) = v.strip_prefix('$') {
        return rest.starts_with('{')
            || rest.starts_with('(')
            || rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    }
    (v.starts_with('%') && v.ends_with('%') && v.len() > 2)
        || (v.starts_with('<') && v.ends_with('>'))
        || v.starts_with("{{")
        || (!v.is_empty() && v.chars().all(|c| matches!(c, '*' | '.' | 'x' | 'X' | '#' | '…')))
}

/// `3306:3306`, `127.0.0.1:3306:3306/tcp`.
fn is_port_mapping(value: &str) -> bool {
    let ports = value
        .strip_suffix("/tcp")
        .or_else(|| value.strip_suffix("/udp"))
        .unwrap_or(value);
    ports.contains(':')
        && ports
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b':' || b == b'.')
}

fn looks_random(value: &str) -> bool {
    let has = |f: fn(&u8) -> bool| value.as_bytes().iter().any(f);
    has(u8::is_ascii_digit)
        || (value.len() >= 20 && has(u8::is_ascii_uppercase) && has(u8::is_ascii_lowercase))
}

/// `String,`, `Option<T>`, `str`, `Token`, `foo();` — what follows `name:` in source code.
fn looks_like_code(value: &str) -> bool {
    let v = value.trim();
    let camel_type = v.len() >= 2
        && v.as_bytes()[0].is_ascii_uppercase()
        && v.bytes().skip(1).all(|b| b.is_ascii_alphabetic())
        && v.bytes().skip(1).any(|b| b.is_ascii_lowercase());
    v.ends_with([',', ';', '{', '(', ')'])
        || v.contains(['(', '<', '[', '{'])
        || v.contains("::")
        || v.starts_with('&')
        || camel_type
        || TYPE_WORDS.iter().any(|t| v.eq_ignore_ascii_case(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sensitive_names() {
        for name in [
            "DB_PASSWORD",
            "api_key",
            "apiKey",
            "X-API-KEY",
            "GITHUB_TOKEN",
            "client_secret",
            "private_key",
            "DB_PASSWD",
            "MYSQL_PWD",
            "GOOGLE_CREDENTIALS",
            "Authorization",
            "proxy-authorisation",
            "auth",
            "spring.datasource.password",
            "AZURE_CLIENT_SECRET",
            "DB_PASSWORD_HASH",
            "private_key_id",
            "privateKeyId",
        ] {
            assert!(is_sensitive_name(name), "{name}");
        }
        for name in [
            "PWD",
            "OLDPWD",
            "GIT_AUTHOR_NAME",
            "author",
            "TOKENIZERS_PARALLELISM",
            "max_tokens",
            "input_tokens",
            "NODE_ENV",
            "PORT",
            "key",
            "",
            "authority",
            "certificate_authorities",
            "TOKEN_URL",
            "oauth2RedirectUrl",
            "PASSWORD_FILE",
            "auth_mode",
            "token_type",
            "SECRET_SIZE_MIN",
            "AWS_ACCESS_KEY_ID",
            "progressToken",
            "nextToken",
            "page_token",
        ] {
            assert!(!is_sensitive_name(name), "{name}");
        }
    }

    #[test]
    fn placeholders_and_trivial_values_are_not_secrets() {
        for value in [
            "$API_KEY",
            "${GITHUB_TOKEN}",
            "$(pass show x)",
            "$",
            "%TOKEN%",
            "<your-token>",
            "{{ secrets.TOKEN }}",
            "****",
            "xxxxxxxx",
            "true",
            "FALSE",
            "",
            "  ",
            "password",
            "PASSWORD",
            "write",
            "1",
            "4096",
        ] {
            assert!(!is_secret_value("password", value), "{value:?}");
        }
        // In .env lines and JSON values even a value mentioning a keyword is kept secret.
        assert!(is_secret_value("DB_PASSWORD", "my-secret-sauce"));
        assert!(!is_secret_value("ClientSecret", "CLIENT_SECRET"));
        for value in [
            "hunter2",
            "$2b$12$abcdefghijk",
            "s3cr3t!",
            "changeme",
            "123456",
            "admin",
        ] {
            assert!(is_secret_value("password", value), "{value:?}");
        }
    }

    #[test]
    fn quoted_values_must_be_plausible_secrets() {
        for value in [
            "error",
            "bar",
            "secret",
            "T",
            "//",
            "invalid token",
            "GITHUB_TOKEN",
            "mysql_native_password",
        ] {
            assert!(!accept(Check::QuotedValue, "token", value), "{value}");
        }
        for value in ["hunter2", "changeme", "p@ss", "0123456789abcdef"] {
            assert!(accept(Check::QuotedValue, "token", value), "{value}");
        }
    }

    #[test]
    fn code_values_are_vetoed_for_yaml_style() {
        for value in [
            "String,",
            "Option<String>",
            "str",
            "Token",
            "&str",
            "get()",
            "u32;",
        ] {
            assert!(!accept(Check::YamlValue, "token", value), "{value}");
        }
        for value in ["hunter2", "CHANGEME", "s3cr3t", "abc.def-ghi"] {
            assert!(accept(Check::YamlValue, "password", value), "{value}");
        }
    }

    #[test]
    fn random_looking_values() {
        assert!(accept(Check::RandomLooking, "", "abc123def456"));
        assert!(accept(Check::RandomLooking, "", "abcdefghijKLMNOPqrstuv"));
        assert!(!accept(Check::RandomLooking, "", "responsibilities"));
        assert!(!accept(Check::RandomLooking, "", "$TOKEN"));
        assert!(accept(Check::NotPlaceholder, "", "hunter2"));
        assert!(!accept(Check::NotPlaceholder, "", "${DB_PASSWORD}"));
        assert!(accept(Check::Always, "", ""));
        assert!(accept(Check::HighEntropy, "token", "x7Gk2qLm9ZrT4vBn"));
        assert!(!accept(Check::HighEntropy, "token_url", "x7Gk2qLm9ZrT4vBn"));
        assert!(!accept(Check::HighEntropy, "token", "derive_secret_v2"));
        assert!(accept(Check::CliPassword, "", "123456"));
        assert!(!accept(Check::CliPassword, "", "3306:3306"));
        assert!(!accept(Check::CliPassword, "", "127.0.0.1:3306:3306/tcp"));
        assert!(!accept(Check::CliPassword, "", "$MYSQL_PWD"));
        assert!(!accept(Check::CliPassword, "", "PASSWORD"));
        assert!(!accept(Check::CliPassword, "", "…"));
    }
}
