//! Tests of vendor tokens: npm, Hugging Face, SendGrid, Twilio, Azure SAS, GCP service accounts.

use super::secret_tests::{ALNUM, B64, B64URL, FILTER, HEX, fake};

pub(super) fn redacted_once(text: &str, secret: &str, kind: &str) -> String {
    let (out, report) = FILTER.filter_text(text);
    assert!(!out.contains(secret), "{kind}: secret left in {out:?}");
    assert_eq!(
        report.redactions.get(kind),
        Some(&1),
        "{kind}: {report:?} for {out:?}"
    );
    assert_eq!(report.redaction_count(), 1, "{kind}: {report:?} for {out:?}");
    let (again, second) = FILTER.filter_text(&out);
    assert_eq!(again, out);
    assert!(second.is_clean(), "{second:?}");
    out
}

pub(super) fn unchanged(text: &str) {
    let (out, report) = FILTER.filter_text(text);
    assert_eq!(out, text, "{report:?}");
    assert!(report.is_clean(), "{text}: {report:?}");
}

#[test]
fn npm_and_hugging_face_tokens() {
    let npm = ["np", "m_", &fake(ALNUM, 36, 500)].concat();
    let out = redacted_once(&format!("token {npm}."), &npm, "npm_token");
    assert_eq!(out, "token [REDACTED:npm_token].");
    let hf = ["h", "f_", &fake(ALNUM, 37, 501)].concat();
    let out = redacted_once(&format!("HF_TOKEN={hf}"), &hf, "huggingface_token");
    assert_eq!(out, "HF_TOKEN=[REDACTED:huggingface_token]");
    unchanged(
        &[
            "np",
            "m_",
            &fake(ALNUM, 35, 502),
            " npm_config_user_agent npm_package_version",
        ]
        .concat(),
    );
    unchanged("from huggingface_hub import hf_hub_download; hf_hub_download(repo_id=x)");
    unchanged(&["h", "f_", &fake(ALNUM, 33, 503)].concat());
}

#[test]
fn sendgrid_and_twilio_keys() {
    let sg = ["S", "G.", &fake(B64URL, 22, 510), ".", &fake(B64URL, 43, 511)].concat();
    let out = redacted_once(&format!("SENDGRID_API_KEY='{sg}'"), &sg, "sendgrid_key");
    assert_eq!(out, "SENDGRID_API_KEY='[REDACTED:sendgrid_key]'");
    unchanged("see SG.short.value and SG.1 in the docs");

    let sk = ["S", "K", &fake(HEX, 32, 512)].concat();
    let out = redacted_once(&format!("api_key_sid: {sk}\n"), &sk, "twilio_key");
    assert_eq!(out, "api_key_sid: [REDACTED:twilio_key]\n");
    for text in [
        ["S", "K", &fake(HEX, 31, 513)].concat(),
        ["S", "K", &fake(HEX, 33, 514)].concat(),
        ["TAS", "K", &fake(HEX, 32, 515)].concat(),
        ["S", "K", &fake(HEX, 31, 516), "g"].concat(),
        ["S", "K", &fake(HEX, 32, 517).to_uppercase(), "_ID"].concat(),
    ] {
        unchanged(&text);
    }
}

#[test]
fn azure_sas_signatures_in_urls_and_connection_strings() {
    let sig = format!("{}%2F{}%3D", fake(ALNUM, 20, 520), fake(ALNUM, 22, 521));
    let url = format!(
        "https://acme.blob.core.windows.net/c/a.bin?sp=r&st=2024-01-01T00:00:00Z&se=2024-01-02T00:00:00Z&spr=https&sv=2022-11-02&sr=b&sig={sig}"
    );
    let out = redacted_once(&url, &sig, "azure_sas");
    assert!(out.ends_with("&sr=b&sig=[REDACTED:azure_sas]"), "{out}");
    let raw = format!(
        "{}+{}/{}=",
        fake(ALNUM, 20, 522),
        fake(ALNUM, 10, 523),
        fake(ALNUM, 11, 524)
    );
    let conn = format!(
        "BlobEndpoint=https://acme.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&srt=sco&sp=rl&sig={raw};"
    );
    let out = redacted_once(&conn, &raw, "azure_sas");
    assert!(out.ends_with("&sp=rl&sig=[REDACTED:azure_sas];"), "{out}");
    unchanged("verify(msg, sig=signature) and ?sig=abc&x=1 and sig=${SAS_SIG}");
}

#[test]
fn gcp_service_account_file_pretty_printed() {
    let id = fake(HEX, 40, 530);
    let body: Vec<String> = (0..3).map(|i| fake(B64, 64, 531 + i)).collect();
    let text = format!(
        "{{\n  \"type\": \"service_account\",\n  \"project_id\": \"acme-prod\",\n  \"private_key_id\": \"{id}\",\n  \"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{}\\n-----END PRIVATE KEY-----\\n\",\n  \"client_email\": \"ci@acme-prod.iam.gserviceaccount.com\"\n}}",
        body.join("\\n")
    );
    let (out, report) = FILTER.filter_text(&text);
    assert!(!out.contains(&id) && !out.contains(&body[1]), "{out}");
    assert_eq!(report.redactions.get("gcp_service_account_key"), Some(&1));
    assert_eq!(report.redactions.get("private_key"), Some(&1));
    assert_eq!(report.redaction_count(), 2, "{report:?}");
    assert!(out.contains("\"private_key_id\": \"[REDACTED:gcp_service_account_key]\""));
    assert!(out.contains("\"client_email\": \"ci@acme-prod.iam.gserviceaccount.com\""));
}
