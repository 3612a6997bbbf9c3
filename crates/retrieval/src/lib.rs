//! Cairn's retrieval engine: every path that finds memory — search over
//! HTTP and MCP, context at session start and on a prompt, file memories
//! before a tool runs, `ask`, the dashboard — asks it, with one query
//! model (`query`) and one place to tune (`fuse`, `doc::FIELD_WEIGHTS`).
//!
//! Two arms over every memory of a project, whatever its age: words, by
//! BM25F over a code-aware tokenisation (`lexical`, `tokenize`), and
//! meaning, by a scan of every vector (`semantic`: exact, or by signs first
//! in a large project); fused by a
//! convex combination of normalised scores (`fuse`); both arms admit a
//! memory through the same check (`query`, answered from a dense `gate`
//! by slot where it can be). The index lives in
//! memory and is derived: built from Postgres on start, kept current from
//! the database's own change feed (`follow`, `store`, migration 0021),
//! never from one replica's requests. A search's arrays by slot are a
//! thread's own, reused from one search to the next (`scratch`).

pub mod doc;
pub mod engine;
mod follow;
pub mod fuse;
mod gate;
pub mod knob;
pub mod lexical;
pub mod project;
pub mod query;
mod scratch;
pub mod semantic;
pub mod store;
pub mod tokenize;

pub use doc::{Attrs, Doc, Source, State};
pub use engine::{Config, Engine, Stats};
pub use query::{Filters, Hit, Mode, Query};
