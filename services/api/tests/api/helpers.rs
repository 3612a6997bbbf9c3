//! The shared test harness (crates/testkit): a real cairn-api per test.

pub use cairn_testkit::*;
