"""Drives `cairn mcp` over stdio with the official Python MCP SDK, in one protocol era.

usage: client.py legacy|modern stdio|http QUERY
  legacy  the `initialize` handshake (2025-11-25, the newest handshake revision)
  modern  `server/discover` (2026-07-28: no handshake, per-request metadata)
  stdio   `cairn mcp` (the binary's path in CAIRN_BIN), started as an agent does
  http    the API's own endpoint, CAIRN_URL + /v1/mcp, with the bearer token

CAIRN_URL and CAIRN_TOKEN come from the environment. Prints one JSON object: the negotiated revision,
the tool names, and the text and error flag of a `search` call and of a call to
an unknown tool. Any refusal by the SDK (a result it cannot parse) is an
exception: a non-zero exit with the traceback on stderr.
"""

import asyncio
import json
import os
import sys

from contextlib import asynccontextmanager

import httpx2
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


@asynccontextmanager
async def transport(kind: str):
    if kind == "stdio":
        server = StdioServerParameters(
            command=os.environ["CAIRN_BIN"],
            args=["mcp"],
            env={k: os.environ[k] for k in ("CAIRN_URL", "CAIRN_TOKEN")},
        )
        async with stdio_client(server) as streams:
            yield streams
    else:
        headers = {"Authorization": f"Bearer {os.environ['CAIRN_TOKEN']}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            url = os.environ["CAIRN_URL"].rstrip("/") + "/v1/mcp"
            async with streamable_http_client(url, http_client=http) as streams:
                yield streams


async def main(era: str, kind: str, query: str) -> None:
    async with transport(kind) as (read, write):
        async with ClientSession(read, write) as session:
            if era == "legacy":
                await session.initialize()
            else:
                await session.discover()
            tools = await session.list_tools()
            found = await session.call_tool("search", {"query": query})
            missing = await session.call_tool("timeline", {})
            asked = await session.call_tool("ask", {"question": query})
            print(
                json.dumps(
                    {
                        "protocolVersion": session.protocol_version,
                        "tools": sorted(t.name for t in tools.tools),
                        "search": {
                            "text": "\n".join(c.text for c in found.content if c.type == "text"),
                            "isError": bool(found.is_error),
                        },
                        "timeline": {
                            "text": "\n".join(c.text for c in missing.content if c.type == "text"),
                            "isError": bool(missing.is_error),
                        },
                        "ask": {
                            "text": "\n".join(c.text for c in asked.content if c.type == "text"),
                            "isError": bool(asked.is_error),
                        },
                    }
                )
            )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
