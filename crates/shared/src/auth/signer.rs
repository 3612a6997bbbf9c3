//! Signing and verifying token JWTs with one pinned algorithm (HS256).

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation, decode, encode};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::Scope;

/// The JWT body. `jti` is the token row's id; the row is checked on every use.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TokenClaims {
    pub jti: Uuid,
    /// The team.
    pub sub: Uuid,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prj: Option<Uuid>,
    pub scp: Vec<Scope>,
    pub iat: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exp: Option<i64>,
    pub iss: String,
}

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("token is not a valid Cairn token: {0}")]
    Invalid(#[from] jsonwebtoken::errors::Error),
}

/// The server's signing key, at least 32 bytes.
#[derive(Clone)]
pub struct SigningKey(Vec<u8>);

impl SigningKey {
    pub const MIN_LEN: usize = 32;

    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<Self, String> {
        let bytes = bytes.into();
        if bytes.len() < Self::MIN_LEN {
            return Err(format!(
                "must be at least {} bytes, got {}",
                Self::MIN_LEN,
                bytes.len()
            ));
        }
        Ok(Self(bytes))
    }
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SigningKey(…)")
    }
}

const ISSUER: &str = "cairn";

#[derive(Clone)]
pub struct TokenSigner {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
}

impl TokenSigner {
    pub fn new(key: &SigningKey) -> Self {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.algorithms = vec![Algorithm::HS256];
        validation.set_issuer(&[ISSUER]);
        // Expiry is the row's to decide (`expires_at`, checked on every use, cached or not),
        // so an expired token gets a precise `token_expired` rather than a signature error.
        validation.required_spec_claims = ["iss".to_string()].into_iter().collect();
        validation.validate_exp = false;
        Self {
            encoding: EncodingKey::from_secret(&key.0),
            decoding: DecodingKey::from_secret(&key.0),
            validation,
        }
    }

    pub fn sign(&self, claims: &TokenClaims) -> String {
        encode(&Header::new(Algorithm::HS256), claims, &self.encoding).expect("HS256 signing cannot fail")
    }

    pub fn verify(&self, token: &str) -> Result<TokenClaims, TokenError> {
        Ok(decode::<TokenClaims>(token, &self.decoding, &self.validation)?.claims)
    }

    pub fn claims(
        id: Uuid,
        team_id: Uuid,
        project_id: Option<Uuid>,
        scopes: Vec<Scope>,
        expires_at: Option<i64>,
    ) -> TokenClaims {
        TokenClaims {
            jti: id,
            sub: team_id,
            prj: project_id,
            scp: scopes,
            iat: chrono::Utc::now().timestamp(),
            exp: expires_at,
            iss: ISSUER.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signer(key: &str) -> TokenSigner {
        TokenSigner::new(&SigningKey::new(key.as_bytes().to_vec()).unwrap())
    }

    #[test]
    fn round_trips_and_rejects_other_keys_and_algorithms() {
        let s = signer("0123456789abcdef0123456789abcdef");
        let claims = TokenSigner::claims(Uuid::now_v7(), Uuid::now_v7(), None, vec![Scope::Read], None);
        let jwt = s.sign(&claims);
        assert_eq!(s.verify(&jwt).unwrap(), claims);
        assert!(
            signer("another-key-another-key-another-key")
                .verify(&jwt)
                .is_err()
        );

        // An unsigned ("alg": "none") token with the same body is refused.
        let body = jwt.split('.').nth(1).unwrap();
        let none = format!("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.{body}.");
        assert!(s.verify(&none).is_err());
    }

    #[test]
    fn expiry_travels_in_the_claims_for_the_row_check() {
        let s = signer("0123456789abcdef0123456789abcdef");
        let past = chrono::Utc::now().timestamp() - 3600;
        let claims = TokenSigner::claims(
            Uuid::now_v7(),
            Uuid::now_v7(),
            None,
            vec![Scope::Read],
            Some(past),
        );
        // Expiry is enforced against the token's row (services/api auth), not here.
        assert_eq!(s.verify(&s.sign(&claims)).unwrap().exp, Some(past));
    }

    #[test]
    fn short_keys_are_rejected() {
        assert!(SigningKey::new(b"short".to_vec()).is_err());
    }
}
