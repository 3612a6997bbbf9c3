//! Tracing set-up shared by the binaries: `RUST_LOG` filtering, and JSON
//! lines when `CAIRN_LOG_FORMAT=json`.

use tracing_subscriber::{EnvFilter, fmt};

pub fn init(default_filter: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter));
    let json = std::env::var("CAIRN_LOG_FORMAT").is_ok_and(|v| v == "json");
    let builder = fmt().with_env_filter(filter).with_target(false);
    let result = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
    // A second init (tests) is harmless.
    let _ = result;
}
