"""A client flow through the Python client openapi-python-client generated
from the committed openapi/openapi.json (package `cairn_client` on PYTHONPATH).

usage: flow.py BASE_URL PROJECT_ID INGEST_TOKEN ADMIN_TOKEN

Every call goes through the generated functions with
`raise_on_unexpected_status`: a status the document does not declare raises,
and a body the generated models cannot read (a required field missing, a
wrong type where the model converts) raises too. Each step checks the model it
got. Prints one JSON line of what it saw.
"""

import json
import sys
import uuid

from cairn_client import AuthenticatedClient
from cairn_client.api.admin import mint_token, revoke_token
from cairn_client.api.ingest import post_hook
from cairn_client.api.jobs import list_jobs
from cairn_client.api.memories import create_memory
from cairn_client.api.memory import post_search
from cairn_client.api.projects import whoami
from cairn_client.models import (
    ErrorBody,
    HookInput,
    HookOutput,
    JobList,
    MemoryResponse,
    MintedTokenResponse,
    NewMemoryInput,
    NewTokenInput,
    ObservationsResponse,
    SearchInput,
    TokenResponse,
    WhoAmI,
)


def client(base: str, token: str, api_key: bool = False) -> AuthenticatedClient:
    if api_key:
        return AuthenticatedClient(
            base_url=base, token=token, prefix="", auth_header_name="X-Api-Key",
            raise_on_unexpected_status=True,
        )
    return AuthenticatedClient(base_url=base, token=token, raise_on_unexpected_status=True)


def expect(response, model, status: int):
    assert response.status_code == status, (response.status_code, response.content)
    assert isinstance(response.parsed, model), (type(response.parsed), response.content)
    return response.parsed


def main(base: str, project_id: str, ingest_token: str, admin_token: str) -> None:
    seen: dict = {}
    ingest = client(base, ingest_token)
    admin = client(base, admin_token)

    me = expect(whoami.sync_detailed(client=ingest), WhoAmI, 200)
    seen["whoami"] = {"name": me.name, "scopes": list(me.scopes)}

    marker = f"generated client flow {uuid.uuid4().hex[:8]}"
    memory = expect(
        create_memory.sync_detailed(
            client=ingest,
            body=NewMemoryInput(project_id=project_id, content=f"Decided: {marker} keeps the contract"),
        ),
        MemoryResponse,
        201,
    )
    seen["memoryId"] = str(memory.memory.id)

    session = f"gen-{uuid.uuid4().hex[:8]}"
    start = expect(
        post_hook.sync_detailed(
            "claude-code",
            client=ingest,
            project=project_id,
            body=HookInput.from_dict({
                "session_id": session, "hook_event_name": "SessionStart",
                "cwd": "/work/app", "source": "startup",
                "transcript_path": "/tmp/t.jsonl",
            }),
            idempotency_key=f"{session}-start",
        ),
        HookOutput,
        200,
    )
    seen["sessionStart"] = {
        "hookEventName": start.hook_specific_output.hook_event_name,
        "additionalContext": start.hook_specific_output.additional_context,
    }
    prompt = expect(
        post_hook.sync_detailed(
            "claude-code",
            client=ingest,
            project=project_id,
            body=HookInput.from_dict({
                "session_id": session, "hook_event_name": "UserPromptSubmit",
                "cwd": "/work/app", "prompt": "what did we decide?",
            }),
        ),
        HookOutput,
        200,
    )
    seen["promptAnswer"] = prompt.to_dict()

    found = expect(
        post_search.sync_detailed(client=ingest, body=SearchInput(project_id=project_id, query=marker)),
        ObservationsResponse,
        200,
    )
    seen["searchIds"] = [str(o.id) for o in found.observations]

    jobs = expect(list_jobs.sync_detailed(client=ingest, limit=10), JobList, 200)
    seen["jobs"] = {"total": jobs.total, "listed": len(jobs.jobs)}

    minted = expect(
        mint_token.sync_detailed(
            client=admin,
            body=NewTokenInput(name="generated client", scopes=["read"], project_id=project_id),
        ),
        MintedTokenResponse,
        201,
    )
    fresh = client(base, minted.secret)
    keyed = client(base, minted.secret, api_key=True)
    seen["mintedWhoami"] = expect(whoami.sync_detailed(client=fresh), WhoAmI, 200).name
    seen["mintedWhoamiByApiKey"] = expect(whoami.sync_detailed(client=keyed), WhoAmI, 200).name
    revoked = expect(
        revoke_token.sync_detailed(minted.token.id, client=admin), TokenResponse, 200
    )
    seen["revokedAtEpoch"] = revoked.token.revoked_at_epoch
    refused = expect(whoami.sync_detailed(client=fresh), ErrorBody, 403)
    seen["afterRevoke"] = refused.error.code
    print(json.dumps(seen, default=str))


if __name__ == "__main__":
    main(*sys.argv[1:5])
