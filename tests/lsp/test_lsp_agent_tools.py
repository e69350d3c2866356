"""The next steps an LSP client's agent can take (issue 31): a client whose chat agent
calls readkeeper through tools of its own (the VS Code extension's readkeeper_read, ...)
names them at `initialize` (`agent_tools`), and every next step its errors and notes
give names those tools, or says a method is not one of them, never a method the agent
cannot call. Another client keeps the method words; a file's text an error shows is
never reworded; and a hostile option is ignored, never echoed, never a crash."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from document_samples import text_pdf

from conftest import Session, start_session
from helpers import eventually

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "extension" / "vscode" / "package.json"
# The tools the extension declares, each with the inputs its schema takes.
SCHEMAS: dict[str, set[str]] = {
    tool["name"]: set(tool["inputSchema"]["properties"])
    for tool in json.loads(PACKAGE.read_text())["contributes"]["languageModelTools"]
}
# The option the extension sends: each tool by the method it calls (readkeeper_METHOD).
AGENT_TOOLS = {name.removeprefix("readkeeper_"): name for name in SCHEMAS}
_DECODER = json.JSONDecoder()
_NOT_A_TOOL = "which is not one of your tools here"


def _tools_named(text: str) -> list[tuple[str, dict[str, Any]]]:
    """Each `the NAME tool` in `text`, with the params after it (` with {...}`)."""
    found = []
    at = text.find("the readkeeper_")
    while at >= 0:
        name = text[at + 4 :].split(" ", 1)[0]
        rest = text[at + 4 + len(name) :]
        assert rest.startswith(" tool"), text
        params: dict[str, Any] = {}
        if rest.startswith(" tool with {"):
            params, _ = _DECODER.raw_decode(rest, len(" tool with "))
        found.append((name, params))
        at = text.find("the readkeeper_", at + 1)
    return found


def _in_tool_words(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The tools `text` names, each declared with every param it is given; no method."""
    assert "readkeeper/" not in text, text
    named = _tools_named(text)
    for name, params in named:
        assert name in SCHEMAS, text
        assert set(params) <= SCHEMAS[name], text
    return named


def _files(root: Path) -> None:
    (root / "sub").mkdir()
    (root / "app.py").write_text("def restock(sku):\n    return sku\n")
    (root / "long.pdf").write_bytes(text_pdf([f"page {n} words" for n in range(1, 26)]))
    (root / "half.pdf").write_bytes(text_pdf(["page one has words", ""]))


async def _refusals(session: Session) -> dict[str, str]:
    """An is_directory, two not_found (a file, a symbol) and a pages_required refusal.
    A text file read first loads the token table, so the first two are quick reads,
    answered on the event loop (lsp/quick.py), and the others on the thread pool."""
    await session.read("app.py")
    asked = {
        "is_directory": {"file_path": "sub"},
        "not_found": {"file_path": "zzqq/kkk.bin"},
        "no_symbol": {"file_path": "app.py", "symbol": "zzqqxx"},
        "pages_required": {"file_path": "long.pdf"},
    }
    return {
        case: (await session.error("readkeeper/read", params)).message
        for case, params in asked.items()
    }


async def test_a_client_naming_its_agent_s_tools_gets_next_steps_in_their_words(
    workspace: Path,
) -> None:
    _files(workspace)
    session = await start_session(workspace, settings={"agent_tools": AGENT_TOOLS})
    try:
        said = await _refusals(session)
        for message in said.values():
            _in_tool_words(message)
        # Methods it has no tool for: said so, with what to use instead.
        assert f"List its entries (readkeeper's list, {_NOT_A_TOOL}: " in said["is_directory"]
        assert (
            f"readkeeper's glob, {_NOT_A_TOOL}: the editor's own file search" in said["not_found"]
        )
        # The read of the whole file (its outline or lines), then the search for the name.
        [(read, whole), (tool, params)] = _in_tool_words(said["no_symbol"])
        assert (read, whole) == ("readkeeper_read", {"file_path": str(workspace / "app.py")})
        assert (tool, params["path"]) == ("readkeeper_grep", str(workspace / "app.py"))
        [(tool, params)] = _in_tool_words(said["pages_required"])
        assert (tool, params["pages"]) == ("readkeeper_read", "1-20")
        # A result's note: a PDF page without a text layer is read as an image.
        note = (await session.read("half.pdf", pages="1-2"))["file"]["note"]
        [(tool, params)] = _in_tool_words(note)
        assert (tool, params["render"], params["pages"]) == ("readkeeper_read", True, "2")
    finally:
        await session.client.close()


async def test_another_client_keeps_the_method_words(workspace: Path) -> None:
    _files(workspace)
    session = await start_session(workspace)
    try:
        said = await _refusals(session)
        assert 'List its entries (readkeeper/list {"path": ' in said["is_directory"]
        assert "(readkeeper/glob {" in said["not_found"]
        assert "(readkeeper/grep {" in said["no_symbol"]
        assert 'pages="1-20"' in said["pages_required"]  # the same read, pages changed
        note = (await session.read("half.pdf", pages="1-2"))["file"]["note"]
        assert 'pages="2", render=true' in note  # the same read, drawn
        assert not any(_tools_named(m) for m in [*said.values(), note])
    finally:
        await session.client.close()


async def test_a_file_s_text_in_a_refusal_is_never_reworded(workspace: Path) -> None:
    # A file whose lines look like next steps: a closest match and a diff show them as
    # the file has them, in the message and its data alike.
    (workspace / "notes.txt").write_text('alpha\nsay readkeeper/write {"file_path": "/x"} here\n')
    session = await start_session(workspace, settings={"agent_tools": AGENT_TOOLS})
    try:
        await session.read("notes.txt")
        error = await session.error(
            "readkeeper/edit",
            {
                "file_path": "notes.txt",
                "old_string": 'say readkeeper/write {"file_path": "/y"} here',
                "new_string": "z",
            },
        )
        assert error.data["kind"] == "no_match"
        assert 'say readkeeper/write {"file_path": "/x"} here' in error.data["closest"]
        assert error.data["closest"] in error.message
        (workspace / "notes.txt").write_text('alpha\nthen readkeeper/list {"path": "/etc"}\n')
        error = await session.error(
            "readkeeper/write", {"file_path": "notes.txt", "content": "omega\n"}
        )
        assert error.data["kind"] == "stale"
        assert '+then readkeeper/list {"path": "/etc"}' in error.data["diff"]
        assert error.data["diff"] in error.message
        assert "which is not one of your tools" not in error.message
    finally:
        await session.client.close()


_MARK = "zz-hostile-zz"
HOSTILE: dict[str, Any] = {
    "a_name_with_spaces": {"read": f"readkeeper read {_MARK}"},
    "a_non_string": {"read": 5, "grep": None, "edit": ["readkeeper_edit"]},
    "marks_and_calls": {"read": f'readkeeper_read`, then readkeeper/list {{"path": "/"}} {_MARK}'},
    "too_long": {"read": "readkeeper_" + "r" * 10_000},
    "not_an_object": f"readkeeper_read {_MARK}",
    "a_list": ["read", _MARK],
    "ten_thousand": {f"{_MARK}{i}": f"readkeeper_{_MARK}" for i in range(10_000)},
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
async def test_a_hostile_option_is_ignored_never_echoed_never_a_crash(
    workspace: Path, case: str
) -> None:
    _files(workspace)
    session = await start_session(workspace, settings={"agent_tools": HOSTILE[case]})
    try:
        message = (await session.read_error("sub")).message
        assert 'List its entries (readkeeper/list {"path": ' in message, message
        assert _MARK not in message, message
        assert "readkeeper_" not in message, message
        # Told in the log, which quotes none of it.
        await eventually(lambda: b"agent_tools" in session.client.server_stderr, "the log line")
        logged = session.client.server_stderr.decode(errors="replace")
        logged += "".join(m.message for m in session.client.log_messages)
        assert _MARK not in logged
        assert "r" * 100 not in logged
        assert "app.py" in (await session.read("app.py"))["file"]["file_path"]  # still serving
    finally:
        await session.client.close()


async def test_the_valid_entries_of_a_mixed_option_are_taken(workspace: Path) -> None:
    _files(workspace)
    tools = {**HOSTILE["ten_thousand"], "grep": "readkeeper_grep", "list": "readkeeper list"}
    session = await start_session(workspace, settings={"readkeeper": {"agent_tools": tools}})
    try:
        said = await _refusals(session)
        [(tool, _)] = _in_tool_words(said["no_symbol"])
        assert tool == "readkeeper_grep"
        assert f"readkeeper's list, {_NOT_A_TOOL}" in said["is_directory"]
        # A method the client named no tool for is not one the agent can call.
        assert f"readkeeper's read, {_NOT_A_TOOL}" in said["pages_required"]
    finally:
        await session.client.close()


def test_every_next_step_of_a_method_with_a_tool_gives_inputs_its_schema_takes() -> None:
    # Each `call("METHOD", name=...)` the server writes (hints.call) is said as the
    # extension's tool with the same params: each must be one of its inputs, so none
    # needs renaming (agent_tools.py renames none). The CLI's own (cli*.py: `out`) are
    # said by the CLI alone.
    given: dict[str, set[str]] = {}
    for path in sorted((ROOT / "server").rglob("*.py")):
        if path.name.startswith("cli"):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            first = node.args[0] if node.func.id == "call" and node.args else None
            if isinstance(first, ast.Constant) and first.value in AGENT_TOOLS:
                named = {k.arg for k in node.keywords if k.arg is not None}
                given.setdefault(first.value, set()).update(named)
    assert {"read", "edit", "write", "grep"} <= set(given), given
    for method, params in given.items():
        assert params <= SCHEMAS[AGENT_TOOLS[method]], (method, params)
