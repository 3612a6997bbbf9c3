//! A real OpenID Connect provider for sign-in tests: `oidc/provider.mjs`
//! (npm `oauth2-mock-server`, installed by `scripts/tools/oidc-provider.sh`)
//! in a Node process of its own, killed when dropped.

use std::{
    io::{BufRead, BufReader},
    path::PathBuf,
    process::{Child, Command, Stdio},
};

use serde_json::Value;

pub struct OidcProvider {
    pub issuer: String,
    child: Child,
}

impl Drop for OidcProvider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The installed `oauth2-mock-server` module; fails (never skips) when missing.
fn module() -> PathBuf {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let module =
        PathBuf::from(home).join(".cache/cairn-tools/oidc/node_modules/oauth2-mock-server/dist/index.mjs");
    assert!(
        module.is_file(),
        "no OpenID Connect provider at {} (run scripts/tools/oidc-provider.sh)",
        module.display()
    );
    module
}

impl OidcProvider {
    /// Starts the provider on a free port and waits for its issuer URL.
    pub fn start() -> Self {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("oidc/provider.mjs");
        let mut child = Command::new("node")
            .arg(&script)
            .env("CAIRN_OIDC_MOCK_MODULE", module())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("node runs (apt install nodejs)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let started: Value = serde_json::from_str(line.trim())
            .unwrap_or_else(|_| panic!("the OIDC provider did not start: {line:?}"));
        Self {
            issuer: started["issuer"].as_str().unwrap().to_string(),
            child,
        }
    }

    /// Who the next sign-in is: `sub`, `email`, `email_verified`, `name`, `groups`.
    pub async fn sign_in_as(&self, identity: Value) {
        let res = reqwest::Client::new()
            .post(format!("{}/_identity", self.issuer))
            .json(&identity)
            .send()
            .await
            .unwrap();
        assert!(res.status().is_success(), "{}", res.status());
    }

    /// The server settings that point single sign-on at this provider.
    pub fn settings(&self, extra: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
        let mut settings = vec![
            ("CAIRN_OIDC_ISSUER", self.issuer.clone()),
            ("CAIRN_OIDC_CLIENT_ID", "cairn-test".to_string()),
            ("CAIRN_OIDC_CLIENT_SECRET", "cairn-test-secret".to_string()),
        ];
        settings.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
        settings
    }
}

fn session_cookie(res: &reqwest::Response) -> Option<String> {
    res.headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap().to_string())
        .find(|pair| pair.starts_with("cairn_oidc=") || pair.starts_with("cairn_session="))
        .filter(|pair| !pair.ends_with('='))
}

impl OidcProvider {
    /// Signs in to `base`'s dashboard through this provider, as the last
    /// identity set, the way a browser does (login, provider, callback);
    /// the session's cookie pair and its CSRF value.
    pub async fn dashboard_session(&self, base: &str) -> (String, String) {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let res = http.get(format!("{base}/auth/oidc/login")).send().await.unwrap();
        let pending = session_cookie(&res).expect("a pending sign-in");
        let to_provider = res.headers()["location"].to_str().unwrap().to_string();
        let res = http.get(&to_provider).send().await.unwrap();
        let back = res.headers()["location"].to_str().unwrap().to_string();
        let res = http.get(&back).header("cookie", pending).send().await.unwrap();
        assert_eq!(res.status(), 303, "signed in");
        let cookie = session_cookie(&res).expect("a session cookie");
        let session: Value = http
            .get(format!("{base}/dashboard/session"))
            .header("cookie", &cookie)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        (cookie, session["csrf"].as_str().unwrap().to_string())
    }
}
