//! Tenancy for an embedding program: every call names its team and
//! project. When the program names none, one default team and project are
//! made on first use and their ids kept in `tenant.json` in the program's
//! data directory (`CAIRN_DATA_DIR`, default `<user data dir>/cairn`), then
//! reused — also when the database already holds them from another run.

use std::path::{Path, PathBuf};

use cairn_shared::tenancy::{projects, teams};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use uuid::Uuid;

use crate::{error::Error, tenancy::ProjectRef};

/// The default team's and project's slug.
pub const DEFAULT_SLUG: &str = "default";
const FILE: &str = "tenant.json";

#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
struct Stored {
    team_id: Uuid,
    project_id: Uuid,
}

/// `CAIRN_DATA_DIR`, else the user's data directory's `cairn`.
pub fn data_dir() -> PathBuf {
    std::env::var_os("CAIRN_DATA_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::data_dir().map(|d| d.join("cairn")))
        .unwrap_or_else(|| PathBuf::from(".cairn"))
}

/// The default project: the one `dir`'s file names when it is still in the
/// database, else `default/default` (made when missing), written to the file.
#[tracing::instrument(skip(pool))]
pub async fn default_project(pool: &PgPool, dir: &Path) -> Result<ProjectRef, Error> {
    let path = dir.join(FILE);
    if let Some(stored) = read(&path)
        && let Some(project) =
            projects::find_project(pool, stored.team_id, &stored.project_id.to_string()).await?
    {
        return Ok(ProjectRef {
            team_id: project.team_id,
            id: project.id,
        });
    }
    let project = ensure(pool, DEFAULT_SLUG, DEFAULT_SLUG).await?;
    let stored = Stored {
        team_id: project.team_id,
        project_id: project.id,
    };
    write(&path, &stored)
        .map_err(|e| Error::internal().with_message(format!("writing {}: {e}", path.display())))?;
    Ok(project)
}

/// Team `team` and its project `project` (slugs), made when missing; safe
/// when several programs make them at once (the slugs are unique).
#[tracing::instrument(skip(pool))]
pub async fn ensure(pool: &PgPool, team: &str, project: &str) -> Result<ProjectRef, Error> {
    let team_id = match teams::list_teams(pool, None)
        .await?
        .into_iter()
        .find(|t| t.slug == team)
    {
        Some(t) => t.id,
        None => match teams::create_team(pool, team, team).await {
            Ok(t) => t.id,
            // Made by someone else meanwhile.
            Err(_) => {
                teams::list_teams(pool, None)
                    .await?
                    .into_iter()
                    .find(|t| t.slug == team)
                    .ok_or_else(|| Error::internal().with_message(format!("team {team} could not be made")))?
                    .id
            }
        },
    };
    let found = projects::find_project(pool, team_id, project).await?;
    let project = match found {
        Some(p) => p,
        None => match projects::create_project(pool, team_id, project, project).await {
            Ok(p) => p,
            Err(_) => projects::find_project(pool, team_id, project)
                .await?
                .ok_or_else(|| {
                    Error::internal().with_message(format!("project {project} could not be made"))
                })?,
        },
    };
    Ok(ProjectRef {
        team_id,
        id: project.id,
    })
}

fn read(path: &Path) -> Option<Stored> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

fn write(path: &Path, stored: &Stored) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    // Written aside and renamed: a reader never sees half a file.
    let aside = path.with_extension(format!("json.{}", std::process::id()));
    std::fs::write(&aside, serde_json::to_vec_pretty(stored).unwrap_or_default())?;
    std::fs::rename(aside, path)
}
