//! The hook client: what an agent runs on every hook (`hook`), the local
//! spool of events the server did not take (`spool`), the client's settings
//! (`client_config`) and the agents it knows (`agent`). The `cairn` CLI uses
//! it for `cairn hook`, `cairn spool`, `doctor` and `install`; the small
//! `cairn-hook` binary (`main.rs`) is it alone, with no async runtime, no
//! database driver and no MCP client, so each hook call starts quickly.

pub mod agent;
pub mod client_config;
pub mod hook;
pub mod spool;
