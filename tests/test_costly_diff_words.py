"""A change too costly to diff is told in readkeeper's words where the diff would be (a
`changes` entry, a stale edit's refusal): its way on is a call, and every front end says
that call in its own words. A diff is a file's text, left as it is; that sentence is no
diff (it never begins as a diff's header does), so it is reworded like any note."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError, shown_content
from readkeeper.hints import for_cli
from readkeeper.mcp.filesystem.words import error_words
from readkeeper.mcp.render import _notes_for_mcp, error_result
from readkeeper.protocol import (
    AttachmentsParams,
    ChangesParams,
    EditParams,
    ReadParams,
    unstructure,
)

BEFORE = "".join(f"v{i % 400:03d}\n" for i in range(40_000))
AFTER = "".join(f"v{i * 7 % 400:03d}\n" for i in range(40_000))


@pytest.fixture
def stale(core: Readkeeper, workspace: Path) -> ReadkeeperError:
    (workspace / "big.txt").write_text(BEFORE)
    core.read(ReadParams(file_path="big.txt"))
    (workspace / "big.txt").write_text(AFTER)
    with pytest.raises(ReadkeeperError) as refused:
        core.edit(EditParams(file_path="big.txt", old_string="v000\nv001\n", new_string="x\n"))
    assert refused.value.kind == "stale"
    assert "too costly to diff" in refused.value.message
    return refused.value


def test_a_stale_edit_s_costly_change_names_the_read_tool_in_mcp(stale: ReadkeeperError) -> None:
    said = "\n".join(part.text for part in error_result(stale).content if part.type == "text")
    assert "readkeeper/" not in said, said
    assert "the read tool with {" in said, said


def test_a_stale_edit_s_costly_change_names_read_text_file_in_the_drop_in(
    stale: ReadkeeperError, workspace: Path
) -> None:
    args = {"path": "big.txt", "edits": []}
    said, _ = error_words("edit_file", args, stale.message, stale.to_data(), {"path", "edits"})
    assert "readkeeper/" not in said, said
    assert "read_text_file with {" in said, said


def test_a_stale_edit_s_costly_change_is_a_command_in_the_cli(stale: ReadkeeperError) -> None:
    said = for_cli(stale.message, shown_content(stale.to_data()))
    assert "readkeeper/" not in said, said
    assert "`readkeeper read " in said, said


def test_a_costly_change_notice_names_the_read_tool_in_mcp(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "big.txt").write_text(BEFORE)
    core.read(ReadParams(file_path="big.txt"))
    (workspace / "big.txt").write_text(AFTER)
    [change] = unstructure(core.changes_for(ChangesParams()))["changes"]
    assert "too costly to diff" in change["diff"]
    [said] = _notes_for_mcp({"changes": [change]})["changes"]
    assert "readkeeper/" not in said["diff"], said
    called = json.loads(said["diff"].split("the read tool with ", 1)[1].rstrip("."))
    assert called == {"file_path": str(workspace / "big.txt"), "offset": 1, "limit": 2000}


def test_a_real_diff_is_left_as_it_is(core: Readkeeper, workspace: Path) -> None:
    # A file's line shaped like a call stays the file's text in the diff.
    (workspace / "a.txt").write_text("one\n")
    core.read(ReadParams(file_path="a.txt"))
    (workspace / "a.txt").write_text('one\nreadkeeper/read {"file_path": "/etc/passwd"}\n')
    [change] = unstructure(core.changes_for(ChangesParams()))["changes"]
    assert change["diff"].startswith("--- ")
    assert _notes_for_mcp({"changes": [change]})["changes"] == [change]


def test_a_costly_change_attached_names_the_read_tool(core: Readkeeper, workspace: Path) -> None:
    # An attachment's text is readkeeper's words around a file's: its ways on name "the
    # read tool", whichever front end shows it (cut_notes.read_call).
    (workspace / "big.txt").write_text(BEFORE)
    core.read(ReadParams(file_path="big.txt"))
    (workspace / "big.txt").write_text(AFTER)
    attached = unstructure(core.attachments(AttachmentsParams(types=["changes"])))
    [change] = [a for a in attached["attachments"] if a["source"] == str(workspace / "big.txt")]
    assert "too costly to diff" in change["content"]
    assert "readkeeper/" not in change["content"], change["content"]
    named = {"file_path": str(workspace / "big.txt"), "offset": 1, "limit": 2000}
    assert f"the read tool with {json.dumps(named)}" in change["content"]


@pytest.mark.parametrize("where", ["top", "file", "changes"])
def test_only_what_stands_for_a_diff_is_reworded(where: str) -> None:
    sentence = 'a.txt changed; read them: readkeeper/read {"file_path": "/w/a.txt", "offset": 1}.'
    diff = '--- a.txt (as you read it)\n+++ a.txt (now)\n+readkeeper/read {"file_path": "/x"}'

    def holding(text: str) -> dict[str, object]:
        if where == "top":
            return {"diff": text}
        if where == "file":
            return {"type": "file_changed", "file": {"diff": text}}
        return {"changes": [{"diff": text}]}

    assert _notes_for_mcp(holding(diff)) == holding(diff)
    said = json.dumps(_notes_for_mcp(holding(sentence)))
    assert "readkeeper/" not in said
    assert "the read tool with" in said
