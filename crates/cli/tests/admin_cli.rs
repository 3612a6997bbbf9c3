//! The admin commands as an operator runs them: the `cairn` binary against a
//! real cairn-api (`cairn_testkit::spawn_app`): `projects`, `tokens`, `jobs`,
//! `export`/`import`, `import claude-mem` from a SQLite file built with
//! claude-mem's own schema, `sync`, and `memories` (private-first sharing).

#[path = "admin_cli/claude_mem.rs"]
mod claude_mem;
#[path = "admin_cli/commands.rs"]
mod commands;
#[path = "admin_cli/memories.rs"]
mod memories;
#[path = "admin_cli/support.rs"]
mod support;
#[path = "admin_cli/sync.rs"]
mod sync;
#[path = "admin_cli/transfer.rs"]
mod transfer;
#[path = "admin_cli/vectors.rs"]
mod vectors;
