//! `<NAME>_FILE`: any setting read through [`var`] (and so `required`,
//! `parsed`, `millis`, `listen_addr`) may be given as the path of a file
//! holding its value, as Docker and Kubernetes secrets are mounted. The
//! contents are trimmed of trailing newlines; setting both `NAME` and
//! `NAME_FILE` is an error naming both; a file that cannot be read is an
//! error naming the variable and the path, never the contents.

use std::io::Read;

use super::{ConfigError, Env};

/// Larger files are refused: a secret is a line, and a path such as
/// `/dev/zero` must not be read forever.
pub const MAX_SECRET_FILE_BYTES: u64 = 64 * 1024;

/// The variable that names a file holding `name`'s value.
pub fn file_variable(name: &str) -> String {
    format!("{name}_FILE")
}

/// `name`'s value, from `name` itself or from the file `name_FILE` names;
/// `None` when neither is set.
pub fn var(env: &dyn Env, name: &'static str) -> Result<Option<String>, ConfigError> {
    let file_name = file_variable(name);
    match (env.get(name), env.get(&file_name)) {
        (None, None) => Ok(None),
        (Some(value), None) => Ok(Some(value)),
        (Some(_), Some(_)) => Err(ConfigError::Conflict { name, file_name }),
        (None, Some(path)) => read_secret_file(&file_name, &path).map(Some),
    }
}

/// Whether `name` or `name_FILE` is set (without reading the file).
pub fn is_set(env: &dyn Env, name: &str) -> bool {
    env.get(name).is_some() || env.get(&file_variable(name)).is_some()
}

fn read_secret_file(file_name: &str, path: &str) -> Result<String, ConfigError> {
    let unreadable = |reason: String| ConfigError::UnreadableFile {
        file_name: file_name.to_string(),
        path: path.to_string(),
        reason,
    };
    let file = std::fs::File::open(path).map_err(|e| unreadable(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(MAX_SECRET_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| unreadable(e.to_string()))?;
    if bytes.len() as u64 > MAX_SECRET_FILE_BYTES {
        return Err(unreadable(format!("larger than {MAX_SECRET_FILE_BYTES} bytes")));
    }
    let text = String::from_utf8(bytes).map_err(|_| unreadable("not UTF-8 text".into()))?;
    let value = text.trim_end_matches(['\n', '\r']);
    if value.trim().is_empty() {
        return Err(unreadable("the file is empty".into()));
    }
    Ok(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_itself_is_used_when_no_file_is_named() {
        let env = [("CAIRN_X", "direct")];
        assert_eq!(var(&env, "CAIRN_X").unwrap().as_deref(), Some("direct"));
        assert_eq!(var(&env, "CAIRN_Y").unwrap(), None);
        assert!(is_set(&env, "CAIRN_X"));
        assert!(!is_set(&env, "CAIRN_Y"));
        assert!(is_set(&[("CAIRN_Y_FILE", "/nowhere")], "CAIRN_Y"));
    }

    #[test]
    fn both_set_is_an_error_naming_both() {
        let env = [("CAIRN_X", "a"), ("CAIRN_X_FILE", "/run/secrets/x")];
        let err = var(&env, "CAIRN_X").unwrap_err().to_string();
        assert!(err.contains("CAIRN_X and CAIRN_X_FILE are both set"), "{err}");
    }

    #[test]
    fn a_missing_file_names_the_variable_and_the_path() {
        let env = [("CAIRN_X_FILE", "/definitely/not/here")];
        let err = var(&env, "CAIRN_X").unwrap_err().to_string();
        assert!(err.contains("CAIRN_X_FILE"), "{err}");
        assert!(err.contains("/definitely/not/here"), "{err}");
    }
}
