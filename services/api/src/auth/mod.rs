//! Authentication and authorisation: the `Auth` extractor turns a bearer token
//! into the caller's team, optional project and scopes; handlers then ask for
//! a scope and resolve the project they act on.

mod cache;
pub mod cli_login;
mod extractor;
pub mod oidc;
mod project;
pub mod session_cookie;

pub use cache::TokenCache;
pub use extractor::{Auth, authenticate};
pub use project::{MatchedBy, ProjectRef};
