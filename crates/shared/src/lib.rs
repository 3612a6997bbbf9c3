//! Code shared by Cairn's processes: configuration, database access and
//! migrations, the token format, job types and their state machine, and privacy filters.

pub mod auth;
pub mod bootstrap;
pub mod budget;
pub mod config;
pub mod db;
pub mod jobs;
pub mod paths;
pub use cairn_privacy as privacy;
pub mod tenancy;
pub mod time;
pub mod tokens;
