//! Hands a backlog longer than one call's budget to a detached
//! `cairn spool flush --quiet`, which the hook does not wait for.

use std::{
    os::unix::process::CommandExt,
    process::{Command, Stdio},
};

pub fn flush() {
    let Ok(exe) = std::env::current_exe() else { return };
    // Its own process group: the agent's signals to the hook's group do not reach it.
    let _ = Command::new(exe)
        .args(["spool", "flush", "--quiet"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
}
