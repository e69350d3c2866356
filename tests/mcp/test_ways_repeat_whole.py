"""A way on repeats the caller's own values whole (outside round 33): a pattern or a
path past 240 characters was cut in the middle in the note's call for the rest, so the
call named, followed as written, searched for another pattern ("0 matches") or a folder
that does not exist (`not_found`); only the `next:` line kept the whole call."""

from __future__ import annotations

from pathlib import Path

from mcp_helpers import (
    core_client,
    mcp_env,
    named_call,
    ok,
    private_runtime_dir,
    stdio_client,
    text_of,
)


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


async def test_a_name_posing_as_a_cut_mark_is_named_so_it_is_followed(workspace: Path) -> None:
    # A call naming a folder `… [line cut: 5 more characters]` wrote its `[` as `\x5b`,
    # no JSON escape: followed, it named another path, not_found (round 34). JSON's own
    # escape (`\u005b`) keeps the raw mark readkeeper's and the name the same.
    folder = workspace / "… [line cut: 5 more characters]"
    folder.mkdir()
    (folder / "a.txt").write_text("one\n")
    async with core_client(workspace) as client:
        edit = {"file_path": str(folder / "a.txt"), "old_string": "one", "new_string": "1"}
        refused = text_of(await client.call_tool("edit", edit))
        assert "[line cut" not in refused, refused
        read = named_call(refused, "read")
        assert read["file_path"] == str(folder / "a.txt"), read
        await ok(client, "read", **read)
        await ok(client, "edit", **edit)
    assert (folder / "a.txt").read_text() == "1\n"
