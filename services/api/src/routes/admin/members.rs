//! The team's people: list them with their laptops, add one by email before
//! their first sign-in, and offboard one in a single action (every token of
//! theirs revoked — laptops and dashboard sessions — and no sign-in after).
//! Team-level admin only.

use axum::{
    extract::{Path, State},
    http::StatusCode,
};
use cairn_shared::{
    tenancy::{Role, members, tokens},
    time::{opt_epoch_ms, to_epoch_ms as epoch_ms},
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::{
    auth::Auth,
    error::{ApiError, ApiResult},
    extract::{Json, Query},
    state::AppState,
};

use super::projects::TeamQuery;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LaptopDto {
    pub token_id: Uuid,
    pub host: Option<String>,
    pub created_at_epoch: i64,
    pub last_used_at_epoch: Option<i64>,
    pub revoked: bool,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberDto {
    pub id: Uuid,
    pub email: Option<String>,
    pub name: Option<String>,
    /// `member` or `admin`.
    pub role: String,
    /// The provider's issuer, for a member who signed in.
    pub issuer: Option<String>,
    pub created_at_epoch: i64,
    pub last_seen_at_epoch: Option<i64>,
    pub offboarded_at_epoch: Option<i64>,
    pub laptops: Vec<LaptopDto>,
}

fn dto(member: members::Member, tokens: &[tokens::ApiToken]) -> MemberDto {
    MemberDto {
        laptops: tokens
            .iter()
            .filter(|t| t.member_id == Some(member.id) && t.kind == tokens::TokenKind::Laptop)
            .map(|t| LaptopDto {
                token_id: t.id,
                host: t.host.clone(),
                created_at_epoch: epoch_ms(t.created_at),
                last_used_at_epoch: opt_epoch_ms(t.last_used_at),
                revoked: t.revoked_at.is_some(),
            })
            .collect(),
        id: member.id,
        email: member.email,
        name: member.name,
        role: member.role.as_str().into(),
        issuer: member.issuer,
        created_at_epoch: epoch_ms(member.created_at),
        last_seen_at_epoch: opt_epoch_ms(member.last_seen_at),
        offboarded_at_epoch: opt_epoch_ms(member.offboarded_at),
    }
}

/// A team-level admin (a project admin manages no people).
fn team_admin(auth: &Auth, team: Option<Uuid>) -> Result<Uuid, ApiError> {
    let team_id = super::acting_team(auth, team)?;
    if auth.project_id.is_some() {
        return Err(ApiError::forbidden(
            "insufficient_scope",
            "members are managed by a team admin, not a project token",
        ));
    }
    Ok(team_id)
}

#[derive(Serialize, ToSchema)]
pub struct MembersResponse {
    pub members: Vec<MemberDto>,
}

/// The team's members (offboarded ones last) with their laptops.
#[utoipa::path(get, path = "/v1/admin/members", tag = "admin", params(TeamQuery),
    responses((status = 200, body = MembersResponse), (status = 403, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn list_members(
    State(state): State<AppState>,
    auth: Auth,
    Query(q): Query<TeamQuery>,
) -> ApiResult<Json<MembersResponse>> {
    let team_id = team_admin(&auth, q.team_id)?;
    let (people, all_tokens) = tokio::try_join!(
        members::list(&state.pool, team_id),
        tokens::list_tokens(&state.pool, team_id)
    )?;
    Ok(Json(MembersResponse {
        members: people.into_iter().map(|m| dto(m, &all_tokens)).collect(),
    }))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AddMember {
    pub email: String,
    pub name: Option<String>,
    /// `member` (default) or `admin`; single sign-on's rules set it again at each sign-in.
    pub role: Option<String>,
    pub team_id: Option<Uuid>,
}

#[derive(Serialize, ToSchema)]
pub struct MemberResponse {
    pub member: MemberDto,
}

/// Adds a member by email before their first sign-in.
#[utoipa::path(post, path = "/v1/admin/members", tag = "admin", request_body = AddMember,
    responses((status = 201, body = MemberResponse), (status = 409, body = crate::error::ErrorBody),
              (status = 422, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn add_member(
    State(state): State<AppState>,
    auth: Auth,
    Json(body): Json<AddMember>,
) -> ApiResult<(StatusCode, Json<MemberResponse>)> {
    let team_id = team_admin(&auth, body.team_id)?;
    let email = body.email.trim();
    if !email.contains('@') || email.len() < 3 || email.len() > 320 {
        return Err(ApiError::unprocessable(
            "invalid_field",
            "`email` is not an email address",
        ));
    }
    let role = match body.role.as_deref() {
        None => Role::Member,
        Some(r) => Role::parse(r)
            .ok_or_else(|| ApiError::unprocessable("invalid_field", "`role` is `member` or `admin`"))?,
    };
    let mut tx = state.pool.begin().await?;
    let member = members::add(&mut *tx, team_id, email, body.name.as_deref(), role)
        .await
        .map_err(|e| match e.as_database_error().and_then(|d| d.constraint()) {
            Some("members_email_idx") => {
                ApiError::conflict("member_exists", "a member with this email exists")
            }
            _ => e.into(),
        })?;
    super::record(
        &mut *tx,
        &auth,
        super::Target {
            team_id,
            project_id: None,
            kind: "member",
            id: member.id,
        },
        "member.add",
        serde_json::json!({"email": email, "role": role.as_str()}),
    )
    .await?;
    tx.commit().await?;
    Ok((
        StatusCode::CREATED,
        Json(MemberResponse {
            member: dto(member, &[]),
        }),
    ))
}

/// Offboards a member: every token of theirs is revoked (laptops and
/// dashboard sessions, on this replica at once and on the others within the
/// token cache's time) and single sign-on refuses them after; audited.
/// What they wrote stays (erasure is separate).
#[utoipa::path(post, path = "/v1/admin/members/{id}/offboard", tag = "admin", params(("id" = Uuid, Path), TeamQuery),
    responses((status = 200, body = MemberResponse), (status = 404, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn offboard_member(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
    Query(q): Query<TeamQuery>,
) -> ApiResult<Json<MemberResponse>> {
    let team_id = team_admin(&auth, q.team_id)?;
    let mut tx = state.pool.begin().await?;
    let member = members::offboard(&mut *tx, team_id, id)
        .await?
        .ok_or_else(|| ApiError::not_found("member_not_found", "no such member"))?;
    let revoked = tokens::revoke_member_tokens(&mut *tx, team_id, id).await?;
    super::record(
        &mut *tx,
        &auth,
        super::Target {
            team_id,
            project_id: None,
            kind: "member",
            id,
        },
        "member.offboard",
        serde_json::json!({"tokensRevoked": revoked.len()}),
    )
    .await?;
    let tokens = tokens::member_tokens(&mut *tx, team_id, id).await?;
    tx.commit().await?;
    revoked.into_iter().for_each(|t| state.tokens.forget(t));
    Ok(Json(MemberResponse {
        member: dto(member, &tokens),
    }))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErasedResponse {
    pub sessions: u64,
    pub events: u64,
    pub observations: u64,
    pub summaries: u64,
    /// Others' memories theirs had merged or superseded, back to live.
    pub restored: i64,
    /// Everything removed, as it was: `{sessions, events, observations, summaries}`.
    #[schema(value_type = Object)]
    pub export: serde_json::Value,
}

/// Erases a member's data: answers with all of it (the export), then removes
/// their sessions, events and the memories drawn from them, their tokens
/// and their member row; audited (without their details). A team admin, or
/// the member for themselves. Irreversible.
#[utoipa::path(post, path = "/v1/admin/members/{id}/erase", tag = "admin", params(("id" = Uuid, Path), TeamQuery),
    responses((status = 200, body = ErasedResponse), (status = 404, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn erase_member(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
    Query(q): Query<TeamQuery>,
) -> ApiResult<Json<ErasedResponse>> {
    let team_id = if auth.member_id == Some(id) {
        auth.team_id
    } else {
        team_admin(&auth, q.team_id)?
    };
    let mut tx = state.pool.begin().await?;
    members::get(&mut *tx, team_id, id)
        .await?
        .ok_or_else(|| ApiError::not_found("member_not_found", "no such member"))?;
    let revoked = tokens::revoke_member_tokens(&mut *tx, team_id, id).await?;
    let actor = format!("token:{}", auth.token_id);
    let erased = crate::store::erasure::member(&mut tx, team_id, id, &actor).await?;
    // A member erasing themselves erased the token they act with: the entry names no token.
    let actor_token_id = (auth.member_id != Some(id)).then_some(auth.token_id);
    cairn_shared::tenancy::audit::record(
        &mut *tx,
        cairn_shared::tenancy::audit::AuditEntry {
            team_id: Some(team_id),
            project_id: None,
            actor_token_id,
            action: "member.erase",
            target_type: "member",
            target_id: Some(id.to_string()),
            detail: serde_json::json!({"sessions": erased.sessions, "events": erased.events,
                                       "observations": erased.observations, "summaries": erased.summaries,
                                       "self": actor_token_id.is_none()}),
            request_id: crate::request_id::current().as_deref(),
        },
    )
    .await?;
    tx.commit().await?;
    revoked.into_iter().for_each(|t| state.tokens.forget(t));
    Ok(Json(ErasedResponse {
        sessions: erased.sessions,
        events: erased.events,
        observations: erased.observations,
        summaries: erased.summaries,
        restored: erased.restored,
        export: erased.export,
    }))
}
