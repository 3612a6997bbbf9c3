//! Memory: observations and their lifecycle. `lifecycle` alone changes an
//! observation's state and writes the `memory_changes` row that says why;
//! `changes` reads that log; `retrievals` counts the reads that return a
//! memory.

pub mod changes;
pub mod lifecycle;
pub mod retrievals;
