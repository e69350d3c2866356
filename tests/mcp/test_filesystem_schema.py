"""The drop-in's tools against the reference filesystem server's own: both servers
started for real and asked `tools/list` through the official MCP SDK client; the tool
names, each tool's required parameters, its parameter names and their JSON types must
agree (readkeeper may add optional parameters, each listed here on purpose).

The reference server is the npm package pinned in tests/filesystem_server/ (.ci/run and
tests/run install it); without it (or without node) the test skips with the reason, and
fails in CI (READKEEPER_NO_SKIP=1).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from mcp_helpers import mcp_env, private_runtime_dir, stdio_client

REFERENCE = (
    Path(__file__).resolve().parent.parent
    / "filesystem_server/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
)
# Optional parameters of readkeeper's own: the way on after a cut read, the text again
# instead of a stub, a PDF's pages (one too long to read whole needs them), one symbol
# of an outline, a notebook's images; the pages drawn sent again instead of a stub.
_READ_OWN = {"offset", "force", "pages", "symbol", "include_images"}
EXTRA: dict[str, set[str]] = {
    "read_file": _READ_OWN,
    "read_text_file": _READ_OWN,
    "read_media_file": {"pages", "force"},
}


async def _reference_tools(root: Path) -> dict[str, Any]:
    node = shutil.which("node")
    if node is None or not REFERENCE.exists():
        pytest.skip(
            "the reference MCP filesystem server is not installed: no node, or "
            "tests/filesystem_server/node_modules is missing (cd tests/filesystem_server && npm ci)"
        )
    params = StdioServerParameters(command=node, args=[str(REFERENCE), str(root)])
    async with Client(params, read_timeout_seconds=60) as client:
        return {tool.name: tool for tool in (await client.list_tools()).tools}


def _shape(schema: dict[str, Any]) -> tuple[set[str], set[str], dict[str, Any]]:
    properties = schema.get("properties") or {}
    return set(properties), set(schema.get("required") or []), properties


@pytest.mark.ci_required
async def test_the_drop_in_lists_the_reference_servers_tools_and_parameters(
    workspace: Path,
) -> None:
    reference = await _reference_tools(workspace)
    env = mcp_env(private_runtime_dir())
    args = ["--tools", "filesystem", "--standalone", "--root", str(workspace)]
    async with stdio_client(args, env) as client:
        ours = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert len(reference) == 14
    assert set(ours) == set(reference)
    for name, theirs in reference.items():
        their_names, their_required, their_props = _shape(theirs.input_schema)
        our_names, our_required, our_props = _shape(ours[name].input_schema)
        assert our_required == their_required, name
        assert our_names - their_names == EXTRA.get(name, set()), name
        assert their_names <= our_names, name
        for param in their_names:
            assert our_props[param].get("type") == their_props[param].get("type"), (name, param)
            their_items = their_props[param].get("items") or {}
            our_items = our_props[param].get("items") or {}
            assert our_items.get("type") == their_items.get("type"), (name, param)
            if their_items.get("type") == "object":
                assert _shape(our_items)[:2] == _shape(their_items)[:2], (name, param)
        hints = theirs.annotations
        assert hints is not None
        assert ours[name].annotations is not None
        assert ours[name].annotations.read_only_hint == bool(hints.read_only_hint), name
