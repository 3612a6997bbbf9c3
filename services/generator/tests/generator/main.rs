//! Integration tests of cairn-generator against real Postgres and Redis:
//! the API ingests hook events, generators (in-process or as processes)
//! turn them into observations and summaries.

mod budgets;
mod code_ties;
mod economy;
mod embeddings;
mod end_to_end;
mod final_message;
mod idle_sessions;
mod lifecycle;
mod load;
mod memory_loop;
mod provider_errors;
mod race;
mod redis_outage;
mod retention;
mod robustness;
mod state_machine;
mod support;
mod upkeep;
