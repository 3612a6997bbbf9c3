//! [`Cairn`]: the engine embedded in a program, against its own Postgres —
//! no HTTP service, no Redis, no worker process. Events go through the
//! server's ingest path (privacy filter, idempotency, event and outbox job
//! in one transaction); [`Cairn::generate`] runs the due jobs inline through
//! the same state machine (queued → processing → completed); search and
//! context are the server's.
//!
//! ```no_run
//! # async fn run() -> cairn_core::Result<()> {
//! use cairn_core::{Cairn, client::Event};
//!
//! let cairn = Cairn::connect("postgres://postgres@127.0.0.1/cairn").await?;
//! cairn.start_session("s-1", "/work/repo").await?;
//! cairn.capture(Event::prompt("s-1", "Why does the deploy fail?")).await?;
//! cairn.capture(Event::stop("s-1", "The registry-creds secret had expired.")).await?;
//! cairn.end_session("s-1").await?;
//! let generated = cairn.generate().await?;
//! let hits = cairn.search("deploy failure", 5).await?;
//! let context = cairn.context(None).await?;
//! println!("{generated:?} {} hits\n{context}", hits.len());
//! cairn.close().await;
//! # Ok(())
//! # }
//! ```

mod capture;
mod connect;
mod generate;
mod recall;
pub mod tenant;

use std::sync::Arc;

pub use capture::{Captured, Event};
pub use connect::Options;
pub use generate::Generated;

use crate::{engine::Engine, generation::Generator, tenancy::ProjectRef};

/// The embedded engine, bound to one team and project.
pub struct Cairn {
    engine: Arc<Engine>,
    generator: Generator,
    project: ProjectRef,
    /// Names this process's claims in the job log.
    worker: String,
}

impl Cairn {
    /// The team and project every call acts on.
    pub fn project(&self) -> ProjectRef {
        self.project
    }

    /// The engine underneath, for what the client does not wrap.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The same engine on another project of the database (`tenant::ensure`
    /// makes one).
    pub fn for_project(&self, project: ProjectRef) -> Cairn {
        Cairn {
            engine: self.engine.clone(),
            generator: self.generator.clone(),
            project,
            worker: self.worker.clone(),
        }
    }

    /// Closes the pool; nothing is pending (every call awaited its writes).
    pub async fn close(self) {
        self.engine.pool.close().await;
    }
}
