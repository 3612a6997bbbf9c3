//! What every operation of the OpenAPI document must say, added to the
//! document the handlers' annotations produce, so that a route added tomorrow
//! gets it too: a `description` on every response, both credentials
//! (`Authorization: Bearer` and `X-Api-Key`) on every secured operation, the
//! errors every secured operation can answer (401, 403, 429) and those that
//! come from its inputs (400 for an unreadable path, query or body, 404 for a
//! path naming nothing the caller may see, 413 for a body over the limit, 422
//! for a JSON body that does not fit; 429 on every operation, since the
//! per-address rate limit is checked on every request), all with the error
//! body; `servers`.

use serde_json::{Value, json};
use utoipa::openapi::{
    OpenApi, RefOr, Response,
    path::{Operation, ParameterIn},
    schema::Ref,
    security::{SecurityRequirement, SecurityScheme},
};

const ERROR_BODY: &str = "#/components/schemas/ErrorBody";

/// The shared error responses: (status, component name, description).
const ERRORS: [(&str, &str, &str); 7] = [
    (
        "400",
        "BadRequest",
        "Unreadable input: `invalid_json`, `invalid_body`, `invalid_path` or `invalid_query`",
    ),
    (
        "401",
        "Unauthorized",
        "No credential: send `Authorization: Bearer <token>` or `X-Api-Key` (`missing_credentials`)",
    ),
    (
        "403",
        "Forbidden",
        "Unknown, revoked or expired token (`invalid_token`, `token_revoked`, `token_expired`), or a scope the token lacks (`insufficient_scope`)",
    ),
    (
        "404",
        "NotFound",
        "Nothing by that id or slug that this token may see",
    ),
    (
        "413",
        "PayloadTooLarge",
        "The body is over the configured limit, `CAIRN_MAX_BODY_BYTES` (`payload_too_large`)",
    ),
    (
        "422",
        "UnprocessableEntity",
        "A field is missing, mistyped or out of range",
    ),
    (
        "429",
        "TooManyRequests",
        "Over the rate limit; `Retry-After` says when to try again (`rate_limited`)",
    ),
];

/// Completes the document in place.
pub fn complete(doc: &mut OpenApi) {
    add_components(doc);
    doc.servers = Some(vec![from_json(json!({
        "url": "/",
        "description": "The server that serves this document (its own origin)"
    }))]);
    for item in doc.paths.paths.values_mut() {
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
            &mut item.head,
            &mut item.options,
            &mut item.trace,
        ];
        for op in operations.into_iter().flatten() {
            complete_operation(op);
        }
    }
    drop_unused_responses(doc);
}

/// Removes the shared error responses no operation refers to.
fn drop_unused_responses(doc: &mut OpenApi) {
    let used: std::collections::BTreeSet<String> = doc
        .paths
        .paths
        .values()
        .flat_map(|item| {
            [
                &item.get,
                &item.put,
                &item.post,
                &item.delete,
                &item.patch,
                &item.head,
                &item.options,
                &item.trace,
            ]
        })
        .flatten()
        .flat_map(|op| op.responses.responses.values())
        .filter_map(|r| match r {
            RefOr::Ref(r) => r
                .ref_location
                .strip_prefix("#/components/responses/")
                .map(str::to_string),
            RefOr::T(_) => None,
        })
        .collect();
    if let Some(components) = doc.components.as_mut() {
        for (_, name, _) in ERRORS {
            if !used.contains(name) {
                components.responses.remove(name);
            }
        }
    }
}

/// Builds a small, fixed part of the document from its JSON.
fn from_json<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("a valid OpenAPI fragment")
}

fn add_components(doc: &mut OpenApi) {
    let components = doc.components.get_or_insert_with(Default::default);
    components.security_schemes.insert(
        "bearer".to_string(),
        RefOr::T(from_json::<SecurityScheme>(json!({
            "type": "http",
            "scheme": "bearer",
            "description": "A Cairn token: `Authorization: Bearer <token>`"
        }))),
    );
    components.security_schemes.insert(
        "apiKey".to_string(),
        RefOr::T(from_json::<SecurityScheme>(json!({
            "type": "apiKey",
            "in": "header",
            "name": "X-Api-Key",
            "description": "The same token in `X-Api-Key` (claude-mem's server clients send it so)"
        }))),
    );
    for (status, name, description) in ERRORS {
        let mut response = json!({
            "description": description,
            "content": {"application/json": {"schema": {"$ref": ERROR_BODY}}}
        });
        if status == "429" {
            response["headers"] = json!({"Retry-After": {
                "description": "Seconds until a request may succeed",
                "schema": {"type": "integer", "minimum": 0}
            }});
        }
        components
            .responses
            .insert(name.to_string(), RefOr::T(from_json::<Response>(response)));
    }
}

fn complete_operation(op: &mut Operation) {
    let secured = with_api_key(op);
    let parameters_in = |place: ParameterIn| {
        op.parameters
            .iter()
            .flatten()
            .any(|p| matches!(p, RefOr::T(p) if std::mem::discriminant(&p.parameter_in) == std::mem::discriminant(&place)))
    };
    let has_path_param = parameters_in(ParameterIn::Path);
    let has_body = op.request_body.is_some();
    let has_input = has_path_param || parameters_in(ParameterIn::Query) || has_body;
    let json_body = op
        .request_body
        .as_ref()
        .is_some_and(|b| matches!(b, RefOr::T(b) if b.content.contains_key("application/json")));
    let responses = &mut op.responses.responses;
    for (status, name, _) in ERRORS {
        let applies = match status {
            "401" | "403" => secured,
            // The per-address rate limit is checked on every request.
            "429" => true,
            "400" => has_input,
            "404" => has_path_param,
            "413" => has_body,
            "422" => json_body,
            _ => false,
        };
        if applies && !responses.contains_key(status) {
            responses.insert(status.to_string(), RefOr::Ref(Ref::from_response_name(name)));
        }
    }
    for (status, response) in responses.iter_mut() {
        if let RefOr::T(response) = response {
            describe(status, response);
        }
    }
}

/// Offers `X-Api-Key` wherever a bearer token is accepted; marks an operation
/// that needs no credential with an explicit empty `security`. True when the
/// operation needs (or accepts) a credential.
fn with_api_key(op: &mut Operation) -> bool {
    let Some(requirements) = op.security.take() else {
        op.security = Some(vec![]);
        return false;
    };
    let mut out = vec![];
    let mut secured = false;
    for requirement in requirements {
        let named = serde_json::to_value(&requirement).unwrap_or_default();
        secured |= named.as_object().is_some_and(|r| !r.is_empty());
        let bearer_scopes = named
            .get("bearer")
            .and_then(|s| serde_json::from_value::<Vec<String>>(s.clone()).ok());
        out.push(requirement);
        if let Some(scopes) = bearer_scopes {
            out.push(SecurityRequirement::new("apiKey", scopes));
        }
    }
    op.security = Some(out);
    secured
}

/// A response without a `description` gets its status's reason phrase.
fn describe(status: &str, response: &mut Response) {
    if response.description.is_empty() {
        response.description = status
            .parse::<u16>()
            .ok()
            .and_then(|c| axum::http::StatusCode::from_u16(c).ok())
            .and_then(|c| c.canonical_reason())
            .unwrap_or("Response")
            .to_string();
    }
}
