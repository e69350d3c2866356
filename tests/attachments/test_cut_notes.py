"""Every cut attachment ends with a note that counts in the file's terms and names the call
that returns the rest, with parameters that call takes: the note is read as an agent
reads it, its call made, and the answer checked to continue where the cut stopped."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path
from typing import Any

from readkeeper.core import Readkeeper
from readkeeper.protocol import AttachmentsParams, ForgetParams, ReadParams, unstructure

TYPING = Path(typing.__file__).read_text(encoding="utf-8")
CALL = re.compile(r"the (read|attachments) tool with (\{.*?\})(?=[.,;\]]|$| or)")


def attach(core: Readkeeper, **params: Any) -> dict[str, Any]:
    return core.attachments(AttachmentsParams(**params))


def calls(note: str) -> list[tuple[str, dict[str, Any]]]:
    return [(tool, json.loads(args)) for tool, args in CALL.findall(note)]


def last_line(content: str) -> str:
    return content.rstrip().rsplit("\n", 1)[-1]


def test_a_cut_outline_says_how_far_it_reaches_in_the_file_and_how_to_read_on(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "typing.py").write_text(TYPING)
    total = len(TYPING.splitlines())
    for budget in (3000, 150):
        core.forget(ForgetParams())
        result = attach(core, budget_tokens=budget, types=["file"], mentions=["typing.py"])
        [item] = result["attachments"]
        assert item["truncated"] is True
        note = last_line(item["content"])
        assert f"of the file's {total:,}" in note or f"({total:,} lines)" in note
        found = calls(note)
        assert found, note
        for tool, args in found:
            assert tool == "read"
            if args.get("symbol") == "<name>":
                continue  # a placeholder the agent fills in
            answer = unstructure(core.read(ReadParams(**args)))
            assert answer["type"] in ("text", "outline")
            if "offset" in args:
                assert answer["file"]["start_line"] == args["offset"]


def test_a_cut_file_counts_the_files_lines_and_its_call_continues_it(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "big.log").write_text("".join(f"{i:05d} served\n" for i in range(1, 3001)))
    result = attach(core, budget_tokens=1000, types=["file"], mentions=["big.log"])
    [item] = result["attachments"]
    note = last_line(item["content"])
    shown = re.search(r"showing lines 1-(\d+) of the file's 3,000", note)
    assert shown, note
    [(tool, args)] = calls(note)
    assert tool == "read"
    assert args["offset"] == int(shown.group(1)) + 1
    rest = unstructure(core.read(ReadParams(**args)))
    assert rest["file"]["content"].split("\n")[0].endswith(f"{args['offset']:05d} served")


def test_every_attachment_note_names_a_call_every_front_end_takes(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text("".join(f"rule {i}\n" for i in range(400)))
    (workspace / "typing.py").write_text(TYPING)
    result = attach(core, budget_tokens=2000, mentions=["typing.py"])
    cut = [a for a in result["attachments"] if a["truncated"]]
    assert cut
    for item in cut:
        note = last_line(item["content"])
        assert "readkeeper/" not in note  # the LSP method: not the name of the MCP tool
        for tool, args in calls(note):
            if tool == "attachments":
                attach(core, **args)  # the attachments tool takes them
            elif args.get("symbol") != "<name>":
                core.read(ReadParams(**args))
