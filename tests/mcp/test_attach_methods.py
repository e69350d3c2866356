"""Every method an attached connection can call is held to its declared roots, in what
it opens and in every name its answer carries: one table of hostile params per method
of `calls.METHODS`, so a new method cannot be added without a scope decision."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from test_attach_scope import Raw
from test_mcp_attach import editor

from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper import calls
from readkeeper.attach import scope
from readkeeper.attach.listener import Listener
from readkeeper.errors import ReadkeeperError

SECRET = "TOPSECRET_OF_THE_EDITOR"

# Per method, the calls a narrow agent makes to reach beyond its roots: relative
# paths, the editor's root, "..", patterns and globs that would match outside.
HOSTILE: dict[str, list[dict[str, Any]]] = {
    "read": [{"file_path": "other.txt"}, {"file_path": "../other.txt"}],
    "readMany": [{"file_paths": ["in.txt", "../other.txt"]}, {"file_paths": ["AGENTS.md"]}],
    "edit": [
        {"file_path": "../other.txt", "old_string": "TOP", "new_string": "X"},
        # The editor's session has read other.txt: only the scope stands in the way.
        {
            "files": [{"file_path": "../other.txt", "old_string": SECRET, "new_string": "X"}],
            "session": "editor",
        },
    ],
    "undo": [{}, {"session": "editor"}],
    "write": [{"file_path": "../planted.txt", "content": "x\n"}],
    "forget": [{"paths": ["../other.txt"]}, {}],
    "attachments": [{}, {"mentions": ["../AGENTS.md"]}],
    "grep": [
        {"pattern": SECRET},
        {"pattern": SECRET, "path": "."},
        {"pattern": SECRET, "path": "{ws}"},
        {"pattern": "AGENTS", "glob": "*.md"},
        {"pattern": SECRET, "output": "files"},
        {"pattern": SECRET, "output": "counts"},
    ],
    "glob": [{"pattern": "*"}, {"pattern": "**/*.md"}, {"pattern": "*", "path": "{ws}"}],
    "list": [{"path": "."}, {"path": "{ws}"}, {"path": ".."}],
    "changes": [{}, {"session": "editor"}],
    "stats": [{}, {"session": "editor"}, {"history": True}, {"session": "editor", "history": True}],
    "stat": [{"path": "../other.txt"}, {"path": "{ws}"}, {"path": "missing.txt"}],
    "move": [
        {"source": "in.txt", "destination": "../moved-out.txt"},
        {"source": "../other.txt", "destination": "stolen.txt"},
    ],
    "mkdir": [{"path": "../made-outside"}, {"path": "../made-outside/deeper"}],
    "patch": [
        {"file_path": "../other.txt", "edits": [{"old_string": "TOP", "new_string": "X"}]},
        {
            "file_path": "../other.txt",
            "edits": [{"old_string": "TOP", "new_string": "X"}],
            "dry_run": True,
        },
    ],
}


def test_every_method_has_a_scope_decision() -> None:
    assert set(scope.PATH_FIELDS) | set(scope.REFUSED) == set(calls.METHODS)
    assert not set(scope.PATH_FIELDS) & set(scope.REFUSED)
    assert set(HOSTILE) == set(calls.METHODS)


def test_a_method_without_a_decision_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(scope.PATH_FIELDS, "grep")
    narrow = scope.Scope(["/nowhere"], lambda session: None)
    with pytest.raises(ReadkeeperError) as refused:
        narrow.params("grep", {"pattern": "x"})
    assert refused.value.kind == "unsupported"


def test_undo_refused_to_an_attached_agent_says_what_to_do_instead() -> None:
    # It listed the core's methods as a Python list, several no tool of the agent's
    # (round 34, A10).
    narrow = scope.Scope(["/nowhere"], lambda session: None)
    with pytest.raises(ReadkeeperError) as refused:
        narrow.params("undo", {})
    assert refused.value.kind == "unsupported"
    assert "[" not in refused.value.message, refused.value.message
    assert "reverse change with an edit" in refused.value.message


def named(params: dict[str, Any], sub: Path) -> set[str]:
    """The paths a call itself gives (a refusal may say them back)."""
    given: set[str] = set()
    for value in params.values():
        for path in value if isinstance(value, list) else [value]:
            if isinstance(path, dict):  # a multi-file edit's entry
                path = path.get("file_path")
            if isinstance(path, str):
                given.add(os.path.normpath(os.path.join(sub, path)))
    return given


def names_beyond(answer: Any, workspace: Path, sub: Path, given: set[str]) -> list[str]:
    """Every path of the editor's workspace the answer names that is not within sub,
    nor given by the call."""
    text = json.dumps(answer)
    found = [
        p.rstrip(".:;") for p in re.findall(re.escape(str(workspace)) + r"[^\s\"',|)?\\]*", text)
    ]
    inside = [p for p in found if p == str(sub) or p.startswith(str(sub) + "/")]
    return sorted(set(found) - set(inside) - given)


def test_no_method_reaches_or_names_beyond_the_roots(listener: Listener, workspace: Path) -> None:
    sub = workspace / "sub"
    sub.mkdir()
    (sub / "in.txt").write_text("inside\n")
    (workspace / "other.txt").write_text(f"{SECRET}\n")
    (workspace / "AGENTS.md").write_text(f"# AGENTS\n{SECRET}\n")
    listener.core.configure({"watch_debounce_ms": 20})
    listener.core.start_watching(lambda message: None)
    editor = Raw(listener.socket_path)
    editor.ask("hello", roots=[str(workspace)])
    assert editor.ask("read", file_path="other.txt", session="editor")["result"]["type"] == "text"
    assert editor.ask("read", file_path="AGENTS.md")["result"]["type"] == "text"
    narrow = Raw(listener.socket_path)
    narrow.ask("hello", roots=[str(sub)])
    for method, calls_made in HOSTILE.items():
        for params in calls_made:
            params = {k: (str(workspace) if v == "{ws}" else v) for k, v in params.items()}
            answer = narrow.ask(method, **params)
            assert SECRET not in json.dumps(answer), (method, params, answer)
            beyond = names_beyond(answer, workspace, sub, named(params, sub))
            assert beyond == [], (method, params, answer)
    assert (workspace / "other.txt").read_text() == f"{SECRET}\n"
    assert not (workspace / "planted.txt").exists()
    assert not (workspace / "moved-out.txt").exists()
    assert (sub / "in.txt").exists()
    assert not (sub / "stolen.txt").exists()
    assert not (workspace / "made-outside").exists()

    # Relative paths start at the agent's root, not the editor's.
    found = narrow.ask("grep", pattern="inside")["result"]["matches"]
    assert [m["file_path"] for m in found] == [str(sub / "in.txt")]
    assert narrow.ask("glob", pattern="*")["result"]["paths"] == [str(sub / "in.txt")]
    listed = narrow.ask("list", path=".")["result"]
    assert listed["path"] == str(sub)
    assert [e["name"] for e in listed["entries"]] == ["in.txt"]
    watcher = narrow.ask("stats")["result"]["watcher"]
    assert watcher.get("watched_roots", [str(sub)]) == [str(sub)]
    # The journal shows the narrow agent's own calls within its roots, and counts the rest.
    history = narrow.ask("stats", history=True)["result"]["history"]
    assert {e["path"] for e in history["events"]} <= {str(sub), str(sub / "in.txt")} | {
        str(sub / name) for name in ("other.txt", "AGENTS.md", "planted.txt")
    }
    assert history["beyond_roots"] >= 2  # the editor's reads of other.txt and AGENTS.md


async def test_an_attached_mcp_names_nothing_beyond_its_root(workspace: Path) -> None:
    # End to end: the editor's server of WS read WS/other.txt; `readkeeper mcp --root
    # WS/sub` attached to it sees neither its content nor its name.
    sub = workspace / "sub"
    sub.mkdir()
    (sub / "in.txt").write_text("inside\n")
    (workspace / "other.txt").write_text(f"{SECRET}\n")
    (workspace / "AGENTS.md").write_text(f"# AGENTS\n{SECRET}\n")
    runtime = private_runtime_dir()
    lsp, _ = await editor(workspace, runtime)
    try:
        await lsp.read(workspace / "other.txt")
        async with stdio_client(["--root", str(sub)], mcp_env(runtime)) as client:
            for tool, arguments in (
                ("stats", {}),
                ("grep", {"pattern": SECRET}),
                ("grep", {"pattern": "AGENTS", "glob": "*.md"}),
                ("glob", {"pattern": "*"}),
                ("list", {"path": "."}),
                ("attachments", {}),
            ):
                answer = await client.call_tool(tool, arguments)
                shown = text_of(answer) + json.dumps(answer.structured_content)
                assert SECRET not in shown, (tool, arguments)
                assert names_beyond(shown, workspace, sub, set()) == [], (tool, shown)
    finally:
        await lsp.client.close()
