//! `cairn-core`: Cairn's memory engine as a library. The server's binaries
//! (`cairn-api`, `cairn-generator`) are transports over it; a Rust program
//! can embed it against its own Postgres, with no HTTP service, no Redis and
//! no worker process.

pub mod generation;
pub mod memory;
pub mod upkeep;
