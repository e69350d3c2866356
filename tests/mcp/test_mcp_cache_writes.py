"""Over MCP, a first read's user-cache entry (its outline) waits for its answer
(files/cache_writes.py, issue 34) and is written all the same: the read-state after the
answer is what it was (a re-read is a stub, of the outline as of lines read after it),
and a new server's first read of the file is the same outline, from the entry the first
server wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp_helpers import call, mcp_env, private_runtime_dir, stdio_client

SOURCE = "".join(
    f"class Kept{i}:\n    def area(self, side):\n        return side * {i} + {i}\n\n\n"
    for i in range(900)
)


async def first_server(workspace: Path, cache: Path) -> dict[str, Any]:
    env = mcp_env(private_runtime_dir(), XDG_CACHE_HOME=str(cache))
    async with stdio_client(["--root", str(workspace)], env) as client:
        first = await call(client, "read", file_path="m.py")
        assert first["type"] == "outline", first
        again = await call(client, "read", file_path="m.py")
        assert again["type"] == "file_unchanged", again
        lines = await call(client, "read", file_path="m.py", offset=2251, limit=5)
        assert lines["type"] == "text", lines
        lines = await call(client, "read", file_path="m.py", offset=2251, limit=5)
        assert lines["type"] == "file_unchanged", lines
        stats = await call(client, "stats")
    assert stats["caches"]["outline"] == {"lookups": 1, "hits": 0}
    return first


async def test_a_first_reads_entries_are_written_after_its_answer(
    workspace: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    (workspace / "m.py").write_text(SOURCE)
    first = await first_server(workspace, cache)
    kinds = {entry.name.split("-")[0] for entry in (cache / "readkeeper").iterdir()}
    assert "outline" in kinds, kinds
    env = mcp_env(private_runtime_dir(), XDG_CACHE_HOME=str(cache))
    async with stdio_client(["--root", str(workspace)], env) as client:
        await call(client, "stats")
        restarted = await call(client, "read", file_path="m.py")
        stats = await call(client, "stats")
    assert restarted == first
    assert stats["caches"]["outline"] == {"lookups": 1, "hits": 1}
