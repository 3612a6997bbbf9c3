//! The `cairn-api` and `cairn-generator` binaries under test. Another
//! package's `CARGO_BIN_EXE_*` is not visible here, so they are found next to
//! this test executable (`<target>/debug/deps/fault-…` → `<target>/debug/`)
//! and built once, when missing or older than their sources.

use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::OnceLock,
    time::SystemTime,
};

pub struct Bins {
    pub api: PathBuf,
    pub generator: PathBuf,
}

static BINS: OnceLock<Result<Bins, String>> = OnceLock::new();

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// The binaries; builds them on first use when needed. Blocking.
pub fn bins() -> &'static Bins {
    match BINS.get_or_init(locate) {
        Ok(b) => b,
        Err(e) => panic!("{e}"),
    }
}

fn locate() -> Result<Bins, String> {
    if let Ok(dir) = std::env::var("CAIRN_FAULT_BIN_DIR") {
        let dir = PathBuf::from(dir);
        let bins = Bins {
            api: dir.join("cairn-api"),
            generator: dir.join("cairn-generator"),
        };
        return if bins.api.is_file() && bins.generator.is_file() {
            Ok(bins)
        } else {
            Err(format!(
                "CAIRN_FAULT_BIN_DIR={} holds no cairn-api and cairn-generator",
                dir.display()
            ))
        };
    }
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    // <target>/<profile>/deps/fault-<hash>
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or_else(|| format!("unexpected test executable path {}", exe.display()))?
        .to_path_buf();
    let bins = Bins {
        api: profile_dir.join("cairn-api"),
        generator: profile_dir.join("cairn-generator"),
    };
    let root = workspace_root();
    let sources = newest_source(&root);
    let stale = |p: &Path| {
        std::fs::metadata(p)
            .and_then(|m| m.modified())
            .map(|built| built < sources)
            .unwrap_or(true)
    };
    if stale(&bins.api) || stale(&bins.generator) {
        build(&root, &profile_dir)?;
    }
    if !(bins.api.is_file() && bins.generator.is_file()) {
        return Err(format!(
            "no cairn-api / cairn-generator in {} after building; build them \
             (`cargo build -p cairn-api -p cairn-generator`) or set CAIRN_FAULT_BIN_DIR",
            profile_dir.display()
        ));
    }
    Ok(bins)
}

fn build(root: &Path, profile_dir: &Path) -> Result<(), String> {
    let profile = profile_dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let target_dir = profile_dir
        .parent()
        .ok_or("no target directory above the profile directory")?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args(["build", "-p", "cairn-api", "-p", "cairn-generator", "--bins"])
        .env("CARGO_TARGET_DIR", target_dir);
    match profile {
        "debug" => {}
        "release" => {
            cmd.arg("--release");
        }
        other => {
            return Err(format!(
                "the test executable is in an unknown profile directory `{other}`: build cairn-api and \
                 cairn-generator yourself and set CAIRN_FAULT_BIN_DIR"
            ));
        }
    }
    eprintln!(
        "fault: building cairn-api and cairn-generator (missing or older than their sources) into {}",
        target_dir.display()
    );
    let status = cmd.status().map_err(|e| format!("run cargo build: {e}"))?;
    if !status.success() {
        return Err(format!(
            "cargo build -p cairn-api -p cairn-generator failed: {status}"
        ));
    }
    Ok(())
}

/// The newest modification time among the sources the two binaries are built from.
fn newest_source(root: &Path) -> SystemTime {
    let mut newest = SystemTime::UNIX_EPOCH;
    for dir in [
        "services/api",
        "services/generator",
        "crates/shared",
        "crates/privacy",
        "migrations",
    ] {
        walk(&root.join(dir), &mut newest);
    }
    newest
}

fn walk(path: &Path, newest: &mut SystemTime) {
    let Ok(meta) = std::fs::metadata(path) else {
        return;
    };
    if meta.is_dir() {
        // Tests and benches are not part of the binaries.
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if matches!(name, "target" | "tests" | "benches") {
            return;
        }
        if let Ok(rd) = std::fs::read_dir(path) {
            for entry in rd.flatten() {
                walk(&entry.path(), newest);
            }
        }
    } else if let Ok(m) = meta.modified()
        && m > *newest
    {
        *newest = m;
    }
}
