"""The outline's budget (issue 28, item 5): deep nesting in every grammar is listed to
`MAX_DEPTH` levels in time linear in the file, and a walk past its deadline gives the
lines (a whole read) or `too_large` with the ranged read (a symbol read)."""

from __future__ import annotations

from pathlib import Path

import pytest

from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import ReadParams, unstructure
from readkeeper.read.readers import outline

LEVELS = 18_000
DEEP = {
    # Python nests by indentation, so a file's depth grows with the root of its size.
    "deep.py": "".join("\t" * i + "def f():\n" for i in range(600)) + "\t" * 600 + "pass\n",
    "deep.js": "function f(){" * LEVELS + "}" * LEVELS,
    "deep.ts": "namespace N{" * LEVELS + "}" * LEVELS,
    "deep.rs": "mod m{" * LEVELS + "}" * LEVELS,
    "deep.cpp": "namespace n{" * LEVELS + "}" * LEVELS,
    "deep.java": "class A{" * LEVELS + "}" * LEVELS,
}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deep_nesting_is_listed_to_the_depth_cap(name: str) -> None:
    grammar = outline.grammar_for(name)
    assert grammar is not None
    found = outline.symbols(DEEP[name], grammar)
    levels = [depth for depth, _ in outline.walk(found)]
    assert len(levels) == outline.MAX_DEPTH
    assert max(levels) == outline.MAX_DEPTH - 1
    # The qualified names stay short: each level adds one name, up to the cap.
    deepest = max(outline.walk(found), key=lambda pair: pair[0])[1]
    assert deepest.qualified_name.count(".") == outline.MAX_DEPTH - 1
    assert "not listed" in deepest.label


def test_a_deeply_nested_file_is_outlined_and_its_symbols_read(workspace: Path) -> None:
    (workspace / "deep.js").write_text(DEEP["deep.js"])
    core = Readkeeper(roots=[str(workspace)])
    result = unstructure(core.read(ReadParams(file_path="deep.js")))
    assert result["type"] == "outline"
    assert result["file"]["symbols"] == outline.MAX_DEPTH
    symbol = ".".join(["f"] * outline.MAX_DEPTH)
    read = unstructure(core.read(ReadParams(file_path="deep.js", symbol=symbol)))
    assert read["file"]["start_line"] == 1


def test_many_same_named_neighbours_are_read_one_at_a_time(workspace: Path) -> None:
    # 7,000 definitions of one name side by side: named in one pass (a list scan per
    # symbol was 49 M steps, past the walk's deadline); few enough that a loaded
    # machine's walk never nears the deadline either (18,000 did, on a CI run beside
    # other work). The name reads the first, not the 7,000 lines from the first to the
    # last (over the token cap before); its note names the others.
    (workspace / "many.py").write_text("def f(): pass\n" * 7_000)
    core = Readkeeper(roots=[str(workspace)])
    first = unstructure(core.read(ReadParams(file_path="many.py", symbol="f")))["file"]
    assert (first["start_line"], first["num_lines"]) == (1, 1)
    assert 'and 6,994 more, to symbol="f[7000]" (lines 7000-7000).' in first["note"]
    last = unstructure(core.read(ReadParams(file_path="many.py", symbol="f[7000]")))["file"]
    assert (last["start_line"], last["num_lines"]) == (7_000, 1)


def test_a_walk_past_its_deadline_gives_lines_or_too_large(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Enough symbols that the walk looks at its clock (every 4,096 nodes); a match
    # statement, so that the scanner declines the text (outline_py.py) and it is parsed.
    wide = "".join(f"def f{i}(): pass\n" for i in range(10_000))
    (workspace / "wide.py").write_text(wide + "match x:\n    case 1:\n        pass\n")
    monkeypatch.setattr(outline, "WALK_SECONDS", 0.0)
    core = Readkeeper(roots=[str(workspace)])
    assert unstructure(core.read(ReadParams(file_path="wide.py")))["type"] == "text"
    with pytest.raises(ReadkeeperError) as caught:
        core.read(ReadParams(file_path="wide.py", symbol="f5"))
    assert caught.value.kind == "too_large"
    assert "Read a range of its lines instead" in caught.value.message
    assert 'readkeeper/grep {"pattern": "f5"' in caught.value.message
