//! Integration tests of cairn-api: one binary, each test with its own
//! database and a real server on a free port.

mod admin;
mod agents;
mod ask;
mod bounded_waits;
mod budgets;
mod checkout;
mod claude_code;
mod claude_mem;
mod context;
mod dashboard_data;
mod docs;
mod file_memories;
mod file_versions;
mod floods;
mod generated_client;
mod health;
mod helpers;
mod hybrid;
mod idempotency;
mod isolation;
mod live;
mod malformed;
mod mcp;
mod memory_changes;
mod plans;
mod poisoning;
mod privacy;
mod privileges;
mod project_rules;
mod redis_down;
mod retrieval;
mod search;
mod states;
mod telemetry;
mod transfer;
