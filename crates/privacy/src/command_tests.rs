//! Tests of passwords and tokens typed into commands: `mysql -p…`, `curl -u user:…`, `npm config set …:_authToken …`.

use super::secret_tests::{ALNUM, B64, FILTER, HEX, fake};

/// Filters `text`, expects exactly `expected` and `count` redactions of `kind`.
fn redacts_to(text: &str, expected: &str, kind: &str, count: u32) {
    let (out, report) = FILTER.filter_text(text);
    assert_eq!(out, expected, "{report:?}");
    assert_eq!(report.redactions.get(kind), Some(&count), "{report:?}");
    assert_eq!(report.redaction_count(), count, "{report:?}");
    let (again, second) = FILTER.filter_text(&out);
    assert_eq!(again, out);
    assert!(second.is_clean(), "{second:?}");
}

fn unchanged(text: &str) {
    let (out, report) = FILTER.filter_text(text);
    assert_eq!(out, text, "{report:?}");
    assert!(report.is_clean(), "{text}: {report:?}");
}

#[test]
fn mysql_password_glued_to_dash_p() {
    let pw = format!("Hunter2{}", fake(ALNUM, 6, 400));
    for (text, expected) in [
        (
            format!("mysql -u root -p{pw}"),
            "mysql -u root -p[REDACTED:cli_password]".to_string(),
        ),
        (
            format!("docker exec -i db mysqldump -uroot -p'{pw}' shop > shop.sql"),
            "docker exec -i db mysqldump -uroot -p'[REDACTED:cli_password]' shop > shop.sql".to_string(),
        ),
        (
            format!("mariadb -h 10.0.0.5 -P 3306 -u app -p\"{pw} x\" -e 'select 1'"),
            "mariadb -h 10.0.0.5 -P 3306 -u app -p\"[REDACTED:cli_password]\" -e 'select 1'".to_string(),
        ),
        (
            format!("{{\"command\": \"mysql -uroot -p\\\"{pw}\\\" -e \\\"show tables\\\"\"}}"),
            "{\"command\": \"mysql -uroot -p\\\"[REDACTED:cli_password]\\\" -e \\\"show tables\\\"\"}"
                .to_string(),
        ),
        (
            format!("mysql -h db \\\n  -u root \\\n  -p{pw} shop"),
            "mysql -h db \\\n  -u root \\\n  -p[REDACTED:cli_password] shop".to_string(),
        ),
        (
            format!("mysqladmin -u root -p{pw} status && echo ok"),
            "mysqladmin -u root -p[REDACTED:cli_password] status && echo ok".to_string(),
        ),
    ] {
        redacts_to(&text, &expected, "cli_password", 1);
    }
    // `--password=` was already an assignment; it stays one.
    redacts_to(
        &format!("mysql --user=root --password={pw} shop"),
        "mysql --user=root --password=[REDACTED:env_assignment] shop",
        "env_assignment",
        1,
    );
}

#[test]
fn mysql_prompting_dash_p_and_ports_are_kept() {
    for text in [
        "mysql -u root -p",
        "mysql -u root -p shop < dump.sql",
        "mysql -h db -P 3306 -u root -p",
        "mysql -h db -P3306 -u root --password shop",
        "mysql -u root -p$MYSQL_ROOT_PASSWORD shop",
        "mysql -u root -p\"${DB_PASS}\" shop",
        "mkdir -p build && ssh -p2222 host",
        "docker run -d --name mysql -p3306:3306 -e MYSQL_ALLOW_EMPTY_PASSWORD=1 mysql:8",
        "echo done; mysql -u root\nscp -pr a b",
        "{\"script\": \"mysql -u root shop\\nscp -pr a b\"}",
        "Run `mysql -u root -pPASSWORD` or `mysql -p<password>`, see `mysql -p…`",
    ] {
        unchanged(text);
    }
}

#[test]
fn curl_user_keeps_the_user_name() {
    let pw = format!("S3cret{}", fake(ALNUM, 8, 410));
    for (text, expected) in [
        (
            format!("curl -u admin:{pw} https://ci.example.com/api/json"),
            "curl -u admin:[REDACTED:cli_password] https://ci.example.com/api/json".to_string(),
        ),
        (
            format!("curl -s --user 'deploy:{pw} x' -X POST https://x.example.com"),
            "curl -s --user 'deploy:[REDACTED:cli_password]' -X POST https://x.example.com".to_string(),
        ),
        (
            format!("curl --user=api:{pw} https://api.mailgun.net/v3/x"),
            "curl --user=api:[REDACTED:cli_password] https://api.mailgun.net/v3/x".to_string(),
        ),
        (
            format!("curl -fsSL -uci-bot:{pw} \"https://repo.example.com/a.tgz\""),
            "curl -fsSL -uci-bot:[REDACTED:cli_password] \"https://repo.example.com/a.tgz\"".to_string(),
        ),
        (
            format!("[\"curl -u \\\"jane:{pw}\\\" https://x.example.com\"]"),
            "[\"curl -u \\\"jane:[REDACTED:cli_password]\\\" https://x.example.com\"]".to_string(),
        ),
        (
            format!("curl -H \"Accept: application/json\" -u \"jane:{pw}\" https://x.example.com"),
            "curl -H \"Accept: application/json\" -u \"jane:[REDACTED:cli_password]\" https://x.example.com"
                .to_string(),
        ),
    ] {
        redacts_to(&text, &expected, "cli_password", 1);
    }
}

#[test]
fn curl_without_a_password_is_kept() {
    for text in [
        "curl -u admin https://ci.example.com:8443/api",
        "curl --negotiate -u : https://intranet.example.com",
        "curl -u \"$USER:$PASS\" https://x.example.com",
        "curl -u ${CI_USER}:${CI_TOKEN} https://x.example.com",
        "curl --user-agent \"Mozilla/5.0 (X11; Linux x86_64)\" https://x.example.com:443/",
        "curl -sS https://x.example.com | tar -xz -u user:group",
        "curl --upload-file a.txt https://x.example.com/a:b",
        "`curl -u user:PASSWORD` or `curl -u user:…`",
    ] {
        unchanged(text);
    }
}

#[test]
fn npm_auth_tokens_in_config_commands_and_npmrc() {
    let legacy = format!(
        "{}-{}-{}-{}-{}",
        fake(HEX, 8, 420),
        fake(HEX, 4, 421),
        fake(HEX, 4, 422),
        fake(HEX, 4, 423),
        fake(HEX, 12, 424)
    );
    redacts_to(
        &format!("npm config set //registry.npmjs.org/:_authToken {legacy}"),
        "npm config set //registry.npmjs.org/:_authToken [REDACTED:npm_token]",
        "npm_token",
        1,
    );
    redacts_to(
        &format!("//registry.npmjs.org/:_authToken={legacy}\nalways-auth=true\n"),
        "//registry.npmjs.org/:_authToken=[REDACTED:npm_token]\nalways-auth=true\n",
        "npm_token",
        1,
    );
    let basic = fake(B64, 24, 425);
    redacts_to(
        &format!("//nexus.example.com/repository/npm/:_auth=\"{basic}\""),
        "//nexus.example.com/repository/npm/:_auth=\"[REDACTED:npm_token]\"",
        "npm_token",
        1,
    );
    let npm = ["np", "m_", &fake(ALNUM, 36, 426)].concat();
    redacts_to(
        &format!("yarn config set //registry.npmjs.org/:_authToken {npm}"),
        "yarn config set //registry.npmjs.org/:_authToken [REDACTED:npm_token]",
        "npm_token",
        1,
    );
    unchanged("//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n@acme:registry=https://npm.pkg.github.com");
    unchanged("self._auth = get_auth()\nlet x = a[b:_auth];");
}
