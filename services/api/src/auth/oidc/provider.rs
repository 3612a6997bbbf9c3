//! The identity provider as a relying party talks to it (the `openidconnect`
//! crate): discovery (cached for an hour, so a rotated signing key is
//! picked up), the authorization URL with PKCE, state and nonce, and the
//! code exchange with the ID token's verification (signature from the
//! provider's JWKS, issuer, audience, expiry, nonce).

use std::time::{Duration, Instant};

use openidconnect::{
    AuthorizationCode, ClientId, ClientSecret, CsrfToken, IssuerUrl, Nonce, PkceCodeChallenge,
    PkceCodeVerifier, RedirectUrl, Scope, TokenResponse,
    core::{CoreAuthenticationFlow, CoreClient, CoreProviderMetadata},
};
use tokio::sync::Mutex;

use super::config::{Claims, OidcConfig};
use crate::error::ApiError;
use cairn_shared::tenancy::members::Identity;

const DISCOVERY_TTL: Duration = Duration::from_secs(3600);

pub struct Provider {
    pub config: OidcConfig,
    http: openidconnect::reqwest::Client,
    metadata: Mutex<Option<(Instant, CoreProviderMetadata)>>,
}

/// What the browser carries from the authorization request to the callback.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Pending {
    pub state: String,
    pub nonce: String,
    pub verifier: String,
    pub redirect_uri: String,
}

fn provider_error(what: &str, e: impl std::fmt::Display) -> ApiError {
    tracing::warn!(error = %e, "single sign-on: {what}");
    ApiError::new(
        axum::http::StatusCode::BAD_GATEWAY,
        "sso_provider_failed",
        format!("the identity provider could not be reached or answered wrongly ({what})"),
    )
}

impl Provider {
    pub fn new(config: OidcConfig) -> Self {
        let http = openidconnect::reqwest::ClientBuilder::new()
            // Following redirects would let a provider's answer point us anywhere (SSRF).
            .redirect(openidconnect::reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(10))
            .build()
            .expect("an HTTP client with rustls builds");
        Self {
            config,
            http,
            metadata: Mutex::new(None),
        }
    }

    async fn metadata(&self) -> Result<CoreProviderMetadata, ApiError> {
        let mut cached = self.metadata.lock().await;
        if let Some((at, metadata)) = cached.as_ref()
            && at.elapsed() < DISCOVERY_TTL
        {
            return Ok(metadata.clone());
        }
        let issuer =
            IssuerUrl::new(self.config.issuer.clone()).map_err(|e| provider_error("issuer URL", e))?;
        let metadata = CoreProviderMetadata::discover_async(issuer, &self.http)
            .await
            .map_err(|e| provider_error("discovery", e))?;
        *cached = Some((Instant::now(), metadata.clone()));
        Ok(metadata)
    }

    async fn client(
        &self,
        redirect_uri: &str,
    ) -> Result<
        CoreClient<
            openidconnect::EndpointSet,
            openidconnect::EndpointNotSet,
            openidconnect::EndpointNotSet,
            openidconnect::EndpointNotSet,
            openidconnect::EndpointMaybeSet,
            openidconnect::EndpointMaybeSet,
        >,
        ApiError,
    > {
        let redirect =
            RedirectUrl::new(redirect_uri.to_string()).map_err(|e| provider_error("redirect URL", e))?;
        Ok(CoreClient::from_provider_metadata(
            self.metadata().await?,
            ClientId::new(self.config.client_id.clone()),
            self.config.client_secret.clone().map(ClientSecret::new),
        )
        .set_redirect_uri(redirect))
    }

    /// The URL to send the browser to, and what the callback will need.
    pub async fn begin(&self, redirect_uri: &str) -> Result<(String, Pending), ApiError> {
        let client = self.client(redirect_uri).await?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client.authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        );
        for scope in &self.config.scopes {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = request.set_pkce_challenge(challenge).url();
        Ok((
            url.to_string(),
            Pending {
                state: state.secret().clone(),
                nonce: nonce.secret().clone(),
                verifier: verifier.secret().clone(),
                redirect_uri: redirect_uri.to_string(),
            },
        ))
    }

    /// Exchanges the code and verifies the ID token: who signed in.
    pub async fn finish(&self, code: String, pending: &Pending) -> Result<(Identity, Claims), ApiError> {
        let client = self.client(&pending.redirect_uri).await?;
        let response = client
            .exchange_code(AuthorizationCode::new(code))
            .map_err(|e| provider_error("token endpoint", e))?
            .set_pkce_verifier(PkceCodeVerifier::new(pending.verifier.clone()))
            .request_async(&self.http)
            .await
            .map_err(|e| provider_error("code exchange", e))?;
        let id_token = response
            .id_token()
            .ok_or_else(|| provider_error("no ID token", "the token response held none"))?;
        let verifier = client.id_token_verifier();
        let claims = id_token
            .claims(&verifier, &Nonce::new(pending.nonce.clone()))
            .map_err(|e| {
                tracing::warn!(error = %e, "single sign-on: ID token refused");
                ApiError::forbidden(
                    "sso_token_invalid",
                    "the identity provider's ID token did not verify",
                )
            })?;
        let groups = extra_claim(&id_token.to_string(), &self.config.groups_claim);
        let email = claims.email().map(|e| e.as_str().to_string());
        let identity = Identity {
            issuer: claims.issuer().as_str().to_string(),
            subject: claims.subject().as_str().to_string(),
            email: email.clone(),
            name: claims
                .name()
                .and_then(|n| n.get(None))
                .map(|n| n.as_str().to_string()),
        };
        let vouched = Claims {
            email,
            email_verified: claims.email_verified(),
            groups,
        };
        Ok((identity, vouched))
    }
}

/// A list claim (`groups`) of a token whose signature was verified: read
/// from its payload, as the standard claims do not hold it. A single string
/// counts as a one-item list.
fn extra_claim(jwt: &str, name: &str) -> Vec<String> {
    use base64::Engine as _;
    let Some(payload) = jwt.split('.').nth(1) else {
        return vec![];
    };
    let Ok(bytes) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim_end_matches('='))
    else {
        return vec![];
    };
    match serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .and_then(|v| v.get(name).cloned())
    {
        Some(serde_json::Value::Array(items)) => items
            .into_iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        Some(serde_json::Value::String(one)) => vec![one],
        _ => vec![],
    }
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;

    use super::*;

    #[test]
    fn groups_are_read_from_the_payload_as_a_list_or_one_string() {
        let token = |payload: serde_json::Value| {
            let body = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(payload.to_string());
            format!("e30.{body}.sig")
        };
        assert_eq!(
            extra_claim(&token(serde_json::json!({"groups": ["a", "b", 3]})), "groups"),
            ["a", "b"]
        );
        assert_eq!(
            extra_claim(&token(serde_json::json!({"roles": "x"})), "roles"),
            ["x"]
        );
        assert!(extra_claim(&token(serde_json::json!({})), "groups").is_empty());
        assert!(extra_claim("not a jwt", "groups").is_empty());
    }
}
