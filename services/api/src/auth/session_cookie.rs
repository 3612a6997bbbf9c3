//! The dashboard's session cookie `cairn_session`: a short-lived HS256 value
//! naming the token it was opened with (never the token itself), and the CSRF
//! value derived from it.
//!
//! Its key is derived from the server's signing key (the HS256 signature of a
//! fixed, session-only claim set), so a session value can never pass as an
//! API token and no second secret has to be configured.

use axum::http::{HeaderMap, header};
use cairn_shared::auth::{TokenClaims, TokenSigner};
use hmac::{Hmac, Mac};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use uuid::Uuid;

pub const COOKIE_NAME: &str = "cairn_session";
pub const CSRF_HEADER: &str = "x-cairn-csrf";
const AUDIENCE: &str = "cairn-dashboard";

/// The signed body of the cookie.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SessionClaims {
    /// The token the session was opened with; its row is re-checked on use.
    pub tid: Uuid,
    /// This session's random id: the CSRF value is derived from it.
    pub sid: Uuid,
    pub iat: i64,
    pub exp: i64,
    pub aud: String,
}

#[derive(Serialize, Deserialize)]
struct Sealed<T> {
    #[serde(flatten)]
    body: T,
    aud: String,
    exp: i64,
}

/// The keys of one server: session signing and CSRF derivation.
pub struct SessionKeys {
    secret: Vec<u8>,
}

impl SessionKeys {
    pub fn derive(signer: &TokenSigner) -> Self {
        let fixed = TokenClaims {
            jti: Uuid::nil(),
            sub: Uuid::nil(),
            prj: None,
            scp: vec![],
            iat: 0,
            exp: None,
            iss: "cairn-dashboard-session-key".into(),
        };
        let signed = signer.sign(&fixed);
        let signature = signed.rsplit('.').next().unwrap_or_default();
        Self {
            secret: format!("session:{signature}").into_bytes(),
        }
    }

    /// A new session for `token_id`, ending at `expires_at` (epoch seconds).
    pub fn issue(&self, token_id: Uuid, expires_at: i64) -> (String, SessionClaims) {
        let claims = SessionClaims {
            tid: token_id,
            sid: Uuid::new_v4(),
            iat: chrono::Utc::now().timestamp(),
            exp: expires_at,
            aud: AUDIENCE.into(),
        };
        let value = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &EncodingKey::from_secret(&self.secret),
        )
        .expect("HS256 signing cannot fail");
        (value, claims)
    }

    /// The claims of a cookie value this server issued and that has not expired.
    pub fn verify(&self, value: &str) -> Option<SessionClaims> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.algorithms = vec![Algorithm::HS256];
        validation.set_audience(&[AUDIENCE]);
        validation.leeway = 0;
        jsonwebtoken::decode::<SessionClaims>(value, &DecodingKey::from_secret(&self.secret), &validation)
            .ok()
            .map(|d| d.claims)
    }

    /// `body` signed for `audience`, valid for `seconds` (a short-lived
    /// value the browser carries between two requests, as a cookie).
    pub fn seal<T: Serialize>(&self, audience: &str, seconds: i64, body: T) -> String {
        let sealed = Sealed {
            body,
            aud: audience.into(),
            exp: chrono::Utc::now().timestamp() + seconds,
        };
        jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &sealed,
            &EncodingKey::from_secret(&self.secret),
        )
        .expect("HS256 signing cannot fail")
    }

    /// What [`SessionKeys::seal`] sealed for `audience`, unexpired.
    pub fn open<T: serde::de::DeserializeOwned>(&self, audience: &str, value: &str) -> Option<T> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.algorithms = vec![Algorithm::HS256];
        validation.set_audience(&[audience]);
        validation.leeway = 0;
        jsonwebtoken::decode::<Sealed<T>>(value, &DecodingKey::from_secret(&self.secret), &validation)
            .ok()
            .map(|d| d.claims.body)
    }

    fn csrf_mac(&self, claims: &SessionClaims) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.secret).expect("HMAC takes any key length");
        mac.update(b"csrf:");
        mac.update(claims.sid.as_bytes());
        mac
    }

    /// The value the `X-Cairn-Csrf` header must carry for this session.
    pub fn csrf(&self, claims: &SessionClaims) -> String {
        hex::encode(self.csrf_mac(claims).finalize().into_bytes())
    }

    /// Constant-time check of a presented CSRF value.
    pub fn csrf_matches(&self, claims: &SessionClaims, presented: &str) -> bool {
        hex::decode(presented.trim()).is_ok_and(|bytes| self.csrf_mac(claims).verify_slice(&bytes).is_ok())
    }
}

/// The `cairn_session` cookie's value, if the request carries one.
pub fn from_headers(headers: &HeaderMap) -> Option<&str> {
    cookie(headers, COOKIE_NAME)
}

/// The value of cookie `name`, if the request carries one.
pub fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, value)| value.trim_matches('"'))
        .filter(|v| !v.is_empty())
}

/// `Set-Cookie` for a new session lasting `max_age` seconds.
pub fn set_cookie(value: &str, max_age: i64, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{COOKIE_NAME}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}")
}

/// `Set-Cookie` that ends the session in the browser.
pub fn clear_cookie(secure: bool) -> String {
    set_cookie("", 0, secure)
}

#[cfg(test)]
mod tests {
    use cairn_shared::auth::SigningKey;

    use super::*;

    fn keys(key: &str) -> SessionKeys {
        SessionKeys::derive(&TokenSigner::new(
            &SigningKey::new(key.as_bytes().to_vec()).unwrap(),
        ))
    }

    #[test]
    fn a_session_verifies_only_under_its_own_key_and_before_expiry() {
        let a = keys("0123456789abcdef0123456789abcdef");
        let b = keys("another-key-another-key-another-key");
        let id = Uuid::new_v4();
        let (value, claims) = a.issue(id, chrono::Utc::now().timestamp() + 60);
        assert_eq!(a.verify(&value).unwrap().tid, id);
        assert!(b.verify(&value).is_none());
        let (old, _) = a.issue(id, chrono::Utc::now().timestamp() - 1);
        assert!(a.verify(&old).is_none());
        let csrf = a.csrf(&claims);
        assert!(a.csrf_matches(&claims, &csrf));
        assert!(!b.csrf_matches(&claims, &csrf));
        assert!(!a.csrf_matches(&claims, "00"));
        assert!(!a.csrf_matches(&claims, "not hex"));
    }

    #[test]
    fn a_session_value_is_not_an_api_token() {
        let key = SigningKey::new(b"0123456789abcdef0123456789abcdef".to_vec()).unwrap();
        let signer = TokenSigner::new(&key);
        let (value, _) =
            SessionKeys::derive(&signer).issue(Uuid::new_v4(), chrono::Utc::now().timestamp() + 60);
        assert!(signer.verify(&value).is_err());
    }

    #[test]
    fn the_cookie_is_read_among_others() {
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, "a=1; cairn_session=xyz; b=2".parse().unwrap());
        assert_eq!(from_headers(&headers), Some("xyz"));
        headers.insert(header::COOKIE, "cairn_session=".parse().unwrap());
        assert_eq!(from_headers(&headers), None);
    }
}
