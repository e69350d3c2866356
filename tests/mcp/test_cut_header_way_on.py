"""A read cut at the token cap names the rest in its header as its note does: from the
next line, the offset alone; a read from there is cut at the cap in its turn, never
refused (round 32: followed as written it was refused `token_limit`; round 33: the limit
that fit, named instead, ended the way on, for a range asked for names no rest)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of


async def test_a_cut_reads_header_names_a_rest_that_is_not_refused(workspace: Path) -> None:
    (workspace / "mid.txt").write_text("".join(f"word{n} " * 12 + "\n" for n in range(2400)))
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        first = await client.call_tool("read", {"file_path": "mid.txt", "session": "H"})
        header = text_of(first).split("\n", 1)[0]
        found = re.search(r"the rest: the read tool with (\{.*\})$", header)
        assert found, header
        call = json.loads(found.group(1))
        assert call["session"] == "H"
        assert "limit" not in call, call
        rest = await client.call_tool("read", call)
        assert not rest.is_error, text_of(rest)
        assert f"word{call['offset'] - 1} " in text_of(rest)
        assert "the rest: the read tool with" in text_of(rest).split("\n", 1)[0]
