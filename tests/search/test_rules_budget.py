"""The ignore files a call compiles are bounded however many folders hold them (round
47: 100 nested folders, each with a `.gitignore` of 1,000 patterns, held a list 25-40 s
and 300 MB, a grep 42-51 s past its deadline: pathspec compiles a pattern in 0.2-0.35 ms
of Python, and each folder's file was compiled whole). One call's rules compile at most
`RipgrepRules.PATTERNS_MOST` lines; past it a folder's files are not applied, and a
listing says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pathspec import GitIgnoreSpec

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.files.rgignore import RipgrepRules

FOLDERS = 30
PATTERNS = 300  # a folder: 9,000 in all, over the 4,096 one call compiles


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pattern lines pathspec is handed to compile, summed."""
    counted = [0]
    from_lines = GitIgnoreSpec.from_lines.__func__  # type: ignore[attr-defined]

    def counting(cls: type[GitIgnoreSpec], lines: Any, *args: Any, **kwargs: Any) -> Any:
        lines = list(lines)
        counted[0] += len(lines)
        return from_lines(cls, lines, *args, **kwargs)

    monkeypatch.setattr(GitIgnoreSpec, "from_lines", classmethod(counting))
    return counted


def nested(workspace: Path, line: str) -> str:
    """FOLDERS folders `d` one in another, each ignoring PATTERNS names made of `line`;
    the path of the one above the deepest."""
    folder = workspace
    for i in range(FOLDERS):
        folder = folder / "d"
        folder.mkdir()
        text = "".join(line.format(i=i, j=j) + "\n" for j in range(PATTERNS))
        (folder / ".gitignore").write_text(text)
    (folder / "f.txt").write_text("hello\n")
    (workspace / ".git").mkdir()
    return "/".join(["d"] * (FOLDERS - 1))


def test_a_list_beneath_folders_of_many_patterns_compiles_a_calls_worth_and_says_so(
    core: Readkeeper, workspace: Path, compiled: list[int]
) -> None:
    path = nested(workspace, "name{i}_{j}")
    compiled[0] = 0
    listed = calls.call(core, "list", {"path": path})
    assert [entry["name"] for entry in listed["entries"]] == [".gitignore", "d"]
    # Before: every folder's file whole (9,000 lines, and more in a bigger tree).
    assert compiled[0] <= RipgrepRules.PATTERNS_MOST + PATTERNS, compiled[0]
    assert "ignore files were not applied" in listed["note"], listed


def test_a_grep_beneath_folders_of_many_patterns_compiles_a_calls_worth(
    core: Readkeeper, workspace: Path, compiled: list[int]
) -> None:
    path = nested(workspace, "/p{i}_{j}_*/x\n!q{j}.txt")
    compiled[0] = 0
    found = calls.call(core, "grep", {"pattern": "hello", "path": path})
    # Before: each folder's file twice and its negations again (27,000 lines here).
    assert compiled[0] <= 2 * RipgrepRules.PATTERNS_MOST + 2 * PATTERNS, compiled[0]
    # Past them ripgrep reads the files above itself, as it does every file it reads
    # otherwise than git: it finds the file, or says where it stopped (ripgrep holds
    # 1.4 GB for these and meets its memory cap).
    if not found["partial"]:
        assert [match["file_path"] for match in found["matches"]] == [
            str(workspace / path / "d" / "f.txt")
        ]
    else:
        assert "ripgrep was stopped" in found["note"], found


def tiny_rules(workspace: Path, depth: int) -> str:
    """A repository `depth` folders deep, each with three ignore files of a line or two;
    the path of the deepest, holding `f.txt`."""
    folder = workspace
    (workspace / ".git").mkdir()
    for _ in range(depth):
        folder = folder / "d"
        folder.mkdir()
        (folder / ".gitignore").write_text("*.log\n!keep.log\n")
        (folder / ".ignore").write_text("tmp*/\n")
        (folder / ".rgignore").write_text("/x\n")
    (folder / "f.txt").write_text("hello\n")
    return "/".join(["d"] * depth)


def test_a_grep_whose_judge_stops_applying_the_rules_above_says_so(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from readkeeper.search import above

    path = tiny_rules(workspace, 100)
    monkeypatch.setattr(above._Rules, "CHECKS_MOST", 50)
    found = calls.call(core, "grep", {"pattern": "hello", "path": path})
    assert [match["file_path"] for match in found["matches"]] == [str(workspace / path / "f.txt")]
    assert "more folders than one call looks at" in found["note"], found


def test_a_list_beneath_a_deep_chain_of_tiny_ignore_files_looks_at_a_calls_worth(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 48: a repository 1,000 folders deep, each with a `.gitignore` of `*.log`, a
    `.ignore` and a `.rgignore` of a line, held a list of its deepest folder 15 s (1,900
    deep: 66 s): each folder on the way is judged by the rules of every folder above it.
    One call's rules look at `CHECKS_MOST` folders' rules in all, and the list says when
    it stopped applying them."""
    from readkeeper.files.ignore_patterns import Patterns

    depth = 300
    path = tiny_rules(workspace, depth)
    looked = [0]
    verdict = Patterns.verdict

    def counting(self: Patterns, relative: str) -> bool | None:
        looked[0] += 1
        return verdict(self, relative)

    monkeypatch.setattr(Patterns, "verdict", counting)
    monkeypatch.setattr(RipgrepRules, "CHECKS_MOST", 10_000)
    listed = calls.call(core, "list", {"path": path})
    assert [entry["name"] for entry in listed["entries"]] == [
        ".gitignore",
        ".ignore",
        ".rgignore",
        "f.txt",
    ]
    # Before: the rules of every folder above each folder on the way (138,150 here).
    assert looked[0] <= 10_000 + 4 * depth, looked[0]
    assert "ignore files were not applied" in listed["note"], listed
