"""What the editor forwards reaches an attached agent only for files beneath the
workspace, by their real path (attack round 8, finding 12(c)): an editor's diagnostics
for /etc/shadow, for WS/../outside or for a link out of the workspace are not kept, and
a client's absurd position is clamped, never shown as line -4."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from test_mcp_attach import editor

from helpers import eventually
from mcp_helpers import call, mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper.attachments.diagnostics import DiagnosticsStore
from readkeeper.core import Readkeeper
from readkeeper.protocol import DiagnosticsParams


def problem(line: int, message: str, character: int = 0) -> dict[str, Any]:
    where = {"line": line, "character": character}
    return {"range": {"start": where, "end": where}, "message": message, "severity": 1}


def forged(workspace: Path, outside: Path) -> list[dict[str, Any]]:
    (workspace / "a.py").write_text("x = 1\ny = 2\n")
    (outside / "secret.txt").write_text("TOP SECRET\n")
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    dotdot = f"{workspace.as_uri()}/../{outside.name}/secret.txt"
    return [
        {"uri": (workspace / "a.py").as_uri(), "diagnostics": [problem(-5, "absurd", -1)]},
        {"uri": "file:///etc/shadow", "diagnostics": [problem(0, "etc diag")]},
        {"uri": (outside / "secret.txt").as_uri(), "diagnostics": [problem(0, "outside diag")]},
        {"uri": dotdot, "diagnostics": [problem(1, "dotdot diag")]},
        {"uri": (workspace / "link.txt").as_uri(), "diagnostics": [problem(0, "link diag")]},
    ]


def test_the_store_keeps_only_files_within_and_clamps_positions(tmp_path: Path) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    core = Readkeeper(roots=[str(workspace)])
    try:
        core.did_change_diagnostics(DiagnosticsParams(items=forged(workspace, outside)))
        kept = core.diagnostics.files()
        assert [entry.path for entry in kept] == [str(workspace / "a.py")]
        [only] = kept[0].items
        assert (only.line, only.character) == (0, 0)
        assert only.render(False).startswith("  1:1 error")
    finally:
        core.close()
    # The store alone, without a workspace to hold it to, still clamps.
    store = DiagnosticsStore()
    item = {"uri": "file:///w/a.py", "diagnostics": [problem(2**40, "far", -3)]}
    store.update([item])
    assert Counter(d.line for e in store.files() for d in e.items) == Counter([2**31 - 1])


async def test_an_attached_agent_is_told_of_no_file_beyond_the_workspace(
    tmp_path: Path,
) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    runtime = private_runtime_dir()
    lsp, _ = await editor(workspace, runtime)
    try:
        items = forged(workspace, outside)
        lsp.client.protocol.notify("readkeeper/didChangeDiagnostics", {"items": items})
        async with stdio_client(["--root", str(workspace)], mcp_env(runtime)) as client:
            assert (await call(client, "stats"))["mode"] == "attached"

            async def told() -> str:
                answer = await client.call_tool("attachments", {"types": ["diagnostics"]})
                return text_of(answer)

            async def listed() -> bool:
                return "absurd" in await told()

            await eventually(listed, "the editor's diagnostics to arrive")
            shown = await told()
            for leaked in ("etc diag", "outside diag", "dotdot diag", "link diag", "shadow"):
                assert leaked not in shown
            assert str(outside) not in shown
            assert "-4:" not in shown
            assert "1:1 error: absurd" in shown
    finally:
        await lsp.client.close()
