"""Every way on readkeeper's text names is written by one of two functions, so that every
front end can say it in its own words by one rule: `hints.call(method, **params)` for a
call (`readkeeper/read {"file_path": ...}`), `hints.again(**params)` for the call just
answered with some params changed (`offset=501, limit=200`). A sentence never names an
option with its value itself, nor names options as words ("offset and limit").

Rounds 25-27 of outside attacks found the front ends' rewording of such prose one form
away each time (`(offset, limit)`, `symbol=...`, `pages="2", render=true` in a readMany);
a scan of the source finds every such literal, where a test of each message cannot.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from readkeeper import hints, protocol
from readkeeper.calls import METHODS
from readkeeper.protocol.known_fields import fields_of

ROOT = Path(__file__).parent.parent
SERVER = ROOT / "server"
# Where readkeeper's words are written: the server and its attachments.
SOURCES = {"": SERVER, "attachments/": ROOT / "attachments"}

# Every param of every method (the contract's params classes, the edit's other forms
# among them), and the drop-in's own for a read: drawn from the classes, not listed here,
# so a param added later is scanned for too (`edits=[...]` and `files=[...]` examples
# were missed by a hand-written list).
_CLASSES = [method.params for method in METHODS.values()]
_CLASSES += [protocol.EditBatchParams, protocol.EditFilesParams, protocol.NotebookEditParams]
_NAMES = {name for cls in _CLASSES for name in fields_of(cls)} | {"head", "tail"}
PARAMS = "|".join(sorted(_NAMES, key=len, reverse=True))
# An option with its value (`offset=501`, `symbol=...`), or two options named as words.
WRITTEN = re.compile(rf"(?<![\w\-/.])(?:{PARAMS})=|`(?:{PARAMS}): ")
NAMED = re.compile(r"\b(?:offset|limit)(?:, | and | or |/)(?:offset|limit)\b")

# Files whose literals may name options: each front end's own words (its tool
# descriptions, and the drop-in's sentences in the drop-in's own params), the one place
# that writes a way on, a recorded handshake, and an HTML page.
OWN_WORDS = {
    "hint_walks.py": "finds a PDF page's way on as the core writes it (page_steps)",
    "mcp/filesystem/args.py": "the drop-in's bad-argument messages, in its params",
    "mcp/filesystem/serve.py": "the drop-in's own notes, in its params",
    "mcp/filesystem/tools.py": "the drop-in's tool descriptions",
    "mcp/tools.py": "readkeeper's MCP tool descriptions",
    "mcp/server.py": "readkeeper's MCP instructions",
    "mcp/handshake_answers.py": "the recorded answers to the handshake (generated)",
    "read/readers/__init__.py": "a cache key (pages=...;render=...), never shown",
    "picture.py": "an HTML page (its attributes: content=...)",
}


def _docstrings(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _literals(path: Path) -> list[tuple[int, str]]:
    """Every string literal of `path` but its docstrings (an f-string's fixed parts
    one by one, so a value put in it never joins two of them)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


def _offences() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    paths = [(prefix, root, p) for prefix, root in SOURCES.items() for p in root.rglob("*.py")]
    for prefix, root, path in sorted(paths):
        name = prefix + path.relative_to(root).as_posix()
        for line, text in _literals(path):
            for rule in (WRITTEN, NAMED):
                hit = rule.search(text)
                if hit:
                    found.setdefault(name, []).append(f"{name}:{line}: {hit.group()!r} in {text!r}")
    return found


def test_only_hints_writes_an_option_with_its_value() -> None:
    offences = _offences()
    left = {name: said for name, said in offences.items() if name not in OWN_WORDS}
    assert left == {}, "write it with hints.call or hints.again"


def test_the_list_of_exceptions_names_only_files_that_need_it() -> None:
    offences = _offences()
    assert sorted(name for name in OWN_WORDS if name not in offences) == []


def test_the_scan_finds_what_it_looks_for(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        '"""A docstring may say offset=1."""\n'
        'a = f"Continue with offset={1}."\n'
        'b = "read without offset or limit"\n'
        'c = "the file_path=x"\n'
        'd = "an offset and a limit"\n'
        'e = "Give at least one: edits=[...]"\n',
        encoding="utf-8",
    )
    hits = [
        rule.search(text).group()  # type: ignore[union-attr]
        for _, text in _literals(sample)
        for rule in (WRITTEN, NAMED)
        if rule.search(text)
    ]
    assert sorted(hits) == ["edits=", "file_path=", "offset or limit", "offset="]


@pytest.mark.parametrize(
    ("params", "written"),
    [
        ({"offset": 501, "limit": 200}, "offset=501, limit=200"),
        ({"force": True}, "force=true"),
        ({"pages": "2", "render": True}, 'pages="2", render=true'),
        ({"symbol": 'say "hi", then'}, 'symbol="say \\"hi\\", then"'),
        ({"offset": 3, "limit": None}, "offset=3"),
    ],
)
def test_again_writes_each_option_with_its_value_as_json(
    params: dict[str, object], written: str
) -> None:
    assert hints.again(**params) == written
