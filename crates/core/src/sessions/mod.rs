//! Sessions and turns: how a turn ends (its jobs sealed and due, its
//! summary queued) and how a session ends (every open job sealed, its
//! summary queued) — one module, used by the ingest path (Stop, SessionEnd),
//! claude-mem's end route, and the generator's sweeper for sessions an agent
//! left without a SessionEnd.

pub mod end;
