"""Braces in a glob, as agents write them (`**/*.{ts,tsx}`): each `{a,b}` is expanded
into patterns of gitignore's syntax, matched alike by every path glob and grep take (the
first, ripgrep-sorted answer, the kept listing, grep's `glob`), bounded in number."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.search.globs import MAX_ALTERNATIVES, Glob, alternatives


@pytest.mark.parametrize(
    ("pattern", "expanded"),
    [
        ("*.py", ["*.py"]),
        ("**/*.{ts,tsx}", ["**/*.ts", "**/*.tsx"]),
        ("{src,lib}/**/*.{py,pyi}", ["src/**/*.py", "src/**/*.pyi", "lib/**/*.py", "lib/**/*.pyi"]),
        ("a{b,c{d,e}}f", ["abf", "acdf", "acef"]),
        ("x.{py}", ["x.{py}"]),  # no comma: a literal name, as in a shell
        ("x.{py,md", ["x.{py,md"]),  # no close: literal
        ("x.\\{py,md}", ["x.\\{py,md}"]),  # escaped: literal
        ("{a,a}.py", ["a.py"]),
        ("{,a}.py", [".py", "a.py"]),
    ],
)
def test_braces_expand_as_a_shell_does(pattern: str, expanded: list[str]) -> None:
    assert alternatives(pattern, "pattern") == expanded


@pytest.mark.parametrize(
    "pattern",
    [
        "{a,b}" * 7,  # 128 patterns
        "{" + ",".join(["x"] * 1500) + "}",  # never copied out 1,500 times
        "a" * 100_000,  # too long to be a path's glob
    ],
)
def test_too_many_alternatives_are_refused_naming_the_field(pattern: str) -> None:
    assert MAX_ALTERNATIVES < 2**7
    with pytest.raises(ReadkeeperError) as caught:
        Glob(pattern, field="glob")
    assert caught.value.kind == "bad_params"
    assert caught.value.data["field"] == "glob"
    assert len(caught.value.message) < 1000


def test_each_alternative_is_held_to_the_cost_rule() -> None:
    with pytest.raises(ReadkeeperError):
        Glob("{*a*a*a*b,x}")


def test_a_braced_glob_matches_each_alternative() -> None:
    glob = Glob("**/*.{py,md}")
    assert glob.matches("a/b.py")
    assert glob.matches("c.md")
    assert not glob.matches("d.txt")
    assert glob.select([b"a/b.py", b"c.md", b"d.txt"]) == [b"a/b.py", b"c.md"]
    assert glob.name_only
    assert glob.rg_filter() == ["--type-add=wanted:*.py", "--type-add=wanted:*.md", "--type=wanted"]


def _paths(result: dict[str, Any], root: Path) -> set[str]:
    return {str(Path(p).relative_to(root)) for p in result["paths"]}


def test_glob_and_grep_take_braces(core: Readkeeper, workspace: Path) -> None:
    for name in ["a.py", "b.md", "c.txt", "sub/d.py", "sub/e.{py,md}"]:
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text("needle\n")
    found = calls.call(core, "glob", {"pattern": "**/*.{py,md}"})
    assert _paths(found, workspace) == {"a.py", "b.md", "sub/d.py"}
    grep = calls.call(core, "grep", {"pattern": "needle", "glob": "*.{py,md}", "output": "files"})
    assert {str(Path(p).relative_to(workspace)) for p in grep["files"]} == {
        "a.py",
        "b.md",
        "sub/d.py",
    }


@pytest.mark.parametrize("pattern", ["[z-a]", "d/[9-0]*", "**/[z-a]", "{[z-a],b}"])
def test_a_glob_whose_expression_cannot_compile_is_bad_params(pattern: str) -> None:
    with pytest.raises(ReadkeeperError) as caught:
        Glob(pattern, field="glob")
    assert caught.value.kind == "bad_params"
    assert caught.value.data["field"] == "glob"
