//! The client's settings: `~/.config/cairn/config.toml` (mode 0600), overridden
//! by the environment (`CAIRN_URL`, `CAIRN_TOKEN`, `CAIRN_PROJECT`, …). Read by
//! `cairn hook`, `cairn spool`, `cairn install`, `cairn doctor` and `cairn mcp`.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use serde::{Deserialize, Serialize};

pub const DEFAULT_URL: &str = "http://127.0.0.1:8080";
pub const DEFAULT_TIMEOUT_MS: u64 = 2_000;
pub const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 300;
/// Default bound on one spool file, in bytes.
pub const DEFAULT_SPOOL_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// What the config file holds; every field optional.
#[derive(Debug, Default, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct FileConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect_timeout_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spool_dir: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spool_max_bytes: Option<u64>,
}

/// The settings in effect: file, then environment on top.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub url: String,
    pub token: Option<String>,
    pub project: Option<String>,
    /// Whole budget of one hook call, connect included.
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub spool_dir: PathBuf,
    pub spool_max_bytes: u64,
    /// Where the settings came from, for `cairn doctor`.
    pub file: Option<PathBuf>,
}

/// A source of environment variables (the process's, or a map in tests).
pub trait Env {
    fn var(&self, name: &str) -> Option<String>;
}

pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    }
}

impl<S: std::hash::BuildHasher> Env for std::collections::HashMap<&str, String, S> {
    fn var(&self, name: &str) -> Option<String> {
        self.get(name).cloned().filter(|v| !v.is_empty())
    }
}

/// `$CAIRN_CONFIG`, else `$XDG_CONFIG_HOME/cairn/config.toml`, else `~/.config/cairn/config.toml`.
pub fn config_path(env: &dyn Env) -> Option<PathBuf> {
    if let Some(p) = env.var("CAIRN_CONFIG") {
        return Some(PathBuf::from(p));
    }
    let base = env
        .var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| env.var("HOME").map(|h| Path::new(&h).join(".config")))?;
    Some(base.join("cairn").join("config.toml"))
}

/// `$XDG_STATE_HOME/cairn/spool`, else `~/.local/state/cairn/spool`.
fn default_spool_dir(env: &dyn Env) -> PathBuf {
    env.var("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| {
            env.var("HOME")
                .map(|h| Path::new(&h).join(".local").join("state"))
        })
        .unwrap_or_else(std::env::temp_dir)
        .join("cairn")
        .join("spool")
}

/// Reads the config file; a missing file is an empty config.
pub fn read_file(path: &Path) -> anyhow::Result<FileConfig> {
    match std::fs::read_to_string(path) {
        Ok(text) => toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(FileConfig::default()),
        Err(e) => Err(anyhow::anyhow!("{}: {e}", path.display())),
    }
}

/// Writes the config file with mode 0600 (its directory 0700), atomically.
pub fn write_file(path: &Path, config: &FileConfig) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let text = toml::to_string_pretty(config)?;
    let tmp = dir.join(format!(".config.toml.{}", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

impl ClientConfig {
    /// File first, then the environment on top. A config file that cannot be
    /// read is an error; a missing one is not.
    pub fn load(env: &dyn Env) -> anyhow::Result<Self> {
        let path = config_path(env);
        let file = match &path {
            Some(p) => read_file(p)?,
            None => FileConfig::default(),
        };
        let present = path.filter(|p| p.exists());
        Ok(Self::merge(file, env, present))
    }

    fn merge(file: FileConfig, env: &dyn Env, path: Option<PathBuf>) -> Self {
        let ms = |name: &str, file: Option<u64>, default: u64| {
            env.var(name)
                .and_then(|v| v.parse::<u64>().ok())
                .or(file)
                .unwrap_or(default)
        };
        Self {
            url: env
                .var("CAIRN_URL")
                .or(file.url)
                .unwrap_or_else(|| DEFAULT_URL.into())
                .trim_end_matches('/')
                .to_string(),
            token: env.var("CAIRN_TOKEN").or(file.token),
            project: env.var("CAIRN_PROJECT").or(file.project),
            timeout: Duration::from_millis(ms("CAIRN_HOOK_TIMEOUT_MS", file.timeout_ms, DEFAULT_TIMEOUT_MS)),
            connect_timeout: Duration::from_millis(ms(
                "CAIRN_HOOK_CONNECT_TIMEOUT_MS",
                file.connect_timeout_ms,
                DEFAULT_CONNECT_TIMEOUT_MS,
            )),
            spool_dir: env
                .var("CAIRN_SPOOL_DIR")
                .map(PathBuf::from)
                .or(file.spool_dir)
                .unwrap_or_else(|| default_spool_dir(env)),
            spool_max_bytes: ms(
                "CAIRN_SPOOL_MAX_BYTES",
                file.spool_max_bytes,
                DEFAULT_SPOOL_MAX_BYTES,
            ),
            file: path,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn environment_overrides_the_file() {
        let file = FileConfig {
            url: Some("http://file:1/".into()),
            token: Some("file-token".into()),
            timeout_ms: Some(900),
            ..Default::default()
        };
        let env: HashMap<&str, String> = [
            ("CAIRN_TOKEN", "env-token".to_string()),
            ("HOME", "/home/u".to_string()),
        ]
        .into();
        let c = ClientConfig::merge(file, &env, None);
        assert_eq!(c.url, "http://file:1");
        assert_eq!(c.token.as_deref(), Some("env-token"));
        assert_eq!(c.timeout, Duration::from_millis(900));
        assert_eq!(
            c.connect_timeout,
            Duration::from_millis(DEFAULT_CONNECT_TIMEOUT_MS)
        );
        assert_eq!(c.spool_dir, PathBuf::from("/home/u/.local/state/cairn/spool"));
    }

    #[test]
    fn written_file_is_private_and_reads_back() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("cairn-config-test-{}", std::process::id()));
        let path = dir.join("nested").join("config.toml");
        let config = FileConfig {
            url: Some("http://x:8080".into()),
            token: Some("secret".into()),
            ..Default::default()
        };
        write_file(&path, &config).unwrap();
        assert_eq!(read_file(&path).unwrap(), config);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
