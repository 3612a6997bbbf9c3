//! Tests of the last-resort rule: high-entropy values under secret-looking
//! labels are redacted, long values in code and prose under the same labels are not.

use super::secret_tests::{ALNUM, B64, HEX, fake};
use super::token_tests::{redacted_once, unchanged};

#[test]
fn high_entropy_values_under_secret_labels() {
    let b64 = fake(B64, 40, 540);
    let hex = fake(HEX, 32, 541);
    let alnum = fake(ALNUM, 24, 542);
    let uuid = format!(
        "{}-{}-4{}-a{}-{}",
        fake(HEX, 8, 543),
        fake(HEX, 4, 544),
        fake(HEX, 3, 545),
        fake(HEX, 3, 546),
        fake(HEX, 12, 547)
    );
    for (text, secret, kept) in [
        (
            format!("INFO session created, token: {alnum} (expires in 3600s)"),
            &alnum,
            "INFO session created, token: [REDACTED:high_entropy] (expires in 3600s)",
        ),
        (
            format!("$ deploy --api-key {hex} --region eu"),
            &hex,
            "$ deploy --api-key [REDACTED:high_entropy] --region eu",
        ),
        (
            format!("machine api.heroku.com\n  login jane@example.com\n  password {uuid}\n"),
            &uuid,
            "  login jane@example.com\n  password [REDACTED:high_entropy]\n",
        ),
        (
            format!("[pypi]\nusername = __token__\nclient_secret = {b64}\n"),
            &b64,
            "username = __token__\nclient_secret = [REDACTED:high_entropy]\n",
        ),
    ] {
        let out = redacted_once(&text, secret, "high_entropy");
        assert!(out.contains(kept), "{out}");
    }
}

/// Code and prose that name a secret next to a long value that is not one.
const LABELLED_BUT_HARMLESS: &[&str] = &[
    "password = hashlib.sha256(password.encode()).hexdigest()",
    "let token = tokens[index + 1].clone();\nlet secret = derive_secret_v2(&master_key_2024);",
    "API_KEY = os.environ[\"OPENAI_API_KEY\"]\nsecret_key = settings.SECRET_KEY_FALLBACK",
    "auth middleware_for_requests_v2 is enabled; token refresh2authorization_code flow",
    "password reset link expires in 24 hours; token bucket rate_limiter_2048 per second",
    "token: Token<'static>,\nsecret: [u8; 32],\npassword: Option<String>,",
    "Authorization: required for /v1/users/12345/settings",
    "secret 0123456789012345 is a test vector of sixteen digits",
    "token = ${{ secrets.NPM_TOKEN }}\npassword = <your-password-here-1234>",
    "see auth: github.com/acme/auth-service/v2/internal/handlers",
    "access_token  TokenKind::AccessToken2024Refreshable",
    "let ec_private_key = self.to_sec1_der()?;\nlet api_key = cfg.k8s_api_v1_token;",
    "let token = x7Gk2qLm9ZrT4vBnQ(input);\nlet secret = Xk9mQ2vL7nR4tB8w::new();\nsecret: Xk9mQ2vL7nR4tB8w<T>,",
];

#[test]
fn labelled_harmless_values_are_kept() {
    for text in LABELLED_BUT_HARMLESS {
        unchanged(text);
    }
}
