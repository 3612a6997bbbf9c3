//! Tests of secret redaction: one realistic sample per kind, and text that must survive.
//!
//! Fake secrets are generated with the right shape at run time so that this
//! file does not itself look like a leaked credential to scanners.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use super::secrets::{KINDS, RULES};
use super::{FilterReport, PrivacyConfig, PrivacyFilter};

pub(super) static FILTER: LazyLock<PrivacyFilter> =
    LazyLock::new(|| PrivacyFilter::new(PrivacyConfig::default()));

pub(super) const UPPER_NUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
pub(super) const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
pub(super) const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
pub(super) const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
pub(super) const HEX: &str = "0123456789abcdef";
pub(super) const DIGITS: &str = "0123456789";

/// `len` pseudo-random characters from `alphabet` (deterministic per seed).
pub(super) fn fake(alphabet: &str, len: usize, seed: u64) -> String {
    let chars: Vec<char> = alphabet.chars().collect();
    let mut state = seed ^ 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            chars[((state >> 33) as usize) % chars.len()]
        })
        .collect()
}

/// A PEM block; `label` is e.g. "RSA PRIVATE KEY", `nl` the line separator.
fn pem(label: &str, nl: &str, seed: u64) -> String {
    let body: Vec<String> = (0..4).map(|i| fake(B64, 64, seed + i)).collect();
    format!(
        "-----BEGIN {label}-----{nl}{}{nl}-----END {label}-----",
        body.join(nl)
    )
}

struct Sample {
    kind: &'static str,
    text: String,
    secret: String,
    kept: Vec<&'static str>,
}

fn sample(kind: &'static str, text: String, secret: String, kept: &[&'static str]) -> Sample {
    Sample {
        kind,
        text,
        secret,
        kept: kept.to_vec(),
    }
}

/// Filters `text` and checks: secret gone, exactly `count` redactions all of
/// `kind`, surrounding text kept, and a second pass changes nothing.
fn check_redacted(kind: &str, text: &str, secret: &str, kept: &[&str], count: u32) -> String {
    let (out, report) = FILTER.filter_text(text);
    assert!(!out.contains(secret), "{kind}: secret left in {out:?}");
    assert!(
        out.contains(&format!("[REDACTED:{kind}]")),
        "{kind}: no marker in {out:?}"
    );
    assert_eq!(
        report.redactions.get(kind),
        Some(&count),
        "{kind}: {report:?} for {out:?}"
    );
    assert_eq!(
        report.redaction_count(),
        count,
        "{kind}: other kinds counted: {report:?}"
    );
    for part in kept {
        assert!(out.contains(part), "{kind}: lost {part:?} from {out:?}");
    }
    let (again, second) = FILTER.filter_text(&out);
    assert_eq!(again, out, "{kind}: second pass changed the text");
    assert!(second.is_clean(), "{kind}: second pass reported {second:?}");
    out
}

fn samples() -> Vec<Sample> {
    let aws_id = format!("{}{}", "AKIA", fake(UPPER_NUM, 16, 1));
    let aws_secret = fake(B64, 40, 2);
    let gcp = ["AI", "za", &fake(B64URL, 35, 3)].concat();
    let sa_id = fake(HEX, 40, 4);
    let azure = format!("{}==", fake(B64, 86, 5));
    let azure_secret = format!("{}8Q~{}", fake(ALNUM, 3, 6), fake(B64URL, 31, 7));
    let ghp = ["gh", "p_", &fake(ALNUM, 36, 8)].concat();
    let glpat = ["gl", "pat-", &fake(B64URL, 20, 9)].concat();
    let slack = format!(
        "{}-{}-{}-{}",
        "xoxb",
        fake(DIGITS, 12, 10),
        fake(DIGITS, 13, 11),
        fake(ALNUM, 24, 12)
    );
    let hook = format!(
        "T{}/B{}/{}",
        fake(UPPER_NUM, 8, 13),
        fake(UPPER_NUM, 10, 14),
        fake(ALNUM, 24, 15)
    );
    let stripe = ["sk_li", "ve_", &fake(ALNUM, 24, 16)].concat();
    let openai = ["sk-pr", "oj-", &fake(B64URL, 48, 17)].concat();
    let anthropic = ["sk-an", "t-api03-", &fake(B64URL, 93, 18), "AA"].concat();
    let rsa = pem("RSA PRIVATE KEY", "\n", 19);
    let jwt = format!(
        "eyJhbGciOiJIUzI1NiJ9.eyJ{}.{}",
        fake(B64URL, 40, 20),
        fake(B64URL, 43, 21)
    );
    let db_pw = format!("S3cr3t-{}", fake(ALNUM, 8, 22));
    let bearer = fake(ALNUM, 32, 23);
    let env_pw = format!("hunter2-{}", fake(ALNUM, 6, 24));
    let npm = ["np", "m_", &fake(ALNUM, 36, 25)].concat();
    let hf = ["h", "f_", &fake(ALNUM, 34, 26)].concat();
    let sendgrid = ["S", "G.", &fake(B64URL, 22, 27), ".", &fake(B64URL, 43, 28)].concat();
    let twilio = ["S", "K", &fake(HEX, 32, 29)].concat();
    let sas_sig = format!(
        "{}%2B{}%2F{}%3D",
        fake(ALNUM, 14, 30),
        fake(ALNUM, 12, 31),
        fake(ALNUM, 14, 32)
    );
    let mysql_pw = format!("Hunter2{}", fake(ALNUM, 6, 33));
    let session = format!("FwoGZXIvYXdzE{}", fake(B64, 80, 34));
    vec![
        sample(
            "private_key",
            format!("Here is the key:\n{rsa}\nDone."),
            rsa.clone(),
            &["Here is the key:\n", "\nDone."],
        ),
        sample(
            "anthropic_key",
            format!("export ANTHROPIC_API_KEY={anthropic}\nclaude --help"),
            anthropic.clone(),
            &["export ANTHROPIC_API_KEY=", "\nclaude --help"],
        ),
        sample(
            "openai_key",
            format!("client = OpenAI(api_key=\"{openai}\")  # prod"),
            openai.clone(),
            &["client = OpenAI(api_key=\"", "\")  # prod"],
        ),
        sample(
            "aws_access_key",
            format!("aws_access_key_id = {aws_id}\nregion = us-east-1"),
            aws_id.clone(),
            &["aws_access_key_id = ", "region = us-east-1"],
        ),
        sample(
            "aws_secret_key",
            format!("[default]\naws_secret_access_key = {aws_secret}\nregion = eu-west-1"),
            aws_secret.clone(),
            &["[default]\naws_secret_access_key = ", "\nregion = eu-west-1"],
        ),
        sample(
            "gcp_api_key",
            format!("curl 'https://maps.googleapis.com/maps/api/geocode/json?key={gcp}&address=Paris'"),
            gcp.clone(),
            &["json?key=", "&address=Paris'"],
        ),
        sample(
            "gcp_service_account_key",
            format!(
                "{{\"type\": \"service_account\", \"private_key_id\": \"{sa_id}\", \"project_id\": \"demo\"}}"
            ),
            sa_id.clone(),
            &["\"private_key_id\": \"", "\"project_id\": \"demo\""],
        ),
        sample(
            "azure_storage_key",
            format!(
                "DefaultEndpointsProtocol=https;AccountName=cairnstore;AccountKey={azure};EndpointSuffix=core.windows.net"
            ),
            azure.clone(),
            &[
                "AccountName=cairnstore;AccountKey=",
                ";EndpointSuffix=core.windows.net",
            ],
        ),
        sample(
            "azure_client_secret",
            format!("AZURE_TENANT_ID=common\nAZURE_CLIENT_SECRET={azure_secret}\nAZURE_CLIENT_ID=app"),
            azure_secret.clone(),
            &[
                "AZURE_TENANT_ID=common\nAZURE_CLIENT_SECRET=",
                "\nAZURE_CLIENT_ID=app",
            ],
        ),
        sample(
            "github_token",
            format!("git clone https://{ghp}@github.com/acme/cairn.git"),
            ghp.clone(),
            &["git clone https://", "@github.com/acme/cairn.git"],
        ),
        sample(
            "gitlab_token",
            format!("curl --header \"PRIVATE-TOKEN: {glpat}\" https://gitlab.example.com/api/v4/projects"),
            glpat.clone(),
            &[
                "curl --header \"PRIVATE-TOKEN: ",
                "\" https://gitlab.example.com/api/v4/projects",
            ],
        ),
        sample(
            "slack_token",
            format!("SLACK_BOT={slack} ./notify.sh"),
            slack.clone(),
            &["SLACK_BOT=", " ./notify.sh"],
        ),
        sample(
            "slack_token",
            format!("POST https://hooks.slack.com/services/{hook} with payload"),
            hook.clone(),
            &["https://hooks.slack.com/services/[REDACTED:slack_token] with payload"],
        ),
        sample(
            "stripe_key",
            format!("Stripe.api_key = {stripe}; charge()"),
            stripe.clone(),
            &["Stripe.api_key = ", "; charge()"],
        ),
        sample(
            "jwt",
            format!("curl -H 'Authorization: Bearer {jwt}' https://api.example.com/me"),
            jwt.clone(),
            &["curl -H 'Authorization: Bearer ", "' https://api.example.com/me"],
        ),
        sample(
            "npm_token",
            format!("NPM_TOKEN={npm} npm publish --access public"),
            npm.clone(),
            &["NPM_TOKEN=[REDACTED:npm_token] npm publish --access public"],
        ),
        sample(
            "huggingface_token",
            format!("huggingface-cli login --token {hf} --add-to-git-credential"),
            hf.clone(),
            &["huggingface-cli login --token [REDACTED:huggingface_token] --add-to-git-credential"],
        ),
        sample(
            "sendgrid_key",
            format!(
                "curl https://api.sendgrid.com/v3/mail/send -H 'Authorization: Bearer {sendgrid}' -d @mail.json"
            ),
            sendgrid.clone(),
            &["-H 'Authorization: Bearer [REDACTED:sendgrid_key]' -d @mail.json"],
        ),
        sample(
            "twilio_key",
            format!("client = Client(\"{twilio}\", api_secret, account_sid)"),
            twilio.clone(),
            &["client = Client(\"[REDACTED:twilio_key]\", api_secret, account_sid)"],
        ),
        sample(
            "azure_sas",
            format!(
                "az storage blob download --blob-url \"https://acme.blob.core.windows.net/backups/db.sql?sv=2022-11-02&ss=b&srt=o&sp=r&se=2030-01-01T00:00:00Z&spr=https&sig={sas_sig}\" -f db.sql"
            ),
            sas_sig.clone(),
            &["&spr=https&sig=[REDACTED:azure_sas]\" -f db.sql"],
        ),
        sample(
            "cli_password",
            format!("mysql -u root -p{mysql_pw} -h db.internal shop < dump.sql"),
            mysql_pw.clone(),
            &["mysql -u root -p[REDACTED:cli_password] -h db.internal shop < dump.sql"],
        ),
        sample(
            "url_password",
            format!("DATABASE_URL=postgres://cairn_app:{db_pw}@db.internal:5432/cairn"),
            db_pw.clone(),
            &["DATABASE_URL=postgres://cairn_app:[REDACTED:url_password]@db.internal:5432/cairn"],
        ),
        sample(
            "auth_header",
            format!("curl -H \"Authorization: Bearer {bearer}\" -d @body.json"),
            bearer.clone(),
            &["Authorization: Bearer [REDACTED:auth_header]\" -d @body.json"],
        ),
        sample(
            "env_assignment",
            format!("NODE_ENV=production\nDB_PASSWORD={env_pw}\nPORT=3000"),
            env_pw.clone(),
            &["NODE_ENV=production\nDB_PASSWORD=[REDACTED:env_assignment]\nPORT=3000"],
        ),
        sample(
            "high_entropy",
            format!("[default]\nregion = eu-west-1\naws_session_token = {session}\noutput = json"),
            session.clone(),
            &["region = eu-west-1\naws_session_token = [REDACTED:high_entropy]\noutput = json"],
        ),
    ]
}

#[test]
fn one_sample_per_kind_is_redacted() {
    for s in samples() {
        let kept: Vec<&str> = s.kept.clone();
        check_redacted(s.kind, &s.text, &s.secret, &kept, 1);
    }
}

#[test]
fn samples_cover_every_kind_in_the_table() {
    let covered: BTreeSet<&str> = samples().iter().map(|s| s.kind).collect();
    let listed: BTreeSet<&str> = KINDS.iter().copied().collect();
    let in_rules: BTreeSet<&str> = RULES.iter().map(|r| r.kind).collect();
    assert_eq!(covered, listed);
    assert_eq!(in_rules, listed);
}

#[test]
fn private_key_variants() {
    for (i, label) in [
        "RSA PRIVATE KEY",
        "EC PRIVATE KEY",
        "DSA PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY",
        "PGP PRIVATE KEY BLOCK",
    ]
    .into_iter()
    .enumerate()
    {
        let block = pem(label, "\n", 100 + i as u64);
        let text = format!("before\n{block}\nafter");
        let out = check_redacted("private_key", &text, &block[40..80], &[], 1);
        assert_eq!(out, "before\n[REDACTED:private_key]\nafter", "{label}");
    }
}

#[test]
fn private_key_with_json_escapes_in_a_service_account_file() {
    let block = pem("PRIVATE KEY", "\\n", 120);
    let id = fake(HEX, 40, 121);
    let text = format!(
        "{{\"type\": \"service_account\", \"private_key_id\": \"{id}\", \"private_key\": \"{block}\\n\", \"client_email\": \"bot@demo.iam.gserviceaccount.com\"}}"
    );
    let (out, report) = FILTER.filter_text(&text);
    assert!(!out.contains(&id) && !out.contains(&block[40..80]), "{out}");
    assert_eq!(report.redactions.get("private_key"), Some(&1));
    assert_eq!(report.redactions.get("gcp_service_account_key"), Some(&1));
    assert_eq!(report.redaction_count(), 2, "{report:?}");
    assert!(
        out.contains("\"private_key\": \"[REDACTED:private_key]\\n\""),
        "{out}"
    );
    assert!(out.contains("\"client_email\": \"bot@demo.iam.gserviceaccount.com\""));
}

#[test]
fn unterminated_private_key_is_redacted_to_the_end() {
    let body = fake(B64, 64, 130);
    let text = format!("$ cat ~/.ssh/id_ed25519\n-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n{body}");
    let out = check_redacted("private_key", &text, &body, &[], 1);
    assert_eq!(out, "$ cat ~/.ssh/id_ed25519\n[REDACTED:private_key]");
    let text = format!(
        "x -----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00FF\n\n{body}"
    );
    assert_eq!(
        check_redacted("private_key", &text, &body, &[], 1),
        "x [REDACTED:private_key]"
    );
    let text = format!("k = \"-----BEGIN PRIVATE KEY-----\\n{body}");
    assert_eq!(
        check_redacted("private_key", &text, &body, &[], 1),
        "k = \"[REDACTED:private_key]"
    );
}

#[test]
fn anthropic_keys_are_never_counted_as_openai() {
    let legacy = ["sk-an", "t-", &fake(B64URL, 40, 140)].concat();
    let api03 = ["sk-an", "t-api03-", &fake(B64URL, 93, 141), "AA"].concat();
    let text = format!("a={legacy} b={api03}");
    let (out, report) = FILTER.filter_text(&text);
    assert_eq!(out, "a=[REDACTED:anthropic_key] b=[REDACTED:anthropic_key]");
    assert_eq!(report.redactions.get("anthropic_key"), Some(&2));
    assert_eq!(report.redactions.get("openai_key"), None);
}

#[test]
fn openai_key_variants() {
    let legacy = ["sk", "-", &fake(ALNUM, 48, 150)].concat();
    check_redacted(
        "openai_key",
        &format!("key: {legacy}."),
        &legacy,
        &["key: ", "."],
        1,
    );
    let svc = ["sk-svc", "acct-", &fake(B64URL, 60, 151)].concat();
    check_redacted(
        "openai_key",
        &format!("OPENAI_API_KEY={svc}"),
        &svc,
        &["OPENAI_API_KEY="],
        1,
    );
}

#[test]
fn aws_keys_in_env_and_json() {
    let id = ["AS", "IA", &fake(UPPER_NUM, 16, 160)].concat();
    let secret = fake(B64, 40, 161);
    let text = format!(
        "{{\"AccessKeyId\": \"{id}\", \"SecretAccessKey\": \"{secret}\", \"Expiration\": \"2030-01-01\"}}"
    );
    let (out, report) = FILTER.filter_text(&text);
    assert!(!out.contains(&id) && !out.contains(&secret), "{out}");
    assert_eq!(report.redactions.get("aws_access_key"), Some(&1));
    assert_eq!(report.redactions.get("aws_secret_key"), Some(&1));
    assert_eq!(report.redaction_count(), 2);
    assert!(out.contains("\"Expiration\": \"2030-01-01\""));
    let text = format!(
        "export AWS_ACCESS_KEY_ID={}\n",
        ["AK", "IA", &fake(UPPER_NUM, 16, 162)].concat()
    );
    let (out, report) = FILTER.filter_text(&text);
    assert_eq!(out, "export AWS_ACCESS_KEY_ID=[REDACTED:aws_access_key]\n");
    assert_eq!(report.redaction_count(), 1);
}

#[test]
fn github_token_variants() {
    for (seed, prefix) in [
        "gh".to_string() + "o_",
        "gh".to_string() + "u_",
        "gh".to_string() + "s_",
        "gh".to_string() + "r_",
    ]
    .into_iter()
    .enumerate()
    {
        let token = format!("{prefix}{}", fake(ALNUM, 36, 170 + seed as u64));
        check_redacted(
            "github_token",
            &format!("token {token} ok"),
            &token,
            &["token ", " ok"],
            1,
        );
    }
    let pat = [
        "github_",
        "pat_",
        &fake(ALNUM, 22, 175),
        "_",
        &fake(ALNUM, 59, 176),
    ]
    .concat();
    check_redacted(
        "github_token",
        &format!("GH_TOKEN={pat}"),
        &pat,
        &["GH_TOKEN="],
        1,
    );
    let ghs = ["gh", "s_", &fake(ALNUM, 36, 177)].concat();
    let url = format!("https://x-access-token:{ghs}@github.com/acme/repo");
    check_redacted(
        "github_token",
        &url,
        &ghs,
        &["https://x-access-token:", "@github.com/acme/repo"],
        1,
    );
}

#[test]
fn stripe_and_slack_variants() {
    for (i, prefix) in ["sk_te", "rk_li", "pk_li"].into_iter().enumerate() {
        let key = format!(
            "{prefix}{}{}",
            if prefix == "sk_te" { "st_" } else { "ve_" },
            fake(ALNUM, 24, 180 + i as u64)
        );
        check_redacted("stripe_key", &format!("key {key}"), &key, &["key "], 1);
    }
    let user = ["xo", "xp-", &fake(DIGITS, 12, 185), "-", &fake(ALNUM, 32, 186)].concat();
    check_redacted("slack_token", &format!("SLACK={user}"), &user, &["SLACK="], 1);
}

#[test]
fn url_password_keeps_scheme_user_and_host() {
    let pw = format!("pw{}", fake(ALNUM, 10, 190));
    let out = check_redacted(
        "url_password",
        &format!("redis://:{pw}@cache:6379/0"),
        &pw,
        &[],
        1,
    );
    assert_eq!(out, "redis://:[REDACTED:url_password]@cache:6379/0");
    let out = check_redacted(
        "url_password",
        &format!("amqp://guest:{pw}@mq.local"),
        &pw,
        &[],
        1,
    );
    assert_eq!(out, "amqp://guest:[REDACTED:url_password]@mq.local");
}

#[test]
fn auth_header_variants() {
    let key = fake(ALNUM, 40, 200);
    let out = check_redacted(
        "auth_header",
        &format!("x-api-key: {key}\ncontent-type: json"),
        &key,
        &[],
        1,
    );
    assert_eq!(out, "x-api-key: [REDACTED:auth_header]\ncontent-type: json");
    let basic = "dXNlcjpwYXNzd29yZA==";
    let out = check_redacted(
        "auth_header",
        &format!("{{\"Authorization\": \"Basic {basic}\"}}"),
        basic,
        &[],
        1,
    );
    assert_eq!(out, "{\"Authorization\": \"Basic [REDACTED:auth_header]\"}");
}

#[test]
fn env_assignment_variants() {
    let v = |seed| format!("v4lue{}", fake(ALNUM, 8, seed));
    let (a, b, c, d, e) = (v(210), v(211), v(212), v(213), v(214));
    let dotenv = format!(
        "# settings\nNODE_ENV=production\nPORT=3000\nexport STRIPE_WEBHOOK_SECRET=\"{a} with spaces\"\nSESSION_TOKEN='{b}'\nAPI_KEY={c}\nMYSQL_PWD={d}\nGOOGLE_CREDENTIALS={e}\n"
    );
    let (out, report) = FILTER.filter_text(&dotenv);
    assert_eq!(
        out,
        "# settings\nNODE_ENV=production\nPORT=3000\nexport STRIPE_WEBHOOK_SECRET=\"[REDACTED:env_assignment]\"\nSESSION_TOKEN='[REDACTED:env_assignment]'\nAPI_KEY=[REDACTED:env_assignment]\nMYSQL_PWD=[REDACTED:env_assignment]\nGOOGLE_CREDENTIALS=[REDACTED:env_assignment]\n"
    );
    assert_eq!(report.redactions.get("env_assignment"), Some(&5));

    let json = format!(
        "{{\"username\": \"bob\", \"password\": \"{a}\", \"apiKey\": \"{b}\", \"escaped\": \"{{\\\"client_secret\\\": \\\"{c}\\\"}}\"}}"
    );
    let (out, report) = FILTER.filter_text(&json);
    assert!(![&a, &b, &c].iter().any(|s| out.contains(s.as_str())), "{out}");
    assert!(out.contains("\"username\": \"bob\""));
    assert!(out.contains("\"password\": \"[REDACTED:env_assignment]\""));
    assert_eq!(report.redactions.get("env_assignment"), Some(&3));

    let yaml =
        format!("database:\n  host: db\n  password: {a}\n  auth_token: {b} # rotated\n  - api_key: {c}\n");
    let (out, report) = FILTER.filter_text(&yaml);
    assert_eq!(
        out,
        "database:\n  host: db\n  password: [REDACTED:env_assignment]\n  auth_token: [REDACTED:env_assignment] # rotated\n  - api_key: [REDACTED:env_assignment]\n"
    );
    assert_eq!(report.redaction_count(), 3);

    let cli = format!("mysql -u root --password={a} -h db; API_TOKEN = \"{b}\"; db.auth(token := \"{c}\")");
    let (out, report) = FILTER.filter_text(&cli);
    assert_eq!(
        out,
        "mysql -u root --password=[REDACTED:env_assignment] -h db; API_TOKEN = \"[REDACTED:env_assignment]\"; db.auth(token := \"[REDACTED:env_assignment]\")"
    );
    assert_eq!(report.redaction_count(), 3);
}

#[test]
fn hash_arrows_need_a_quoted_key() {
    let pw = format!("s3cret-{}", fake(ALNUM, 6, 220));
    let text = format!("config = {{ 'password' => '{pw}', \"user\" => \"bob\" }}");
    let out = check_redacted("env_assignment", &text, &pw, &["\"user\" => \"bob\""], 1);
    assert!(out.contains("'password' => '[REDACTED:env_assignment]'"), "{out}");
}

/// Text that looks a bit like secrets but is not; it must come back unchanged.
const INNOCENT: &[&str] = &[
    "Remember to rotate the token and never paste a password into the chat. The auth flow issues a refresh token; the secret sauce is caching.",
    "let token = lexer.next_token()?;\nfn check_password(password: &str) -> bool { verify(password) }\nstruct Session {\n    token: String,\n    auth: Option<AuthConfig>,\n    password: &'static str,\n}\nif token == \"EOF\" { return; }\nlet password = prompt(\"Password: \")?;",
    "interface Creds {\n  password: string;\n  token?: string;\n  apiKey: ApiKey;\n}",
    "def login(username, password):\n    token = create_token(user)\n    session.auth = auth\n    requests.get(url, auth=(user, pw), token=token)\n    return {\"token\": token}",
    "commit 3f2a9c1d4e5b6a7f8091a2b3c4d5e6f708192a3b\nMerge: 1a2b3c4 5d6e7f8\nAuthor: Jane Doe <jane@example.com>",
    "session 550e8400-e29b-41d4-a716-446655440000 started, trace 0af7651916cd43dd8448eb211c80319c",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "Update the task-list, run the risk-assessment-for-the-quarterly-report-2024 and disk-usage checks; ask-questions-before-refactoring; pip install sk-learn",
    "https://example.com:8443/path?q=1&page=2 git@github.com:org/repo.git ssh://git@github.com:22/org/repo mailto:a@b.c",
    "PWD=/home/dev/project\nOLDPWD=/home/dev\nGIT_AUTHOR_NAME=Jane\nTOKENIZERS_PARALLELISM=false\nAPI_KEY=$API_KEY\nGITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}\nAUTH_ENABLED=true\nDB_PASSWORD=${DB_PASSWORD}\nMAX_TOKENS=4096",
    "{\"author\": \"Jane Doe\", \"max_tokens\": 4096, \"tokenizer\": \"cl100k\", \"auth\": \"none\", \"input_tokens\": 12}",
    "The bearer of this message holds a bearer token. Authorization: required for every endpoint.",
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\n-----END CERTIFICATE-----\n-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYI\n-----END PUBLIC KEY-----",
    "if pem.starts_with(\"-----BEGIN PRIVATE KEY-----\") { parse(pem) }",
    "postgres://user:${DB_PASSWORD}@localhost/db and postgres://localhost:5432/db",
    "AKIA is the prefix of AWS access key ids; sk_live_ keys are Stripe's; ghp_ is GitHub's; eyJ starts a JWT.",
    "password: hunter2 is a famous example\nsecret: Token",
    "match e {\n    Error::Token => \"invalid token\",\n    Kind::ClientSecret => \"CLIENT_SECRET\",\n    Plugin::Native => \"mysql_native_password\",\n}",
    "Unexpected { token: \"error\" }; let password = \"bar\"; auth_mode: \"token\", authority = \"//\"",
    "permissions:\n  contents: read\n  id-token: write\nenv:\n  TOKEN_URL: https://auth.example.com/token\n  SECRET_SIZE_MIN=136",
    "/// <Private key data here.>\nconst OPEN_TAG: &str = \"<cairn-context>\";\nconst CLOSE_TAG: &str = \"</cairn-context>\";",
    "",
    "short",
    "日本語のテキスト、パスワードなし 🦀 token",
];

#[test]
fn innocent_text_is_left_alone() {
    for text in INNOCENT {
        let (out, report) = FILTER.filter_text(text);
        assert_eq!(&out, text, "changed: {report:?}");
        assert_eq!(report, FilterReport::default());
    }
}

/// The two ways of finding the matching rules agree: a filter that built the
/// DFA of every rule (`warm`, as a server does) and one that checks only the
/// rules whose keywords the text holds (as `cairn-hook` does), on every
/// sample, every innocent text, and a name spelled with a letter outside
/// ASCII that a case-insensitive rule still matches.
#[test]
fn a_warmed_filter_finds_what_the_gated_one_finds() {
    let warmed = PrivacyFilter::new(PrivacyConfig::default());
    warmed.warm();
    let folded = format!(
        "aws_\u{17F}ecret_acce\u{17F}\u{17F}_\u{212A}ey = {}",
        fake(B64, 40, 7)
    );
    let texts = samples()
        .into_iter()
        .map(|s| s.text)
        .chain(INNOCENT.iter().map(|t| t.to_string()))
        .chain([folded.clone()]);
    for text in texts {
        let gated = FILTER.filter_text(&text);
        assert_eq!(warmed.filter_text(&text), gated, "{text}");
    }
    assert_ne!(
        FILTER.filter_text(&folded).0,
        folded,
        "the long s spelling is still a password"
    );
}
