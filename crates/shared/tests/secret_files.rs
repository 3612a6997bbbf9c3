//! `<NAME>_FILE` settings read through the shared configuration, from real
//! files as Docker and Kubernetes mount secrets.

use std::{collections::HashMap, path::Path};

use cairn_shared::config::{
    ConfigError, StoreConfig, listen_addr, millis, parsed, required, secret_files::MAX_SECRET_FILE_BYTES, var,
};

fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn write(dir: &Path, name: &str, contents: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_database_url_comes_from_its_file_without_the_trailing_newline() {
    let dir = tempfile::tempdir().unwrap();
    let url = write(dir.path(), "db", b"postgres://cairn:s3cret@db:5432/cairn\n");
    let redis = write(dir.path(), "redis", b"redis://:pw@redis:6379\r\n");
    let cfg = StoreConfig::from_env(&env(&[
        ("CAIRN_DATABASE_URL_FILE", &url),
        ("CAIRN_REDIS_URL_FILE", &redis),
    ]))
    .unwrap();
    assert_eq!(cfg.database_url, "postgres://cairn:s3cret@db:5432/cairn");
    assert_eq!(cfg.redis_url, "redis://:pw@redis:6379");
}

#[test]
fn required_parsed_millis_and_listen_addr_read_files_too() {
    let dir = tempfile::tempdir().unwrap();
    let secret = write(dir.path(), "jwt", b"0123456789abcdef0123456789abcdef\n");
    let workers = write(dir.path(), "workers", b"7\n");
    let wait = write(dir.path(), "wait", b"1500");
    let addr = write(dir.path(), "addr", b"127.0.0.1:9464\n");
    let env = env(&[
        ("CAIRN_JWT_SECRET_FILE", &secret),
        ("CAIRN_WORKERS_FILE", &workers),
        ("CAIRN_MAX_WAIT_MS_FILE", &wait),
        ("CAIRN_METRICS_ADDR_FILE", &addr),
    ]);
    assert_eq!(
        required(&env, "CAIRN_JWT_SECRET", "hint").unwrap(),
        "0123456789abcdef0123456789abcdef"
    );
    assert_eq!(parsed(&env, "CAIRN_WORKERS", 4_usize).unwrap(), 7);
    assert_eq!(millis(&env, "CAIRN_MAX_WAIT_MS", 1).unwrap().as_millis(), 1500);
    assert_eq!(
        listen_addr(&env, "CAIRN_METRICS_ADDR", "0.0.0.0:1")
            .unwrap()
            .port(),
        9464
    );
}

#[test]
fn a_value_and_a_file_for_the_same_setting_is_an_error_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let secret = write(dir.path(), "jwt", b"from-the-file-0123456789abcdef0123\n");
    let err = required(
        &env(&[
            ("CAIRN_JWT_SECRET", "from-the-environment-0123456789abcdef"),
            ("CAIRN_JWT_SECRET_FILE", &secret),
        ]),
        "CAIRN_JWT_SECRET",
        "hint",
    )
    .unwrap_err();
    assert!(matches!(err, ConfigError::Conflict { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("CAIRN_JWT_SECRET and CAIRN_JWT_SECRET_FILE"),
        "{text}"
    );
    assert!(!text.contains("from-the-"), "no value is shown: {text}");
}

#[test]
fn an_unreadable_file_is_named_and_its_contents_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("absent").to_str().unwrap().to_string();
    let as_directory = dir.path().to_str().unwrap().to_string();
    let mut big = b"SECRET-MARKER-".to_vec();
    big.resize(MAX_SECRET_FILE_BYTES as usize + 1, b'x');
    let oversized = write(dir.path(), "big", &big);
    let invalid_utf8 = write(dir.path(), "binary", b"SECRET-MARKER-\xff\xfe");
    let empty = write(dir.path(), "empty", b"\n");
    for path in [&missing, &as_directory, &oversized, &invalid_utf8, &empty] {
        let err = required(
            &env(&[("CAIRN_JWT_SECRET_FILE", path)]),
            "CAIRN_JWT_SECRET",
            "hint",
        )
        .unwrap_err();
        assert!(
            matches!(err, ConfigError::UnreadableFile { .. }),
            "{path}: {err:?}"
        );
        let text = err.to_string();
        assert!(text.contains("CAIRN_JWT_SECRET_FILE"), "{text}");
        assert!(text.contains(path.as_str()), "{text}");
        assert!(!text.contains("SECRET-MARKER"), "{text}");
    }
}

#[test]
fn a_device_that_never_ends_is_refused_rather_than_read_forever() {
    let err = var(
        &env(&[("CAIRN_OPENAI_API_KEY_FILE", "/dev/zero")]),
        "CAIRN_OPENAI_API_KEY",
    )
    .unwrap_err();
    assert!(err.to_string().contains("larger than"), "{err}");
}

#[test]
fn an_invalid_database_url_from_a_file_does_not_echo_its_password() {
    let dir = tempfile::tempdir().unwrap();
    let url = write(dir.path(), "db", b"mysql://root:hunter2@db/cairn\n");
    let err = StoreConfig::from_env(&env(&[("CAIRN_DATABASE_URL_FILE", &url)])).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("CAIRN_DATABASE_URL is invalid"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
}
