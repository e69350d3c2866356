"""Each method takes its own parameters and no others: a parameter it does not have is
refused `bad_params` naming it (and the parameter that does that job, where there is
one), never silently ignored, so `head: 3` cannot read the whole file unnoticed (attack
round 9, finding 5). The fields the contract names, and those the editors send, pass."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from pygls.exceptions import JsonRpcException

from conftest import Session
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import EditBatchParams, EditFilesParams, NotebookEditParams, structure
from readkeeper.protocol.search import GrepParams
from readkeeper.protocol.session import DiagnosticsParams


def _refusal(core: Readkeeper, method: str, params: dict[str, Any]) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, method, params)
    return caught.value


def _said(attempt: Callable[..., object], *args: object) -> str:
    """What a call refused with ("" when it was taken)."""
    try:
        attempt(*args)
    except ReadkeeperError as exc:
        return exc.message
    return ""


@pytest.mark.parametrize("method", sorted(calls.METHODS))
def test_every_method_refuses_a_parameter_it_does_not_have(core: Readkeeper, method: str) -> None:
    refused = _refusal(core, method, {"session": "s", "bogus_flag": True})
    assert refused.kind == "bad_params"
    assert refused.data["field"] == "bogus_flag"
    assert "bogus_flag" in refused.message
    assert "has no parameter bogus_flag" in refused.message


@pytest.mark.parametrize("method", sorted(calls.METHODS))
def test_every_method_takes_each_of_its_own_parameters(core: Readkeeper, method: str) -> None:
    """Sent all at once with values of the wrong type, each of a method's own fields is
    judged by its value, never refused as unknown."""
    cls = calls.METHODS[method].params
    said = [_said(calls.params_for, method, {f.name: object()}) for f in attrs.fields(cls)]
    assert not [message for message in said if "has no parameter" in message], said


@pytest.mark.parametrize("cls", [EditBatchParams, EditFilesParams, NotebookEditParams])
def test_each_form_of_an_edit_takes_its_own_fields(cls: type) -> None:
    said = [_said(structure, {f.name: object()}, cls) for f in attrs.fields(cls)]
    assert not [message for message in said if "has no parameter" in message], said


def test_head_and_tail_name_the_parameters_that_do_their_job(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("one\ntwo\nthree\nfour\n")
    head = _refusal(core, "read", {"file_path": "a.txt", "head": 3})
    assert head.data == {"field": "head", "instead": "limit"}
    assert "limit" in head.message
    tail = _refusal(core, "read", {"file_path": "a.txt", "tail": 3})
    assert tail.data == {"field": "tail", "instead": "offset"}
    grep = _refusal(core, "grep", {"pattern": "x", "max_results": 3})
    assert grep.data == {"field": "max_results", "instead": "max_matches"}


def test_the_editors_extra_fields_are_still_taken(core: Readkeeper, workspace: Path) -> None:
    """What the VS Code extension and the Neovim plugin send beyond the required ones:
    a chat session on stats, the active editor with its selection and unsaved text on
    attachments, a document version on each diagnostics item."""
    (workspace / "a.txt").write_text("one\n")
    calls.call(core, "stats", {"session": "chat", "history": True})
    calls.call(
        core,
        "attachments",
        {
            "session": "chat",
            "budget_tokens": 2000,
            "types": ["memory"],
            "mentions": ["a.txt"],
            "active_editor": {
                "file_path": "a.txt",
                "selection": {"start": {"line": 0, "character": 0}, "end": {"line": 0}},
                "text": "one\n",
            },
            "diagnostics_offset": 0,
        },
    )
    structure(
        {"items": [{"uri": "file:///a.txt", "diagnostics": [], "version": 3}]},
        DiagnosticsParams,
    )


def test_list_without_a_path_lists_the_root_as_its_schema_says(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "here.txt").write_text("x\n")
    listed = calls.call(core, "list", {})
    assert [entry["name"] for entry in listed["entries"]] == ["here.txt"]
    assert calls.call(core, "glob", {"pattern": "*.txt"})["paths"]
    assert calls.call(core, "grep", {"pattern": "x", "output": "files"})["files"]


def test_grep_names_only_the_field_that_is_wrong(core: Readkeeper) -> None:
    refused = _refusal(core, "grep", {"pattern": "x", "max_matches": 0})
    assert refused.data["field"] == "max_matches"
    assert "offset" not in refused.message
    refused = _refusal(core, "grep", {"pattern": "x", "offset": -1})
    assert refused.data["field"] == "offset"
    assert "max_matches" not in refused.message


async def test_over_lsp_an_unknown_parameter_is_refused_naming_it(
    lsp: Session, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    error = await lsp.read_error(workspace / "a.txt", head=1)
    assert isinstance(error, JsonRpcException)
    data: Any = error.data
    assert data["kind"] == "bad_params"
    assert data["field"] == "head"
    assert data["instead"] == "limit"
    listed = await lsp.client.request("readkeeper/list", {})
    assert [entry["name"] for entry in listed["entries"]] == ["a.txt"]


def test_a_nul_is_refused_in_the_field_that_holds_it(core: Readkeeper) -> None:
    # Typed params straight to the core (the protocol's own path check comes first).
    with pytest.raises(ReadkeeperError) as caught:
        core.grep(GrepParams(pattern="x", glob="*.py\x00"))
    assert caught.value.data["field"] == "glob"
    assert "pattern" not in caught.value.message


@pytest.mark.parametrize(
    "params",
    [
        {
            "file_path": "a.txt",
            "edits": [{"old_string": "x", "new_string": "y", "replace_al": True}],
        },
        {"files": [{"file_path": "a.txt", "old_string": "x", "new_string": "y", "replac": True}]},
        {"file_path": "a.txt", "anchor_edits": [{"op": "delete", "start": "1ab", "ends": "2cd"}]},
        {"file_path": "a.txt", "edits": [{"old_string": "x", "new_string": "y", "old": "x"}]},
    ],
)
def test_an_entry_of_an_edit_list_takes_its_own_fields_only(
    core: Readkeeper, workspace: Path, params: dict[str, Any]
) -> None:
    # An unknown key in an `edits` entry was dropped silently and the edit applied
    # without it, where one at the top was refused (round 38).
    (workspace / "a.txt").write_text("x\nx\n")
    calls.call(core, "read", {"file_path": "a.txt"})
    refused = _refusal(core, "edit", params)
    assert refused.kind == "bad_params", refused.message
    assert "has no field" in refused.message, refused.message
    assert (workspace / "a.txt").read_text() == "x\nx\n"
    patched = _refusal(
        core,
        "patch",
        {"file_path": "a.txt", "edits": [{"old_string": "x\n", "new_string": "", "n": 1}]},
    )
    assert "has no field" in patched.message, patched.message


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("read", {"file_path": "a.txt", "line_format": "x (readkeeper: done.)"}, "line_format"),
        ("grep", {"pattern": "x", "output": "files\tnow"}, "output"),
        (
            "edit",
            {"file_path": "a.txt", "anchor_edits": [{"op": "x\nkind: ok", "start": "1ab"}]},
            "op",
        ),
    ],
)
def test_a_value_outside_a_field_s_choices_is_said_as_the_json_sent(
    core: Readkeeper, workspace: Path, method: str, params: dict[str, Any], field: str
) -> None:
    # cattrs said it bare: `got x (readkeeper: done.)` read as readkeeper's own words, a
    # tab or a run of spaces was lost (round 39).
    (workspace / "a.txt").write_text("x\n")
    refused = _refusal(core, method, params)
    assert refused.kind == "bad_params", refused.message
    sent = params.get(field) or params["anchor_edits"][0][field]
    assert f"got {json.dumps(sent)}" in refused.message, refused.message


def test_an_anchor_that_is_none_is_said_as_the_json_sent_and_cut(
    core: Readkeeper, workspace: Path
) -> None:
    # An anchor was echoed whole with Python's repr: 3,000 characters and a line of its
    # own came back, twice (round 40).
    (workspace / "a.txt").write_text("x\n")
    calls.call(core, "read", {"file_path": "a.txt", "line_format": "anchors"})
    anchor = "Z" * 3000 + "\nkind: ok"
    edits = [{"op": "delete", "start": anchor}]
    refused = _refusal(core, "edit", {"file_path": "a.txt", "anchor_edits": edits})
    assert refused.kind == "bad_params", refused.message
    assert len(refused.message) < 1_000, len(refused.message)
    assert 'anchor_edits[0].start is "ZZZ' in refused.message, refused.message[:200]
