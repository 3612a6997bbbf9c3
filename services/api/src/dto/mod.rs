//! Wire shapes (camelCase, epoch-millisecond times) of claude-mem's `/v1` API,
//! built from stored rows.

pub mod context;
mod event;
mod hook;
mod job;
mod observation;
pub mod search;
mod session;
mod tenancy;

pub use event::EventDto;
pub use hook::{HookInput, HookOutput, HookSpecificOutput};
pub use job::{JobDto, JobSummaryDto};
pub use observation::ObservationDto;
pub use session::SessionDto;
pub use tenancy::{ProjectDto, TeamDto, TokenDto};
