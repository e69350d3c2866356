"""A way on repeats the caller's own values whole (outside round 33): a pattern or a
path past 240 characters was cut in the middle in the note's call for the rest, so the
call named, followed as written, searched for another pattern ("0 matches") or a folder
that does not exist (`not_found`); only the `next:` line kept the whole call."""

from __future__ import annotations

from pathlib import Path

from mcp_helpers import core_client, mcp_env, named_call, ok, private_runtime_dir, stdio_client


async def test_a_long_pattern_s_next_search_is_the_same_search(workspace: Path) -> None:
    (workspace / "a.txt").write_text("".join(f"{i} needle\n" for i in range(5)))
    pattern = (
        "|".join(f"zzqx{i:03}" for i in range(30))
        + "|needle|"
        + "|".join(f"zzqy{i:03}" for i in range(30))
    )
    assert len(pattern) > 300
    async with core_client(workspace) as client:
        shown = await ok(client, "grep", pattern=pattern, max_matches=1)
        rest = named_call(shown.split("(Showing")[-1], "grep")
        assert rest["pattern"] == pattern, rest
        more = await ok(client, "grep", **rest)
        assert "1 needle" in more, more[-300:]


async def test_a_long_folder_s_next_page_lists_that_folder(workspace: Path) -> None:
    deep = workspace
    for i in range(5):
        deep = deep / f"node_modules_pkg_{i:02}_{'x' * 50}"
    deep.mkdir(parents=True)
    for i in range(300):
        (deep / f"file_{i:04}.txt").write_text("x\n")
    folder = str(deep.relative_to(workspace))
    assert len(folder) > 240
    env = mcp_env(private_runtime_dir(), READKEEPER_MAX_TOKENS="2000")
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        for tool, asked in [
            ("list", {"path": folder}),
            ("glob", {"pattern": "*.txt", "path": folder}),
            ("grep", {"pattern": "x", "path": folder, "output": "files"}),
        ]:
            page = await ok(client, tool, **asked)
            rest = named_call(page.split("the rest")[-1], tool)
            assert rest["path"] == folder, (tool, rest)
            more = await ok(client, tool, **rest)
            assert "file_0" in more, (tool, more[:300])
