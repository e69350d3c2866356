"""Every error's next step names a call its own front end offers (issue 31; attack
round 16): each error kind provoked through the core, then said as each front end says
it (LSP as written, MCP's core tools by hints.for_mcp, the `--tools filesystem`
drop-in by its error_words, the CLI by hints.for_cli), and every call it names checked
against that front end: a method it serves, a tool it lists with parameters its schema
has, a command and flags its parser takes, params the core accepts (never bad_params);
a read-only call is made for real and must not be refused as bad_params or for the
same reason. No front end's words name a shell command, the LSP's `readkeeper/...` on
MCP or the CLI, an editor-only setting, or a `name=value` the CLI has no flag for."""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from document_samples import image_only_pdf, numbered_pdf

from helpers import names_a_shell_command
from readkeeper import calls
from readkeeper.cli import build_parser
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError, shown_content
from readkeeper.hints import for_cli, for_mcp
from readkeeper.lsp.methods import REQUESTS
from readkeeper.mcp.filesystem import tools as dropin
from readkeeper.mcp.filesystem.words import error_words
from readkeeper.mcp.tools import METHOD_TOOLS, TOOLS, input_schema

_DECODER = json.JSONDecoder()
# Words telling the agent to run a program, or naming a setting only an editor has.
_SHELL = re.compile(r"\bgit (?:config|commit|init)\b|run the command|`(?:qpdf|magick) ")
# The drop-in's tool for the method a provoked call used (None: the drop-in has none).
_DROPIN_TOOL = {
    "read": "read_text_file",
    "edit": "edit_file",
    "patch": "edit_file",
    "write": "write_file",
    "list": "list_directory",
    "glob": "search_files",
}
_READ_ONLY = {"read", "readMany", "list", "glob", "grep", "stat"}


def _files(root: Path) -> None:
    (root / "sub").mkdir()
    (root / "a.py").write_text("x = 1\nx = 1\ny = 2\n")
    (root / "notes.txt").write_text("alpha\nbeta\n")
    (root / "big.log").write_text("".join(f"line {i} lorem ipsum\n" for i in range(20_000)))
    wide = " ".join(f"w{i:04d}x" for i in range(120))
    (root / "wide.txt").write_text("".join(f"{i} {wide}\n" for i in range(2_000)))
    (root / "long.pdf").write_bytes(numbered_pdf(25, lines=2))
    (root / "scan.pdf").write_bytes(image_only_pdf(1))
    (root / "bin.dat").write_bytes(b"\x00\x01binary\x00" * 10)
    (root / "out").symlink_to("/etc/passwd")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")


def _read(core: Readkeeper, path: str) -> None:
    calls.call(core, "read", {"file_path": path, "force": True})


# (method, params, what to do first): one call per error kind and next step.
CASES: dict[str, tuple[str, dict[str, Any], Callable[[Readkeeper, Path], None] | None]] = {
    "not_found": ("read", {"file_path": "a.pyy"}, None),
    "is_directory": ("read", {"file_path": "sub"}, None),
    "too_large": ("read", {"file_path": "big.log"}, None),
    "too_large_wide": ("read", {"file_path": "wide.txt"}, None),
    "token_limit": ("read", {"file_path": "wide.txt", "offset": 1, "limit": 500}, None),
    "past_the_end": ("read", {"file_path": "a.py", "offset": 99}, None),
    "bad_choice": ("read", {"file_path": "a.py", "line_format": "bogus"}, None),
    "outside": ("read", {"file_path": "/etc/passwd"}, None),
    "link_out": ("read", {"file_path": "out"}, None),
    "pages_required": ("read", {"file_path": "long.pdf"}, None),
    "pages_past_end": ("read", {"file_path": "long.pdf", "pages": "70"}, None),
    "limit_on_pdf": ("read", {"file_path": "long.pdf", "limit": 5}, None),
    "pages_on_text": ("read", {"file_path": "a.py", "pages": "1"}, None),
    "no_text_layer": ("read", {"file_path": "scan.pdf", "pages": "1"}, None),
    "binary": ("read", {"file_path": "bin.dat"}, None),
    "not_read": ("edit", {"file_path": "notes.txt", "old_string": "a", "new_string": "b"}, None),
    "ambiguous": (
        "edit",
        {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"},
        lambda core, root: _read(core, "a.py"),
    ),
    "no_change": (
        "edit",
        {"file_path": "notes.txt", "old_string": "beta", "new_string": "beta"},
        lambda core, root: _read(core, "notes.txt"),
    ),
    "cell_id_on_py": (
        "edit",
        {"file_path": "a.py", "cell_id": "c1", "new_source": "x"},
        lambda core, root: _read(core, "a.py"),
    ),
    "patch_unread": (
        "patch",
        {"file_path": "a.py", "edits": [{"old_string": "x = 1", "new_string": "z"}]},
        None,
    ),
    "git_metadata": (
        "edit",
        {"file_path": ".git/config", "old_string": "core", "new_string": "x"},
        None,
    ),
    "head_name": ("write", {"file_path": "sub/HEAD", "content": "x"}, None),
    "write_outside": ("write", {"file_path": "/tmp/elsewhere.txt", "content": "x"}, None),
    "undo_created": (
        "undo",
        {},
        lambda core, root: calls.call(core, "write", {"file_path": "new.txt", "content": "x"}),
    ),
    "list_of_a_file": ("list", {"path": "a.py"}, None),
    "glob_in_a_file": ("glob", {"pattern": "*", "path": "a.py"}, None),
    "bad_regex": ("grep", {"pattern": "("}, None),
    "bad_output": ("grep", {"pattern": "x", "output": "weird"}, None),
}


# The lead's change (attack round 16, F2): a binary file's next step lists the file.
@pytest.fixture
def provoked(workspace: Path, core: Readkeeper) -> Readkeeper:
    _files(workspace)
    return core


def _error(core: Readkeeper, root: Path, case: str) -> tuple[str, ReadkeeperError]:
    method, params, before = CASES[case]
    if before is not None:
        before(core, root)
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, method, params)
    return method, caught.value


def _calls(text: str, head: str) -> list[tuple[str, dict[str, Any] | None]]:
    """Each call `head` (a regex with one group, the name) finds in `text`, with the
    JSON object of params right after it (" {...}" or " with {...}"), if any."""
    found: list[tuple[str, dict[str, Any] | None]] = []
    for match in re.finditer(head, text):
        rest = text[match.end() :]
        params = None
        for lead in (" with {", " {"):
            if rest.startswith(lead):
                params, _ = _DECODER.raw_decode(rest, len(lead) - 1)
                break
        found.append((match.group(1), params))
    return found


def _check_lsp(core: Readkeeper, message: str, error: ReadkeeperError) -> None:
    named = _calls(message, r"(?<![\w'])readkeeper/([A-Za-z]+)")
    for method, params in named:
        assert f"readkeeper/{method}" in REQUESTS, message
        calls.params_for(method, params or {})  # the core takes its params
        if method in _READ_ONLY and params:
            refused = _refusal(core, method, params)
            if refused is not None:  # a next step never refused for the same reason
                assert refused.kind != "bad_params", (message, refused.message)
                assert (refused.kind, refused.message) != (error.kind, error.message), message


def _refusal(core: Readkeeper, method: str, params: dict[str, Any]) -> ReadkeeperError | None:
    try:
        calls.call(core, method, params)
    except ReadkeeperError as exc:
        return exc
    return None


def _check_mcp(message: str, data: dict[str, Any]) -> None:
    said = for_mcp(message, METHOD_TOOLS, shown_content(data))
    assert "readkeeper/" not in said, said
    schemas = {spec.name: input_schema(spec)["properties"] for spec in TOOLS}
    for tool, params in _calls(said, r"\bthe (\w+) tool\b"):
        assert tool in schemas, said
        assert set(params or {}) <= set(schemas[tool]), said
    _no_other_front_end(said)


def _check_dropin(method: str, params: dict[str, Any], message: str, data: dict[str, Any]) -> None:
    tool = _DROPIN_TOOL.get(method)
    if tool is None:
        return
    args = {"path": params.get("file_path") or params.get("path")}
    properties = dropin.SCHEMAS[tool]["properties"]
    said, _ = error_words(tool, args, message, data, set(properties))
    tools = "|".join(sorted(dropin.SCHEMAS, key=len, reverse=True))
    for name, arguments in _calls(said, rf"\b({tools}) with\b"):
        assert set(arguments or {}) <= set(dropin.SCHEMAS[name]["properties"]), said
    for word in ("old_string", "new_string", "file_path", "limit=", "readkeeper/"):
        assert word not in said, said
    assert not said.startswith("limit "), said  # the field the agent gave is head
    _no_other_front_end(said)


def _check_cli(message: str, data: dict[str, Any]) -> None:
    said = for_cli(message, shown_content(data))
    assert "readkeeper/" not in said, said
    assert not re.search(r"\b(?:offset|limit|pages|render)=", said), said
    parser = build_parser()
    for command in re.findall(r"`(readkeeper [^`]*)`", said):
        parser.parse_args(shlex.split(command)[1:])  # exits (2) on a command it lacks
    _no_other_front_end(said)


def _no_other_front_end(said: str) -> None:
    assert not names_a_shell_command(said), said
    assert not _SHELL.search(said), said
    if "readkeeper.allowed_paths" in said:
        assert "READKEEPER_ALLOWED_PATHS" in said, said


@pytest.mark.parametrize(
    "case",
    [c for c in CASES],
)
def test_every_error_names_a_call_its_front_end_offers(
    provoked: Readkeeper, workspace: Path, case: str
) -> None:
    method, error = _error(provoked, workspace, case)
    message, data = error.message, error.to_data()
    _check_lsp(provoked, message, error)
    _check_mcp(message, data)
    _check_dropin(method, CASES[case][1], message, data)
    _check_cli(message, data)


# The kind a case must get where an earlier one was wrong (attack round 16).
KINDS = {
    "cell_id_on_py": "bad_params",  # was corrupt: "not valid JSON ... fix that line"
    "patch_unread": "not_read",  # was ambiguous_match, naming lines never read
    "bad_choice": "bad_params",
}


@pytest.mark.parametrize("case", sorted(KINDS))
def test_a_misuse_is_refused_for_what_it_is(
    provoked: Readkeeper, workspace: Path, case: str
) -> None:
    _, error = _error(provoked, workspace, case)
    assert error.kind == KINDS[case], error.message
    assert "typing." not in error.message  # no Python internals (Literal[...])
    assert "lines" not in error.to_data(), error.to_data()


def test_the_cases_cover_every_kind_a_next_step_is_written_for(
    provoked: Readkeeper, workspace: Path
) -> None:
    kinds = set()
    for case in CASES:
        kinds.add(_error(provoked, workspace, case)[1].kind)
    assert kinds >= {
        "not_found",
        "is_directory",
        "too_large",
        "token_limit",
        "bad_params",
        "outside_workspace",
        "pages_required",
        "unsupported",
        "binary",
        "not_read",
        "ambiguous_match",
        "no_change",
    }


def test_too_large_names_a_range_that_fits_the_token_cap(
    provoked: Readkeeper, workspace: Path
) -> None:
    """Attack round 16, F7: the range a too_large refusal names is read, not refused
    token_limit (2,000 lines of ~700 characters: 500 of them are far over the cap)."""
    _, error = _error(provoked, workspace, "too_large_wide")
    # The read just refused, its range changed (round 32: it was a call of the file alone,
    # the caller's session and line_format dropped).
    found = re.search(r"\(offset=1, limit=(\d+)\)", error.message)
    assert found is not None, error.message
    params = {"file_path": str(workspace / "wide.txt"), "offset": 1, "limit": int(found[1])}
    assert 0 < params["limit"] < 500
    result = calls.call(provoked, "read", params)
    assert result["file"]["num_lines"] == params["limit"]


def test_a_memory_file_too_large_to_hold_is_counted_in_lines(workspace: Path) -> None:
    """Attack round 16, F6: a 1.5 MB AGENTS.md cut at its line cap says how many lines the
    file has, not "200 of the file's 1,500,000 bytes"."""
    from readkeeper.attachments.memory import at_roots, items

    core = Readkeeper(roots=[str(workspace)])
    try:
        (workspace / "AGENTS.md").write_text("".join(f"rule {i:09d}\n" for i in range(100_000)))
        [item] = items(core.settings, at_roots(core.workspace))
        note = item.content.rsplit("\n", 1)[-1]  # type: ignore[union-attr]
        size = os.path.getsize(workspace / "AGENTS.md")
        assert f"of the file's 100,000 lines ({size:,} bytes)" in note, note
    finally:
        core.close()
