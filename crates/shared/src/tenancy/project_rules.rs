//! Project rules: how a team token's hook finds its project from where the
//! agent works. A rule matches a git remote (normalised, so `git@host:o/r.git`
//! and `https://host/o/r` are one) or a path prefix (whole path components).
//! The client sends the main worktree's root, so worktrees and
//! subdirectories of one repository resolve to one project.

use chrono::{DateTime, Utc};
use sqlx::{PgExecutor, prelude::FromRow};
use uuid::Uuid;

#[derive(Clone, Copy, Debug, PartialEq, Eq, sqlx::Type, serde::Serialize, serde::Deserialize)]
#[sqlx(type_name = "text", rename_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum RuleKind {
    GitRemote,
    PathPrefix,
}

#[derive(Clone, Debug, FromRow)]
pub struct ProjectRule {
    pub id: Uuid,
    pub team_id: Uuid,
    pub project_id: Uuid,
    pub kind: RuleKind,
    pub pattern: String,
    pub created_at: DateTime<Utc>,
}

/// Where an agent works, as the hook client saw it.
#[derive(Clone, Debug, Default)]
pub struct Locator {
    pub git_remote: Option<String>,
    pub repo_root: Option<String>,
    pub cwd: Option<String>,
}

impl Locator {
    pub fn is_empty(&self) -> bool {
        self.git_remote.is_none() && self.repo_root.is_none() && self.cwd.is_none()
    }
}

/// `git@github.com:Acme/API.git`, `https://user@github.com/Acme/API`,
/// `ssh://git@github.com:22/Acme/API.git` → `github.com/Acme/API`. The host is
/// lowercased (hosts are case-insensitive), the path is kept as written.
pub fn normalize_remote(remote: &str) -> Option<String> {
    let remote = remote.trim();
    let (host, path) = match remote.split_once("://") {
        Some((_, rest)) => rest.split_once('/')?,
        // scp-like `user@host:path` (no scheme).
        None => remote.split_once(':')?,
    };
    let host = host.rsplit('@').next()?;
    let host = host.split(':').next()?.to_ascii_lowercase();
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path).trim_end_matches('/');
    (!host.is_empty() && !path.is_empty()).then(|| format!("{host}/{path}"))
}

/// An absolute path without a trailing slash, or None.
pub fn normalize_path(path: &str) -> Option<String> {
    let path = path.trim();
    if !path.starts_with('/') {
        return None;
    }
    let trimmed = path.trim_end_matches('/');
    Some(if trimmed.is_empty() {
        "/".into()
    } else {
        trimmed.into()
    })
}

/// True when `prefix` is `path` or one of its parent directories.
fn is_path_prefix(prefix: &str, path: &str) -> bool {
    prefix == "/"
        || path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Which rule decides: a git remote match first, then the longest path prefix
/// of the repository root or the working directory.
pub fn best_match<'a>(rules: &'a [ProjectRule], at: &Locator) -> Option<&'a ProjectRule> {
    if let Some(remote) = at.git_remote.as_deref().and_then(normalize_remote)
        && let Some(rule) = rules
            .iter()
            .find(|r| r.kind == RuleKind::GitRemote && r.pattern == remote)
    {
        return Some(rule);
    }
    let paths: Vec<String> = [&at.repo_root, &at.cwd]
        .into_iter()
        .flatten()
        .filter_map(|p| normalize_path(p))
        .collect();
    rules
        .iter()
        .filter(|r| r.kind == RuleKind::PathPrefix)
        .filter(|r| paths.iter().any(|p| is_path_prefix(&r.pattern, p)))
        .max_by_key(|r| r.pattern.len())
}

macro_rules! rule_columns {
    () => {
        "id, team_id, project_id, kind, pattern, created_at"
    };
}

#[tracing::instrument(skip(db), err)]
pub async fn list_for_team(db: impl PgExecutor<'_>, team_id: Uuid) -> sqlx::Result<Vec<ProjectRule>> {
    sqlx::query_as(concat!(
        "SELECT ",
        rule_columns!(),
        " FROM project_rules WHERE team_id = $1 ORDER BY created_at"
    ))
    .bind(team_id)
    .fetch_all(db)
    .await
}

#[tracing::instrument(skip(db), err)]
pub async fn list_for_project(
    db: impl PgExecutor<'_>,
    team_id: Uuid,
    project_id: Uuid,
) -> sqlx::Result<Vec<ProjectRule>> {
    sqlx::query_as(concat!(
        "SELECT ",
        rule_columns!(),
        " FROM project_rules WHERE team_id = $1 AND project_id = $2 ORDER BY created_at"
    ))
    .bind(team_id)
    .bind(project_id)
    .fetch_all(db)
    .await
}

/// Adds a rule; the pattern must already be normalised. A pattern the team
/// already uses is a unique violation on `project_rules_team_id_kind_pattern_key`.
#[tracing::instrument(skip(db), err)]
pub async fn create(
    db: impl PgExecutor<'_>,
    team_id: Uuid,
    project_id: Uuid,
    kind: RuleKind,
    pattern: &str,
) -> sqlx::Result<ProjectRule> {
    sqlx::query_as(concat!(
        "INSERT INTO project_rules (id, team_id, project_id, kind, pattern) VALUES ($1, $2, $3, $4, $5)
         RETURNING ",
        rule_columns!()
    ))
    .bind(Uuid::now_v7())
    .bind(team_id)
    .bind(project_id)
    .bind(kind)
    .bind(pattern)
    .fetch_one(db)
    .await
}

/// Deletes a rule of the team; returns it when it existed.
#[tracing::instrument(skip(db), err)]
pub async fn delete(db: impl PgExecutor<'_>, team_id: Uuid, id: Uuid) -> sqlx::Result<Option<ProjectRule>> {
    sqlx::query_as(concat!(
        "DELETE FROM project_rules WHERE team_id = $1 AND id = $2 RETURNING ",
        rule_columns!()
    ))
    .bind(team_id)
    .bind(id)
    .fetch_optional(db)
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(kind: RuleKind, pattern: &str) -> ProjectRule {
        ProjectRule {
            id: Uuid::now_v7(),
            team_id: Uuid::nil(),
            project_id: Uuid::now_v7(),
            kind,
            pattern: pattern.into(),
            created_at: Utc::now(),
        }
    }

    #[test]
    fn remotes_of_one_repository_normalise_alike() {
        for remote in [
            "git@github.com:acme/api.git",
            "https://github.com/acme/api",
            "https://user:pw@GitHub.com/acme/api.git/",
            "ssh://git@github.com:22/acme/api.git",
            "git://github.com/acme/api",
        ] {
            assert_eq!(
                normalize_remote(remote).as_deref(),
                Some("github.com/acme/api"),
                "{remote}"
            );
        }
        assert_eq!(normalize_remote("not a remote"), None);
        assert_eq!(normalize_remote("/srv/git/api.git"), None);
    }

    #[test]
    fn remote_beats_path_and_longest_prefix_wins() {
        let rules = vec![
            rule(RuleKind::PathPrefix, "/home/dev"),
            rule(RuleKind::PathPrefix, "/home/dev/acme"),
            rule(RuleKind::GitRemote, "github.com/acme/api"),
        ];
        let by_remote = Locator {
            git_remote: Some("git@github.com:acme/api.git".into()),
            cwd: Some("/home/dev/acme/api/src".into()),
            ..Default::default()
        };
        assert_eq!(
            best_match(&rules, &by_remote).unwrap().pattern,
            "github.com/acme/api"
        );
        let by_path = Locator {
            cwd: Some("/home/dev/acme/web/src".into()),
            ..Default::default()
        };
        assert_eq!(best_match(&rules, &by_path).unwrap().pattern, "/home/dev/acme");
        // Whole components only: /home/developer is not under /home/dev.
        let elsewhere = Locator {
            cwd: Some("/home/developer/x".into()),
            ..Default::default()
        };
        assert!(best_match(&rules, &elsewhere).is_none());
    }

    #[test]
    fn a_worktree_matches_through_its_main_root() {
        let rules = vec![rule(RuleKind::PathPrefix, "/work/api")];
        let worktree = Locator {
            repo_root: Some("/work/api".into()),
            cwd: Some("/tmp/wt/feature-x/src".into()),
            ..Default::default()
        };
        assert!(best_match(&rules, &worktree).is_some());
    }
}
