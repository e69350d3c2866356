"""No refusal names a shell command: a next step is a call of the front end that shows it
(hints.call), or words for the user (`ask the user to ...`), never `git diff`, `chmod
u+w`, `pip install` (attack round 25, A3: a notebook whose "cells" was a string was
refused with "e.g. `git diff` it first"). The CLI's usage text may name commands; the
core's words may not."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError

SERVER = Path(__file__).resolve().parent.parent / "server"
# A command in backquotes, or one written as the thing to run.
SHELL = re.compile(
    r"`(?:git|rm|chmod|chown|ls|cat|pip|pipx|sudo|mv|cp|mkdir|find|grep|rg|sed|awk|kill"
    r"|python3?|npm|curl|touch|ln|echo|cd|tar|unzip|jupyter|nbstripout)(?:\s[^`]*)?`"
    r"|\b(?:git (?:diff|restore|stash|add|commit|reset)\s+\S"
    r"|rm -r|chmod [-+0-7ugoa]|pip install|sudo \w)"
)
# Words that are not an answer's: a setting's description and the warnings the user reads
# (their own words for the user), and the recorded answers of the MCP SDK.
FOR_THE_USER = {
    "settings.py",
    "watch/backends.py",
    "watch/watchman.py",
    "mcp/handshake.py",
    "mcp/handshake_answers.py",
}


def _words(path: Path) -> list[tuple[int, str]]:
    """Each string of `path` that is not a docstring: what an answer may say."""
    tree = ast.parse(path.read_text())
    notes = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in notes
    ]


def test_no_message_of_the_server_names_a_shell_command() -> None:
    found = [
        f"{path.relative_to(SERVER)}:{line}: {SHELL.search(text)}"
        for path in sorted(SERVER.rglob("*.py"))
        if str(path.relative_to(SERVER)) not in FOR_THE_USER
        for line, text in _words(path)
        if SHELL.search(text)
    ]
    assert found == []


@pytest.mark.parametrize(
    "content",
    [
        '{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": "x"}',
        '{"cells": []}',
        '{"nbformat": 4,\n "cells": [,]}',
    ],
)
def test_a_damaged_notebooks_refusal_names_a_call_and_no_command(
    core: Readkeeper, workspace: Path, content: str
) -> None:
    path = workspace / "odd.ipynb"
    path.write_text(content)
    shown = calls.call(core, "read", {"file_path": str(path)})
    assert shown["type"] == "text"  # its lines, to repair it
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, "edit", {"file_path": str(path), "cell_id": "@0", "new_source": "x"})
    refused = caught.value
    assert refused.kind == "corrupt"
    assert not SHELL.search(refused.message), refused.message
    assert "git" not in refused.message
    named = json.dumps({"file_path": str(path)})
    assert f"A read (readkeeper/read {named}) shows" in refused.message, refused.message
