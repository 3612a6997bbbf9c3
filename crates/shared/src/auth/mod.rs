//! API tokens: scopes, the signed JWT format, and how secrets are hashed for
//! storage. Each JWT's id is a row in `api_tokens`; the row decides whether the
//! token is still valid (revocation, expiry), the signature that it is ours.

mod scope;
mod secret_hash;
mod signer;

pub use scope::{Scope, ScopeParseError};
pub use secret_hash::{SecretHash, verify_secret};
pub use signer::{SigningKey, TokenClaims, TokenError, TokenSigner};
