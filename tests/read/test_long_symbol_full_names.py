"""A symbol read by a name past the outline's 200-character cut shows that symbol or
none (round 30, B1): the name must be the symbol's whole name, or the cut spelling the
outline shows when that spelling stands for one name only. Two long names of one start,
a name's start, a nested path and a literal "…" heading each read their own lines; a
refusal's way on reads what it lists, as written."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import ReadParams, unstructure
from readkeeper.read.readers import outline, outline_cache, outline_find
from readkeeper.read.readers.grammars import PYTHON

B = "B" * 230
A = "A" * 250
C = "C" * 300


def _read(core: Readkeeper, path: str, symbol: str) -> dict[str, Any]:
    # force: a symbol's lines read again are shown again, never a stub.
    params = ReadParams(file_path=path, symbol=symbol, force=True)
    read: dict[str, Any] = unstructure(core.read(params))
    return read["file"]


def _refused(core: Readkeeper, path: str, symbol: str) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as refused:
        core.read(ReadParams(file_path=path, symbol=symbol))
    assert refused.value.kind == "not_found", refused.value.message
    return refused.value


def _ways_on(core: Readkeeper, path: str, error: ReadkeeperError) -> list[tuple[int, str]]:
    """Each way on the refusal names (symbol=... or offset=..., limit=...), run as
    written: the first line it reads and its content."""
    shown = []
    for run in re.findall(r'symbol=("(?:[^"\\]|\\.)*")|offset=(\d+), limit=(\d+)', error.message):
        if run[0]:
            params = ReadParams(file_path=path, symbol=json.loads(run[0]), force=True)
        else:
            params = ReadParams(file_path=path, offset=int(run[1]), limit=int(run[2]), force=True)
        file = unstructure(core.read(params))["file"]
        shown.append((file["start_line"], file["content"]))
    assert shown, error.message
    return shown


def _python(workspace: Path) -> None:
    pad = "".join(f"def f{n}(a):\n    return a + {n}\n\n" for n in range(300))
    (workspace / "mod.py").write_text(
        f"{pad}class {B}_alpha:\n    def m(self):\n        return 'ALPHA'\n\n"
        f"class {B}_beta:\n    def m(self):\n        return 'BETA'\n"
    )


def test_two_long_names_of_one_start_read_their_own(core: Readkeeper, workspace: Path) -> None:
    _python(workspace)
    assert "BETA" in _read(core, "mod.py", f"{B}_beta")["content"]
    assert "ALPHA" not in _read(core, "mod.py", f"{B}_beta")["content"]
    assert "ALPHA" in _read(core, "mod.py", f"{B}_alpha")["content"]
    # A method under a long class, by the whole path.
    method = _read(core, "mod.py", f"{B}_beta.m")
    assert "BETA" in method["content"]
    assert "class" not in method["content"]


def test_a_name_s_start_reads_nothing(core: Readkeeper, workspace: Path) -> None:
    _python(workspace)
    for start in (f"{B}_al", f"{B}_bet", B, f"{B}_alphaX", f"{B}_alpha.n", f"X.{B}_alpha"):
        _refused(core, "mod.py", start)


def test_a_stub_is_only_for_the_lines_read(core: Readkeeper, workspace: Path) -> None:
    # Round 30: "B*230_al" read alpha, then beta's name answered "unchanged since your
    # read" for alpha's lines.
    _python(workspace)
    _refused(core, "mod.py", f"{B}_al")
    for name, word in ((f"{B}_alpha", "ALPHA"), (f"{B}_beta", "BETA")):
        read = unstructure(core.read(ReadParams(file_path="mod.py", symbol=name)))["file"]
        assert word in read.get("content", ""), read
    # Read again, beta's own lines are the stub's.
    again = unstructure(core.read(ReadParams(file_path="mod.py", symbol=f"{B}_beta")))["file"]
    assert "content" not in again
    assert "unchanged since your read" in again["note"]
    assert again["start_line"] == read["start_line"]


def test_a_cut_spelling_of_two_names_reads_neither(core: Readkeeper, workspace: Path) -> None:
    # Both are shown as "B*199…": that spelling names two symbols; the refusal lists
    # each by a way on that reads it.
    _python(workspace)
    refused = _refused(core, "mod.py", "B" * 199 + "…")
    contents = [content for _, content in _ways_on(core, "mod.py", refused)]
    assert any("ALPHA" in c and "BETA" not in c for c in contents), contents
    assert any("BETA" in c and "ALPHA" not in c for c in contents), contents


def test_javascript_long_names(core: Readkeeper, workspace: Path) -> None:
    pad = "".join(f"function f{n}(a) {{\n  return a + {n};\n}}\n\n" for n in range(300))
    (workspace / "m.js").write_text(
        f"{pad}class {B}_alpha {{\n  m() {{ return 'ALPHA'; }}\n}}\n\n"
        f"class {B}_beta {{\n  m() {{ return 'BETA'; }}\n}}\n"
        f"const {B}_arrow1 = () => 'ARROW1';\nconst {B}_arrow2 = () => 'ARROW2';\n"
    )
    assert "ARROW2" in _read(core, "m.js", f"{B}_arrow2")["content"]
    assert "ARROW1" in _read(core, "m.js", f"{B}_arrow1")["content"]
    assert "BETA" in _read(core, "m.js", f"{B}_beta")["content"]
    assert "BETA" in _read(core, "m.js", f"{B}_beta.m")["content"]
    _refused(core, "m.js", f"{B}_arrow3")


def _markdown(workspace: Path) -> None:
    pad = "".join(f"## pad{n}\n\n" + "lorem ipsum " * 30 + "\n\n" for n in range(200))
    (workspace / "doc.md").write_text(
        f"# Intro\n\n{pad}## {A}_one\n\nONE\n\n## {A}_two\n\nTWO\n\n### {A}_one\n\nNESTED\n\n"
        f"## {'A' * 199}…\n\nLITERAL\n\n## {A}_x\n\nLONG X\n"
    )


def test_markdown_nested_long_headings(core: Readkeeper, workspace: Path) -> None:
    _markdown(workspace)
    assert "ONE" in _read(core, "doc.md", f"Intro.{A}_one")["content"]
    two = _read(core, "doc.md", f"Intro.{A}_two")["content"]
    assert "TWO" in two
    assert "NESTED" in two
    nested = _read(core, "doc.md", f"Intro.{A}_two.{A}_one")["content"]
    assert "NESTED" in nested
    assert "TWO" not in nested
    assert "NESTED" in _read(core, "doc.md", f"{A}_two.{A}_one")["content"]
    _refused(core, "doc.md", f"Intro.{A}_t")


def test_a_literal_ellipsis_heading_is_its_own(core: Readkeeper, workspace: Path) -> None:
    _markdown(workspace)
    x = _read(core, "doc.md", f"{A}_x")["content"]
    assert "LONG X" in x
    assert "LITERAL" not in x
    literal = _read(core, "doc.md", "A" * 199 + "…")["content"]
    assert "LITERAL" in literal
    assert "LONG X" not in literal


def test_ordinals_count_equal_whole_names(core: Readkeeper, workspace: Path) -> None:
    (workspace / "dup.py").write_text(
        f"def {C}():\n    return 'FIRST'\n\n\ndef {C}():\n    return 'SECOND'\n\n\n"
        f"def {C}X():\n    return 'OTHER'\n"
    )
    assert "FIRST" in _read(core, "dup.py", C)["content"]
    assert "SECOND" in _read(core, "dup.py", f"{C}[2]")["content"]
    assert "OTHER" in _read(core, "dup.py", f"{C}X")["content"]
    _refused(core, "dup.py", f"{C}[3]")
    _refused(core, "dup.py", f"{C}X[2]")


def test_the_not_found_way_on_reads_as_written(core: Readkeeper, workspace: Path) -> None:
    # Round 30: the way on named "Intro.A*94 … [207 characters cut] … A*99…", itself
    # not_found.
    _markdown(workspace)
    refused = _refused(core, "doc.md", f"Intro.{A}_t")
    assert not re.search(r"symbol=[^,]*characters cut", refused.message), refused.message
    for start, content in _ways_on(core, "doc.md", refused):
        assert start > 1, (start, content[:80])
        assert content


def test_a_kept_outline_tells_long_names_apart(workspace: Path) -> None:
    # The user's cache keeps what tells whole names apart (outline_cache.py).
    _python(workspace)
    text = (workspace / "mod.py").read_text()
    found = outline.symbols(text, PYTHON)
    kept = outline_cache.parse(outline_cache.dump(found), text.count("\n") + 1)
    assert kept is not None
    for symbols in (found, kept):
        beta = outline_find.find(symbols, f"{B}_beta")
        assert beta.symbol is not None
        assert beta.symbol.name.startswith("B")
        assert beta.start_line == text[: text.index(f"class {B}_beta")].count("\n") + 1
        assert outline_find.find(symbols, f"{B}_al").symbol is None
