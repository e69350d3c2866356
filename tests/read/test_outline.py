"""Outline reads and symbol reads through the core, on real source files (outline_samples)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest
from outline_samples import LANGUAGES, WRITTEN, node_modules_file, sample

from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import EditParams, ReadParams, unstructure
from readkeeper.read.readers import outline

TYPING = Path(typing.__file__).read_text(encoding="utf-8")


def read(core: Readkeeper, path: str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = unstructure(core.read(ReadParams(file_path=path, **params)))
    return result


def refused(core: Readkeeper, path: str, **params: Any) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        core.read(ReadParams(file_path=path, **params))
    return caught.value


def low_threshold(workspace: Path) -> Readkeeper:
    """A core that outlines every source file with a symbol (the samples are small)."""
    return Readkeeper(roots=[str(workspace)], client_settings={"outline_over_tokens": 50})


# --- every language -------------------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_whole_read_over_the_threshold_is_an_outline(workspace: Path, language: str) -> None:
    source = sample(language)
    (workspace / source.name).write_text(source.text, encoding="utf-8")
    result = read(low_threshold(workspace), source.name)
    assert result["type"] == "outline", result
    file = result["file"]
    assert source.symbol.split(".")[0] in file["outline"], file["outline"]
    assert file["symbols"] >= file["shown_symbols"] >= 1
    assert file["total_lines"] == len(source.text.splitlines())
    assert file["content"].startswith("     1\t")
    assert 'symbol="' in file["note"]
    assert "offset=" in file["note"]
    # Each outline line is "start-end label", indented by depth, in file order.
    for line in file["outline"].splitlines():
        lines, _, label = line.strip().partition(" ")
        start, end = map(int, lines.split("-"))
        assert 1 <= start <= end <= file["total_lines"], line
        assert label, line


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_symbol_read_returns_its_lines_and_stubs_on_a_re_read(
    workspace: Path, language: str
) -> None:
    source = sample(language)
    (workspace / source.name).write_text(source.text, encoding="utf-8")
    core = Readkeeper(roots=[str(workspace)])
    result = read(core, source.name, symbol=source.symbol)
    assert result["type"] == "text", result
    file = result["file"]
    first = file["content"].split("\n")[0]
    assert source.starts_with in first, (source.real, first)
    lines = source.text.splitlines()
    start, count = file["start_line"], file["num_lines"]
    assert file["content"].split("\n")[-1].endswith(lines[start + count - 2].rstrip("\r"))
    assert read(core, source.name, symbol=source.symbol)["type"] == "file_unchanged"
    # The same lines by range are the same view: also a stub.
    assert read(core, source.name, offset=start, limit=count)["type"] == "file_unchanged"


def test_python_symbols_match_the_ast_of_typing_py(workspace: Path) -> None:
    found = outline.symbols(TYPING, outline.grammar_for("typing.py") or pytest.fail("no grammar"))
    ours = {s.qualified_name: s.end_line for _, s in outline.walk(found)}
    lines = TYPING.split("\n")
    stack: list[tuple[str, ast.AST]] = [("", ast.parse(TYPING))]
    expected = {}
    while stack:
        prefix, node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                expected[name] = child.end_lineno or 0
                stack.append((name + ".", child))
            else:
                stack.append((prefix, child))
    assert set(expected) == set(ours)
    for name, end in expected.items():
        # tree-sitter keeps a comment that closes a body in it; ast ends at the code.
        after = [line.strip() for line in lines[end : ours[name]]]
        assert ours[name] >= end, name
        assert all(not line or line.startswith("#") for line in after), name


# --- when an outline is the answer -----------------------------------------------------------


def test_default_threshold_outlines_typing_py_and_keeps_it_small(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "typing.py").write_text(TYPING)
    file = read(core, "typing.py")["file"]
    assert file["language"] == "Python"
    assert file["symbols"] == file["shown_symbols"] > 250
    assert file["tokens"] < 5_000 < 30_000 < file["file_tokens"]
    assert "  " + "3280" not in file["outline"]  # ranges, not lines
    assert "\nclass IO" not in file["outline"]
    assert "\n  " in file["outline"]  # nested symbols are shown, indented


def test_a_small_source_file_and_other_languages_read_as_before(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "small.py").write_text("def f():\n    return 1\n")
    assert read(core, "small.py")["type"] == "text"
    (workspace / "notes.txt").write_text(TYPING)  # big, but no grammar
    assert read(core, "notes.txt")["type"] == "text"
    # A big source file with no symbol at all (generated constants) is read as text.
    (workspace / "table.py").write_text("".join(f"VALUE_{i} = {i}\n" for i in range(4000)))
    assert read(core, "table.py")["type"] == "text"


def test_force_and_explicit_ranges_give_lines(core: Readkeeper, workspace: Path) -> None:
    (workspace / "typing.py").write_text(TYPING)
    forced = read(core, "typing.py", force=True)
    assert forced["type"] == "text"
    assert forced["file"]["start_line"] == 1
    assert read(core, "typing.py", offset=1)["type"] == "text"
    ranged = read(core, "typing.py", offset=100, limit=5)
    assert (ranged["type"], ranged["file"]["num_lines"]) == ("text", 5)


def test_outline_re_read_is_a_stub_until_the_file_changes(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "typing.py"
    path.write_text(TYPING)
    first = read(core, "typing.py")
    again = read(core, "typing.py")
    assert again["type"] == "file_unchanged"
    assert "outline" in again["file"]["note"]
    # Small, whatever the path: the stub says the path, never the outline again.
    assert len(str(again).replace(str(workspace), "")) < 400
    assert first["file"]["tokens"] > 1_000
    path.write_text(TYPING.replace("def reveal_type(", "def reveal_types("))
    changed = read(core, "typing.py")
    assert changed["type"] == "outline"
    assert "reveal_types" in changed["file"]["outline"]
    # Another session has read nothing.
    assert read(core, "typing.py", session="other")["type"] == "outline"


def test_a_forced_read_is_held_so_the_plain_re_read_stubs(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "typing.py").write_text(TYPING)
    assert read(core, "typing.py", force=True)["type"] == "text"
    assert read(core, "typing.py")["type"] == "file_unchanged"


def test_an_outline_is_partial_and_never_stands_for_the_lines(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "typing.py").write_text(TYPING)
    read(core, "typing.py")
    record = core.read_states.get("", str(workspace / "typing.py"))
    assert record is not None
    assert (record.partial, record.view) == (True, "outline")
    # A ranged read after the outline sends the lines.
    assert read(core, "typing.py", offset=1, limit=40)["type"] == "text"


def test_a_ranged_read_of_the_outlines_first_lines_tells_the_whole_file(
    workspace: Path,
) -> None:
    # The outline shows the first lines through the text reader, whose views are kept:
    # a ranged read of the same lines, in another core even, must still see the file.
    (workspace / "shop.py").write_text(
        '"""Shop."""\n\nimport os\n\n'
        + "".join(f"def item_{i}(n):\n    return n + {i}\n\n" for i in range(200))
    )
    first = read(low_threshold(workspace), "shop.py")
    assert first["type"] == "outline"
    head = first["file"]["num_lines"]
    file = read(low_threshold(workspace), "shop.py", offset=1, limit=head)["file"]
    assert file["content"] == first["file"]["content"]
    assert (file["total_lines"], file["next_offset"]) == (604, head + 1)


def test_the_threshold_is_the_numbered_lines_exact_count(workspace: Path) -> None:
    # "Over outline_over_tokens": a file whose numbered lines (as a whole read sends
    # them) come to exactly the threshold is read as lines; one token over, an outline.
    source = "".join(
        f"def task_{i}(value):\n    return value * {i} + len('{i}')\n\n" for i in range(12)
    )
    (workspace / "m.py").write_text(source)

    def whole_read(threshold: int) -> dict[str, Any]:
        core = Readkeeper(
            roots=[str(workspace)], client_settings={"outline_over_tokens": threshold}
        )
        core.tokens.warm_up()
        return read(core, "m.py")

    lines = whole_read(100_000)
    assert lines["type"] == "text"
    numbered = lines["file"]["tokens"]
    assert numbered > 100  # near enough to the threshold to be counted exactly
    assert whole_read(numbered)["type"] == "text"
    assert whole_read(numbered - 1)["type"] == "outline"


# --- symbol reads ---------------------------------------------------------------------------


def test_nested_symbol_with_its_decorators(core: Readkeeper, workspace: Path) -> None:
    (workspace / "typing.py").write_text(TYPING)
    file = read(core, "typing.py", symbol="TextIO.buffer")["file"]
    assert file["content"].split("\n")[0].endswith("@property")
    assert "def buffer(self) -> BinaryIO:" in file["content"]
    assert read(core, "typing.py", symbol="Generic")["file"]["num_lines"] > 50


def test_a_getter_and_its_setter_are_read_one_at_a_time(core: Readkeeper, workspace: Path) -> None:
    # A symbol read reads one symbol: the name reads the getter (as the outline lists
    # it), its note names the setter's own name; both were read together before.
    code = (
        "class Box:\n    @property\n    def size(self):\n        return self._size\n\n"
        "    @size.setter\n    def size(self, value):\n        self._size = value\n\n"
        "    def other(self):\n        pass\n"
    )
    (workspace / "box.py").write_text(code)
    file = read(core, "box.py", symbol="Box.size")["file"]
    assert (file["start_line"], file["num_lines"]) == (2, 3)
    assert 'The others: symbol="Box.size[2]" (lines 6-8).' in file["note"]
    setter = read(core, "box.py", symbol="Box.size[2]")["file"]
    assert (setter["start_line"], setter["num_lines"]) == (6, 3)
    assert 'symbol="Box.size" (lines 2-4)' in setter["note"]
    assert read(core, "box.py", symbol="other")["file"].get("note") is None


def test_a_name_of_several_classes_lists_the_name_that_reads_each(
    core: Readkeeper, workspace: Path
) -> None:
    code = (
        "class A:\n    def m(self): pass\n    def m(self): pass\nclass B:\n    def m(self): pass\n"
    )
    (workspace / "m.py").write_text(code)
    error = refused(core, "m.py", symbol="m")
    assert error.kind == "not_found"
    assert [c["symbol"] for c in error.data["candidates"]] == ["A.m", "A.m[2]", "B.m"]
    assert 'symbol="A.m[2]" (method, lines 3-3)' in error.message
    assert read(core, "m.py", symbol="A.m[2]")["file"]["start_line"] == 3


def test_a_heading_spelled_like_a_place_keeps_its_name(core: Readkeeper, workspace: Path) -> None:
    # "Intro[2]" is a heading of its own: it reads that one, and the second "Intro"
    # (which no name reads) is named by its lines.
    (workspace / "n.md").write_text("# Intro\na\n# Intro\nb\n# Intro[2]\nc\n")
    named = read(core, "n.md", symbol="Intro[2]")["file"]
    assert (named["start_line"], named["num_lines"]) == (5, 2)
    first = read(core, "n.md", symbol="Intro")["file"]
    assert "The others: offset=3, limit=2 (lines 3-4)." in first["note"]


@pytest.mark.parametrize("heading", ["C# tips", "Step 1. Install", "a :: b", "x -> y"])
def test_a_heading_with_a_separator_reads_as_the_outline_names_it(
    core: Readkeeper, workspace: Path, heading: str
) -> None:
    # `#`, `::`, `->` and ". " separate a qualified name's parts in a name asked for:
    # the outline's own name for a heading holding one read nothing (not_found).
    text = f"# {heading}\n" + "text line number here\n" * 40
    (workspace / "h.md").write_text(text + "# Other\n" + "more text on this line\n" * 1500)
    outline = read(core, "h.md")
    assert outline["type"] == "outline"
    assert f"symbol={json.dumps(heading)} (lines 1-41)" in outline["file"]["note"]
    file = read(core, "h.md", symbol=heading)["file"]
    assert (file["start_line"], file["num_lines"]) == (1, 41)


def test_ambiguous_names_list_the_candidates(core: Readkeeper, workspace: Path) -> None:
    (workspace / "typing.py").write_text(TYPING)
    error = refused(core, "typing.py", symbol="__init__")
    assert error.kind == "not_found"
    candidates = error.data["candidates"]
    assert 1 < len(candidates) <= 6
    assert all(c["qualified_name"].endswith(".__init__") for c in candidates)
    assert f'symbol="{candidates[0]["qualified_name"]}"' in error.message


def test_unknown_names_get_the_closest_first(core: Readkeeper, workspace: Path) -> None:
    (workspace / "typing.py").write_text(TYPING)
    error = refused(core, "typing.py", symbol="IO.raed")
    assert error.kind == "not_found"
    first = error.data["candidates"][0]
    assert first["qualified_name"] == "IO.read"
    assert first["end_line"] - first["start_line"] == 2
    assert 'symbol="IO.read"' in error.message
    nothing = refused(core, "typing.py", symbol="zzzzqqqq")
    assert nothing.data["candidates"] == []
    assert "grep" in nothing.message


def test_symbol_reads_of_other_languages_are_unsupported(core: Readkeeper, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("hello\n")
    error = refused(core, "notes.txt", symbol="hello")
    assert error.kind == "unsupported"
    assert "Python (.py" in error.message
    assert "Read a range of its lines instead" in error.message
    (workspace / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    assert refused(core, "pic.png", symbol="x").kind == "bad_params"  # read/options.py


@pytest.mark.parametrize(
    ("params", "field"), [({"symbol": ""}, "symbol"), ({"symbol": "f", "offset": 3}, "symbol")]
)
def test_bad_symbol_params(
    core: Readkeeper, workspace: Path, params: dict[str, Any], field: str
) -> None:
    (workspace / "m.py").write_text("def f():\n    pass\n")
    error = refused(core, "m.py", **params)
    assert (error.kind, error.data["field"]) == ("bad_params", field)


def test_an_edit_after_a_symbol_read_works(core: Readkeeper, workspace: Path) -> None:
    (workspace / "typing.py").write_text(TYPING)
    read(core, "typing.py")  # the outline
    file = read(core, "typing.py", symbol="IO.read")["file"]
    assert "def read(self, n: int = -1) -> AnyStr:" in file["content"]
    result = core.edit(
        EditParams(
            str(workspace / "typing.py"),
            "    def read(self, n: int = -1) -> AnyStr:\n",
            "    def read(self, n: int = -2) -> AnyStr:\n",
        )
    )
    assert result.replacements == 1
    assert "n: int = -2" in (workspace / "typing.py").read_text()


def test_a_dot_h_file_with_cpp_in_it_is_cpp(core: Readkeeper, workspace: Path) -> None:
    (workspace / "a.h").write_text("namespace ns {\nclass A {\n public:\n  int f();\n};\n}\n")
    file = read(core, "a.h", symbol="ns.A.f")["file"]
    assert file["content"] == "     4\t  int f();"


# --- hostile input --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("broken.py", "class A:\n    def f(self:\n        return (\n\ndef g():\n    pass\n"),
        ("deep.py", "".join(" " * i + f"def f{i}():\n" for i in range(400)) + " " * 400 + "1\n"),
        ("deep.js", "x = " + "[" * 50_000 + "]" * 50_000 + ";\nfunction after() {}\n"),
        ("deep.c", "void f(void) " + "{" * 20_000 + "}" * 20_000 + "\nint g(void) { return 1; }\n"),
        ("garbage.rs", "".join(chr(c % 0x2FF + 32) for c in range(0, 300_000, 7))),
        ("deep.md", "".join(">" * i + " # h\n" for i in range(1, 600))),
    ],
)
def test_hostile_sources_do_not_crash(workspace: Path, name: str, text: str) -> None:
    (workspace / name).write_text(text, encoding="utf-8")
    core = low_threshold(workspace)
    result = read(core, name)
    assert result["type"] in ("outline", "text")
    grammar = outline.grammar_for(name)
    assert grammar is not None
    found = outline.symbols(text, grammar)
    for _, symbol in outline.walk(found):
        assert 1 <= symbol.start_line <= symbol.end_line


def test_syntax_errors_keep_the_symbols_still_seen(core: Readkeeper, workspace: Path) -> None:
    (workspace / "broken.py").write_text(
        "def f(:\n    pass\n\nclass Kept:\n    def g(self):\n        pass\n"
    )
    file = read(core, "broken.py", symbol="Kept.g")["file"]
    assert file["content"] == "     5\t    def g(self):\n     6\t        pass"


def test_thousands_of_symbols_are_cut_to_the_top_levels(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The cut is tested here, not the deadlines: on a machine loaded enough, 5,000
    # functions took the walk past its 2 s and the read answered lines (a CI failure).
    monkeypatch.setattr(outline, "PARSE_SECONDS", 120.0)
    monkeypatch.setattr(outline, "WALK_SECONDS", 120.0)
    classes = "".join(
        f"class C{i}:\n" + "".join(f"    def m{j}(self): pass\n" for j in range(8))
        for i in range(200)
    )
    (workspace / "many.py").write_text(classes)
    core = Readkeeper(roots=[str(workspace)])
    file = read(core, "many.py")["file"]
    assert file["symbols"] == 200 * 9
    assert file["shown_symbols"] == 200
    assert "(+8 inside)" in file["outline"]
    assert file["tokens"] < 5_000
    flat = "".join(f"def f{i}(): pass\n" for i in range(5_000))
    (workspace / "flat.py").write_text(flat)
    cut = read(core, "flat.py")["file"]
    assert cut["shown_symbols"] < 5_000
    assert cut["tokens"] < 5_000
    assert f"offset={cut['shown_symbols'] + 1}" in cut["note"]


@pytest.mark.parametrize("language", sorted(WRITTEN))
def test_the_written_samples_read_by_symbol(
    core: Readkeeper, workspace: Path, language: str
) -> None:
    source = WRITTEN[language]
    (workspace / source.name).write_text(source.text)
    file = read(core, source.name, symbol=source.symbol)["file"]
    assert source.starts_with in file["content"].split("\n")[0]


def test_a_parse_past_its_deadline_falls_back_to_lines(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Content of its own: no parse cached by another test answers (outline.symbols). A
    # match statement: the scanner declines the text (outline_py.py), so it is parsed.
    ending = "# parsed once, past its deadline\nmatch x:\n    case 1:\n        pass\n"
    (workspace / "typing.py").write_text(TYPING + ending)
    monkeypatch.setattr(outline, "PARSE_SECONDS", 0.0)
    assert read(core, "typing.py")["type"] == "text"
    error = refused(core, "typing.py", symbol="IO.read")
    assert error.kind == "too_large"
    assert "Read a range of its lines instead" in error.message


def test_the_cli_prints_an_outline_and_reads_a_symbol(workspace: Path) -> None:
    (workspace / "typing.py").write_text(TYPING)
    command = [sys.executable, "-m", "readkeeper", "read", "typing.py"]
    shown = subprocess.run(command, cwd=workspace, capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0
    assert "\n  " in shown.stdout  # nested symbols, indented
    assert "--symbol " in shown.stdout  # the note naming the read that gets any part
    symbol = subprocess.run(
        [*command, "--symbol", "IO.read"], cwd=workspace, capture_output=True, text=True, timeout=60
    )
    assert "def read(self, n: int = -1) -> AnyStr:" in symbol.stdout


@pytest.mark.ci_required
def test_compiled_typescript_namespaces_in_javascript(core: Readkeeper, workspace: Path) -> None:
    # `(function (Position) { function create() ... })(Position || ...)`, as tsc emits.
    main = node_modules_file("vscode-languageserver-types/lib/umd/main.js")
    (workspace / "main.js").write_text(main.read_text(encoding="utf-8"))
    file = read(core, "main.js", symbol="Position.create")["file"]
    assert file["content"].split("\n")[0].endswith("/**")  # with its doc comment
    assert "function create(line, character) {" in file["content"]
