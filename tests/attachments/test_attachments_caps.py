"""Attachments as the design caps them: a mention at its own cap (8,192 tokens), never
twice, an environment line, and a diagnostics cut note that counts files right and
names a call that returns what was left out."""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any

from readkeeper import __version__
from readkeeper.core import Readkeeper
from readkeeper.protocol import AttachmentsParams, DiagnosticsParams, ReadParams, unstructure


def attach(core: Readkeeper, **params: Any) -> dict[str, Any]:
    return core.attachments(AttachmentsParams(**params))


def of_type(result: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [a for a in result["attachments"] if a["type"] == kind]


def big_log(path: Path, lines: int = 3000) -> Path:
    # Plain text (a source file this big would be answered with its outline).
    path.write_text(
        "".join(f"{i:05d} request served in {i % 97} ms by worker {i % 7}\n" for i in range(lines))
    )
    return path


def test_a_mentioned_file_is_cut_at_its_own_cap_with_the_read_that_continues(
    core: Readkeeper, workspace: Path
) -> None:
    big_log(workspace / "big.log")
    result = attach(core, types=["file"], mentions=["big.log"], budget_tokens=60_000)
    [item] = of_type(result, "file")
    assert item["truncated"] is True
    assert 7_000 < item["tokens"] <= 8_192
    assert 'Read the rest with the read tool with {"file_path": ' in item["content"]
    assert '"offset": ' in item["content"]
    # The agent holds only part of it: its next read of the file is the file, not a stub.
    again = unstructure(core.read(ReadParams(file_path="big.log")))
    assert again["type"] == "text"


def test_the_mention_cap_is_a_setting(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"mention_max_tokens": 1000})
    big_log(workspace / "big.log")
    [item] = of_type(attach(core, types=["file"], mentions=["big.log"]), "file")
    assert item["tokens"] <= 1000


def test_a_small_mention_is_whole_and_its_reread_stubs(core: Readkeeper, workspace: Path) -> None:
    (workspace / "small.py").write_text("x = 1\n")
    [item] = of_type(attach(core, types=["file"], mentions=["small.py"]), "file")
    assert item["truncated"] is False
    assert unstructure(core.read(ReadParams(file_path="small.py")))["type"] == "file_unchanged"


def test_a_memory_file_that_is_mentioned_is_attached_once(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text("# Rules\nRun the tests.\n")
    result = attach(core, types=["file", "memory"], mentions=["AGENTS.md"])
    sources = [a["source"] for a in result["attachments"]]
    assert sources.count(str(workspace / "AGENTS.md")) == 1
    assert [a["type"] for a in result["attachments"]] == ["file"]


def test_the_environment_is_attached_last_and_small(core: Readkeeper, workspace: Path) -> None:
    result = attach(core)
    [item] = of_type(result, "environment")
    assert item["tokens"] < 100
    assert item["priority"] == min(a["priority"] for a in result["attachments"])
    content = item["content"]
    assert platform.system() in content
    assert str(workspace) in content
    assert f"readkeeper {__version__}" in content
    # It is the first thing a tight budget drops.
    (workspace / "AGENTS.md").write_text("# Rules\nBe careful.\n")
    tight = attach(core, types=["memory", "environment"], budget_tokens=130)  # headers, summary
    assert [a["type"] for a in tight["attachments"]] == ["memory"]
    assert [d["type"] for d in tight["dropped"]] == ["environment"]


def _diagnostic(line: int) -> dict[str, Any]:
    return {
        "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 1}},
        "severity": 1,
        "message": f"problem number {line} " + "x" * 60,
        "source": "pyright",
    }


def test_the_diagnostics_cut_note_counts_files_and_its_call_returns_the_rest(
    workspace: Path,
) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"diagnostics_max_tokens": 600})
    path = workspace / "app.py"
    path.write_text("x = 1\n")
    items = [{"uri": path.as_uri(), "diagnostics": [_diagnostic(i) for i in range(150)]}]
    core.did_change_diagnostics(DiagnosticsParams(items=items))
    [first] = of_type(attach(core, types=["diagnostics"]), "diagnostics")
    shown = first["content"].count("problem number")
    assert 0 < shown < 150
    note = first["content"].splitlines()[-1]
    assert f"{150 - shown} more diagnostics in 1 file not shown" in note
    assert '"diagnostics_offset": ' in note
    offset = int(note.split('"diagnostics_offset": ')[1].split("}")[0])
    assert offset == shown
    [rest] = of_type(attach(core, types=["diagnostics"], diagnostics_offset=offset), "diagnostics")
    assert f"problem number {shown} " in rest["content"]
    assert f"problem number {shown - 1} " not in rest["content"]


def test_a_mentioned_big_source_file_is_its_outline_as_text(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"outline_over_tokens": 300})
    (workspace / "shop.py").write_text(
        "class Shop:\n"
        + "".join(f"    def item_{i}(self):\n        return {i}\n" for i in range(80))
    )
    [item] = of_type(attach(core, types=["file"], mentions=["shop.py"]), "file")
    assert isinstance(item["content"], str)
    assert "outline of 161 lines" in item["content"]
    assert "method item_79" in item["content"]
