//! Configuration read from `CAIRN_*` environment variables, with one clear
//! error per missing or invalid variable. Every variable read through these
//! helpers may instead be given as a file (`<NAME>_FILE`, see [`secret_files`]).

use std::{fmt::Display, net::SocketAddr, str::FromStr, time::Duration};

pub mod secret_files;

pub use secret_files::{is_set, var};

/// A variable that is missing or cannot be parsed.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{name} is required: {hint}")]
    Missing { name: &'static str, hint: &'static str },
    #[error("{name} is invalid ({value:?}): {reason}")]
    Invalid {
        name: &'static str,
        value: String,
        reason: String,
    },
    #[error("{name} and {file_name} are both set: keep one")]
    Conflict { name: &'static str, file_name: String },
    #[error("{file_name} names {path}, which cannot be read: {reason}")]
    UnreadableFile {
        file_name: String,
        path: String,
        reason: String,
    },
}

/// Source of variables; the process environment in production, a map in tests.
pub trait Env {
    /// The variable exactly as set; read settings with [`var`] (or
    /// `required`, `parsed`), which also honour `<NAME>_FILE`.
    fn get(&self, name: &str) -> Option<String>;
}

/// The process environment.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn get(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.trim().is_empty())
    }
}

impl Env for std::collections::HashMap<String, String> {
    fn get(&self, name: &str) -> Option<String> {
        self.get(name).cloned()
    }
}

impl<const N: usize> Env for [(&str, &str); N] {
    fn get(&self, name: &str) -> Option<String> {
        self.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }
}

pub fn required(env: &dyn Env, name: &'static str, hint: &'static str) -> Result<String, ConfigError> {
    var(env, name)?.ok_or(ConfigError::Missing { name, hint })
}

pub fn parsed<T>(env: &dyn Env, name: &'static str, default: T) -> Result<T, ConfigError>
where
    T: FromStr,
    T::Err: Display,
{
    match var(env, name)? {
        None => Ok(default),
        Some(value) => value.trim().parse().map_err(|e: T::Err| ConfigError::Invalid {
            name,
            value,
            reason: e.to_string(),
        }),
    }
}

pub fn millis(env: &dyn Env, name: &'static str, default_ms: u64) -> Result<Duration, ConfigError> {
    parsed(env, name, default_ms).map(Duration::from_millis)
}

/// Settings every process needs: where Postgres and Redis are.
#[derive(Clone, Debug)]
pub struct StoreConfig {
    pub database_url: String,
    pub redis_url: String,
    pub database_max_connections: u32,
    pub timeouts: DbTimeouts,
}

/// Bounds on every wait for Postgres (see README, "Bounded waits").
#[derive(Clone, Debug)]
pub struct DbTimeouts {
    /// Waiting for a pooled connection (`CAIRN_DB_ACQUIRE_TIMEOUT_MS`).
    pub acquire: Duration,
    /// Postgres cancels a statement running longer (`CAIRN_DB_STATEMENT_TIMEOUT_MS`).
    pub statement: Duration,
    /// Postgres gives up waiting for a lock after this (`CAIRN_DB_LOCK_TIMEOUT_MS`).
    pub lock: Duration,
    /// Postgres ends a session left idle inside a transaction
    /// (`CAIRN_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS`).
    pub idle_in_transaction: Duration,
}

impl StoreConfig {
    pub fn from_env(env: &dyn Env) -> Result<Self, ConfigError> {
        let database_url = required(
            env,
            "CAIRN_DATABASE_URL",
            "a Postgres URL such as postgres://cairn@127.0.0.1:5432/cairn",
        )?;
        if !database_url.starts_with("postgres://") && !database_url.starts_with("postgresql://") {
            return Err(ConfigError::Invalid {
                name: "CAIRN_DATABASE_URL",
                value: scheme_only(&database_url),
                reason: "must start with postgres:// or postgresql://".into(),
            });
        }
        let redis_url = var(env, "CAIRN_REDIS_URL")?.unwrap_or_else(|| "redis://127.0.0.1:6379".into());
        if !redis_url.starts_with("redis://") && !redis_url.starts_with("rediss://") {
            return Err(ConfigError::Invalid {
                name: "CAIRN_REDIS_URL",
                value: scheme_only(&redis_url),
                reason: "must start with redis:// or rediss://".into(),
            });
        }
        Ok(Self {
            database_url,
            redis_url,
            database_max_connections: parsed(env, "CAIRN_DATABASE_MAX_CONNECTIONS", 32)?,
            timeouts: DbTimeouts {
                acquire: millis(env, "CAIRN_DB_ACQUIRE_TIMEOUT_MS", 3_000)?,
                statement: millis(env, "CAIRN_DB_STATEMENT_TIMEOUT_MS", 15_000)?,
                lock: millis(env, "CAIRN_DB_LOCK_TIMEOUT_MS", 3_000)?,
                idle_in_transaction: millis(env, "CAIRN_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS", 60_000)?,
            },
        })
    }
}

/// A URL's scheme alone, for errors: the rest may hold a password.
fn scheme_only(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, _)) => format!("{scheme}://…"),
        None => "…".into(),
    }
}

/// The listen address, validated.
pub fn listen_addr(env: &dyn Env, name: &'static str, default: &str) -> Result<SocketAddr, ConfigError> {
    let value = var(env, name)?.unwrap_or_else(|| default.to_string());
    value
        .parse()
        .map_err(|e: std::net::AddrParseError| ConfigError::Invalid {
            name,
            value,
            reason: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_database_url_names_the_variable() {
        let err = StoreConfig::from_env(&[("CAIRN_REDIS_URL", "redis://x")]).unwrap_err();
        assert!(
            err.to_string().contains("CAIRN_DATABASE_URL is required"),
            "{err}"
        );
    }

    #[test]
    fn invalid_values_are_reported_with_the_value() {
        let err = StoreConfig::from_env(&[("CAIRN_DATABASE_URL", "mysql://u:hunter2@x")]).unwrap_err();
        assert!(err.to_string().contains("mysql://…"), "{err}");
        assert!(
            !err.to_string().contains("hunter2"),
            "a URL's password is never shown: {err}"
        );
        let err = StoreConfig::from_env(&[
            ("CAIRN_DATABASE_URL", "postgres://x"),
            ("CAIRN_DATABASE_MAX_CONNECTIONS", "many"),
        ])
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("CAIRN_DATABASE_MAX_CONNECTIONS is invalid"),
            "{err}"
        );
    }

    #[test]
    fn defaults_apply() {
        let cfg = StoreConfig::from_env(&[("CAIRN_DATABASE_URL", "postgres://x/y")]).unwrap();
        assert_eq!(cfg.redis_url, "redis://127.0.0.1:6379");
        assert_eq!(cfg.database_max_connections, 32);
        assert!(listen_addr(&[("A", "nope")], "A", "0.0.0.0:1").is_err());
    }
}
