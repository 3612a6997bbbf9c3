//! First start: against an empty database, create a default team and project,
//! an admin token and an ingest token, and hand their secrets back once.

use sqlx::PgPool;

use crate::{
    auth::{Scope, TokenSigner},
    tenancy::{
        self, MintedToken, NewToken, Project, Team,
        audit::{self, AuditEntry},
    },
};

pub struct Bootstrapped {
    pub team: Team,
    pub project: Project,
    pub admin: MintedToken,
    pub ingest: MintedToken,
}

/// Serialises concurrent bootstraps across replicas.
const BOOTSTRAP_LOCK: i64 = 0x6361_6972_6e00_0001;

/// Creates the defaults when no team exists yet; `None` when one does.
/// Safe to call from several replicas at once: only one creates anything.
pub async fn bootstrap_if_empty(pool: &PgPool, signer: &TokenSigner) -> anyhow::Result<Option<Bootstrapped>> {
    let mut tx = pool.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(BOOTSTRAP_LOCK)
        .execute(&mut *tx)
        .await?;
    let exists: bool = sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM teams)")
        .fetch_one(&mut *tx)
        .await?;
    if exists {
        return Ok(None);
    }
    let team = tenancy::teams::create_team(&mut *tx, "default", "Default team").await?;
    let project = tenancy::projects::create_project(&mut *tx, team.id, "default", "Default project").await?;
    let admin = tenancy::tokens::mint_token(
        &mut *tx,
        signer,
        NewToken {
            team_id: team.id,
            project_id: None,
            name: "bootstrap admin".into(),
            scopes: vec![Scope::Superadmin, Scope::Admin, Scope::Read, Scope::Ingest],
            expires_at: None,
            created_by: None,
            member_id: None,
            kind: tenancy::tokens::TokenKind::Service,
            host: None,
        },
    )
    .await?;
    let ingest = tenancy::tokens::mint_token(
        &mut *tx,
        signer,
        NewToken {
            team_id: team.id,
            project_id: Some(project.id),
            name: "bootstrap ingest".into(),
            scopes: vec![Scope::Ingest, Scope::Read],
            expires_at: None,
            created_by: Some(admin.token.id),
            member_id: None,
            kind: tenancy::tokens::TokenKind::Service,
            host: None,
        },
    )
    .await?;
    audit::record(
        &mut *tx,
        AuditEntry {
            team_id: Some(team.id),
            project_id: None,
            actor_token_id: None,
            action: "bootstrap",
            target_type: "team",
            target_id: Some(team.id.to_string()),
            detail: serde_json::json!({"project": project.id, "tokens": [admin.token.id, ingest.token.id]}),
            request_id: None,
        },
    )
    .await?;
    tx.commit().await?;
    Ok(Some(Bootstrapped {
        team,
        project,
        admin,
        ingest,
    }))
}

impl Bootstrapped {
    /// The one-time banner printed to stdout.
    pub fn banner(&self, base_url: &str) -> String {
        format!(
            "\n=== Cairn bootstrap: save these secrets now, they are not shown again ===\n\
             team:    {} ({})\n\
             project: {} ({})\n\
             admin token  (superadmin, admin, read, ingest):\n  {}\n\
             ingest token (project {}, ingest, read):\n  {}\n\
             Try: curl -H \"Authorization: Bearer $CAIRN_TOKEN\" {base_url}/v1/info\n\
             Connect an agent, in your repository (claude-code, cursor, codex, gemini or windsurf):\n  \
             cairn install claude-code --url {base_url} --token <the ingest token>\n\
             =========================================================================\n",
            self.team.slug,
            self.team.id,
            self.project.slug,
            self.project.id,
            self.admin.secret,
            self.project.slug,
            self.ingest.secret,
        )
    }
}
