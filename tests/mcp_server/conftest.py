"""The real ``mcp`` client over stdio against ``nous mcp`` serving the backfilled shared corpus.

One server process per test session (started the way Claude Code starts it: this interpreter with
``-I -m nous_assets.cli mcp --data-dir DIR``), driven from synchronous tests through an anyio blocking
portal that keeps the client session open in its own event loop.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest

GOLD = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "gold" / "gold-dev.jsonl"
SERVER_ARGS = ["-I", "-m", "nous_assets.cli", "mcp"]


@asynccontextmanager
async def _session(params: Any, errlog: Any) -> AsyncIterator[Any]:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


class SyncClient:
    """A connected MCP client session, called from synchronous code."""

    def __init__(self, portal: Any, session: Any) -> None:
        self.portal, self.session = portal, session

    def tools(self) -> list[Any]:
        return self.portal.call(self.session.list_tools).tools

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        return self.portal.call(self.session.call_tool, name, arguments)

    def answer(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A successful call's answer, parsed from the text Claude reads (and equal to the structured content)."""
        result = self.call(name, arguments)
        assert not result.is_error, result.content[0].text
        parsed = json.loads(result.content[0].text)
        assert parsed == result.structured_content
        return parsed


@contextmanager
def mcp_client(data_dir: Path, env: dict[str, str], log: Path) -> Iterator[SyncClient]:
    """``nous mcp --data-dir data_dir`` started by the SDK's stdio client with ``env``; stderr goes to ``log``."""
    import anyio.from_thread
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[*SERVER_ARGS, "--data-dir", str(data_dir)], env=env)
    with (
        log.open("w") as errlog,
        anyio.from_thread.start_blocking_portal() as portal,
        portal.wrap_async_context_manager(_session(params, errlog)) as session,
    ):
        yield SyncClient(portal, session)


@pytest.fixture(scope="session")
def start_server():
    """:func:`mcp_client`, for tests that need a server of their own."""
    return mcp_client


@pytest.fixture(scope="session")
def corpus_client(corpus_pipeline, tmp_path_factory) -> Iterator[SyncClient]:
    """One server on the backfilled corpus. Its environment names another data dir on purpose: the one
    recorded in the command (as `nous mcp install` writes it) must win."""
    env = {**corpus_pipeline.env, "NOUS_DATA_DIR": str(tmp_path_factory.mktemp("not-the-data-dir"))}
    env.pop("NOUS_PROJECT_GLOB")
    log = tmp_path_factory.mktemp("mcp-server") / "stderr.log"
    with mcp_client(Path(corpus_pipeline.env["NOUS_DATA_DIR"]), env, log) as client:
        client.log = log  # type: ignore[attr-defined]
        yield client


@pytest.fixture(scope="session")
def gold() -> dict[str, dict[str, Any]]:
    """The hand-made gold learnings of the shared transcripts, by id."""
    if not GOLD.is_file():
        pytest.skip(f"{GOLD} is not present")
    entries = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {entry["id"]: entry for entry in entries}

