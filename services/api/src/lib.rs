//! `cairn-api`: the stateless HTTP service. Authenticates tokens, writes agent
//! events with their generation jobs in one transaction, and serves memory,
//! jobs and administration.

pub mod app;
pub mod ask;
pub mod auth;
pub mod config;
pub mod dashboard;
pub mod docs;
pub mod dto;
pub mod error;
pub mod extract;
pub mod live;
pub mod mcp;
pub mod middleware;
pub mod parse_errors;
pub mod request_id;
pub mod routes;
pub mod server;
pub mod state;

// The engine's modules, under the names the handlers use.
pub use cairn_core::{context, ingest, search, store};
