"""`readkeeper/grep` in-process: the search itself, its budget and the way on, bad input,
the sandbox (symlinks, FIFOs, the ripgrep binary and its config), and its lines counting
as seen for an edit."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.search import grep as grep_module
from readkeeper.search import rg
from readkeeper.search.seen import record_shown


def grep(core: Readkeeper, **params: Any) -> dict[str, Any]:
    """A search, its proof done (after the answer, state/later.py): what the test does
    next lands after both, as an agent's next move does."""
    result: dict[str, Any] = calls.call(core, "grep", params)
    core.read_states.later.settle()
    return result


def refused(core: Readkeeper, method: str, **params: Any) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, method, params)
    return caught.value


def edit(core: Readkeeper, path: Path, old: str, new: str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = calls.call(
        core, "edit", {"file_path": str(path), "old_string": old, "new_string": new, **params}
    )
    return result


# --- the search ------------------------------------------------------------------------------


def test_matches_are_numbered_with_context_in_path_and_line_order(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "b.py").write_text("one\nneedle two\nthree\n")
    (workspace / "a.py").write_text("needle\nx\ny\nz\nNEEDLE\n")
    result = grep(core, pattern="needle", context=1)
    shown = [
        (Path(m["file_path"]).name, m["line"], m["text"], "context" in m) for m in result["matches"]
    ]
    assert shown == [
        ("a.py", 1, "needle", False),
        ("a.py", 2, "x", True),
        ("b.py", 1, "one", True),
        ("b.py", 2, "needle two", False),
        ("b.py", 3, "three", True),
    ]
    assert result["partial"] is False
    assert "next" not in result


def test_case_multiline_files_and_counts(core: Readkeeper, workspace: Path) -> None:
    (workspace / "a.txt").write_text("Alpha\nbeta\nALPHA alpha\n")
    (workspace / "b.txt").write_text("nothing\n")
    insensitive = grep(core, pattern="alpha", case_sensitive=False)
    assert [m["line"] for m in insensitive["matches"]] == [1, 3]
    assert [m["line"] for m in grep(core, pattern="alpha")["matches"]] == [3]
    spanning = grep(core, pattern=r"Alpha\nbeta", multiline=True)
    assert [(m["line"], m["text"]) for m in spanning["matches"]] == [(1, "Alpha"), (2, "beta")]
    assert "multiline: true" in refused(core, "grep", pattern=r"Alpha\nbeta").message
    files = grep(core, pattern="(?i)alpha", output="files")
    assert files["files"] == [str(workspace / "a.txt")]
    counts = grep(core, pattern="(?i)alpha", output="counts")
    assert counts["counts"] == [{"file_path": str(workspace / "a.txt"), "count": 3}]


def test_path_and_glob_narrow_the_search(core: Readkeeper, workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "m.py").write_text("needle\n")
    (workspace / "src" / "m.txt").write_text("needle\n")
    (workspace / "top.py").write_text("needle\n")
    found = grep(core, pattern="needle", path="src", glob="*.py", output="files")
    assert found["files"] == [str(workspace / "src" / "m.py")]
    one = grep(core, pattern="needle", path=str(workspace / "top.py"))
    assert [m["file_path"] for m in one["matches"]] == [str(workspace / "top.py")]


def test_binary_files_are_skipped(core: Readkeeper, workspace: Path) -> None:
    (workspace / "blob.bin").write_bytes(b"needle\x00\x01\x02" * 100)
    (workspace / "text.txt").write_text("needle\n")
    assert grep(core, pattern="needle", output="files")["files"] == [str(workspace / "text.txt")]


# --- the budget and the way on -----------------------------------------------------------------


def test_a_capped_search_names_the_call_that_shows_the_rest(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "many.txt").write_text("".join(f"hit {i}\n" for i in range(1, 251)))
    first = grep(core, pattern="hit")
    assert len(first["matches"]) == grep_module.DEFAULT_MAX_MATCHES
    assert first["partial"] is True
    assert first["next"] == {"pattern": "hit", "offset": 100}
    assert "offset=100" in first["note"]
    second = grep(core, **first["next"])
    assert [m["line"] for m in second["matches"]][:2] == [101, 102]
    third = grep(core, **second["next"])
    assert [m["line"] for m in third["matches"]][-1] == 250
    assert third["partial"] is False
    assert "next" not in third


def test_a_long_line_is_shown_cut_and_the_token_cap_holds(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "wide.txt").write_text(("word " * 5000 + "needle\n") * 50)
    core.configure({"max_tokens": 2000})
    result = grep(core, pattern="needle", max_matches=50)
    assert all(len(m["text"]) <= grep_module.MAX_LINE_CHARS for m in result["matches"])
    assert "shown cut" in result["note"]
    assert sum(core.tokens.count(m["text"]) for m in result["matches"]) <= 2000
    assert result["partial"] is True
    assert "next" in result


def test_a_run_stopped_by_its_deadline_answers_with_what_it_found(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(200):
        (workspace / f"f{i}.txt").write_text("needle\n" * 50)
    monkeypatch.setattr(rg, "DEADLINE_S", 0.0)
    result = grep(core, pattern="needle")
    assert result["partial"] is True
    assert "ran out of time" in result["note"]


def test_a_run_stopped_at_its_output_cap_is_partial(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "a.txt").write_text("needle\n" * 500)
    monkeypatch.setattr(grep_module, "COLLECT_CAP", 20)
    result = grep(core, pattern="needle", max_matches=1000)
    assert result["partial"] is True
    assert "found more than it can hold" in result["note"]


@pytest.mark.parametrize("output", ["matches", "files", "counts"])
def test_every_output_says_once_that_the_run_stopped(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch, output: str
) -> None:
    for i in range(40):  # more files than the cap, for `files`
        (workspace / f"f{i}.txt").write_text("needle\n" * 20)
    monkeypatch.setattr(grep_module, "COLLECT_CAP", 20)
    result = grep(core, pattern="needle", max_matches=1000, output=output)
    assert result["partial"] is True
    assert result["note"].count("did not look everywhere") == 1, result["note"]
    assert result["note"].endswith("or a more specific pattern."), result["note"]


# --- bad input -------------------------------------------------------------------------------


def test_a_pattern_that_does_not_compile_is_bad_params_with_its_position(
    core: Readkeeper,
) -> None:
    error = refused(core, "grep", pattern="ab(c")
    assert error.kind == "bad_params"
    assert error.data["field"] == "pattern"
    assert error.data["position"] == 2
    assert "unclosed group" in error.message


def test_a_trailing_backslash_is_named_as_such(core: Readkeeper) -> None:
    # ripgrep wraps the pattern in "(?:...)": its own words would say "unclosed group".
    error = refused(core, "grep", pattern="ab\\")
    assert error.kind == "bad_params"
    assert error.data["position"] == 2
    assert "trailing backslash" in error.message
    assert "unclosed group" not in error.message


def test_a_line_break_in_the_pattern_asks_for_multiline(core: Readkeeper) -> None:
    error = refused(core, "grep", pattern="a\nb")
    assert error.kind == "bad_params"
    assert error.data["field"] == "pattern"
    assert "multiline" in error.message
    assert "could not read" not in error.message


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"pattern": ""}, "pattern"),
        ({"pattern": "x", "context": -1}, "context"),
        ({"pattern": "x", "context": 1000}, "context"),
        ({"pattern": "x", "max_matches": 0}, "max_matches"),
        ({"pattern": "x", "output": "lines"}, "output"),
    ],
)
def test_bad_params_name_the_field(core: Readkeeper, params: dict[str, Any], field: str) -> None:
    error = refused(core, "grep", **params)
    assert error.kind == "bad_params"
    assert error.data["field"] == field


def test_a_path_outside_the_roots_is_refused(core: Readkeeper, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("needle\n")
    assert refused(core, "grep", pattern="needle", path=str(outside)).kind == "outside_workspace"
    assert refused(core, "grep", pattern="needle", path="../outside").kind == "outside_workspace"


def test_a_missing_path_is_not_found(core: Readkeeper, workspace: Path) -> None:
    assert refused(core, "grep", pattern="x", path="nope").kind == "not_found"


# --- the sandbox -------------------------------------------------------------------------------


def test_symlinks_out_of_the_root_are_never_followed(
    core: Readkeeper, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("needle\n")
    (workspace / "link_dir").symlink_to(outside)
    (workspace / "link_file.txt").symlink_to(outside / "secret.txt")
    (workspace / "loop").symlink_to(workspace)
    (workspace / "real.txt").write_text("needle\n")
    result = grep(core, pattern="needle")
    assert {m["file_path"] for m in result["matches"]} == {str(workspace / "real.txt")}
    # A symlink given as the path resolves to its target, which is outside.
    assert refused(core, "grep", pattern="needle", path="link_dir").kind == "outside_workspace"


def test_fifos_are_skipped_in_a_walk_and_refused_as_the_path(
    core: Readkeeper, workspace: Path
) -> None:
    os.mkfifo(workspace / "pipe")
    (workspace / "real.txt").write_text("needle\n")
    result = grep(core, pattern="needle")  # would hang for good if the FIFO were opened
    assert [m["file_path"] for m in result["matches"]] == [str(workspace / "real.txt")]
    assert refused(core, "grep", pattern="needle", path="pipe").kind == "unsupported"


def test_ripgreps_config_and_path_are_never_used(
    core: Readkeeper, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("needle\n")
    (workspace / "link_dir").symlink_to(outside)
    config = tmp_path / "rgrc"
    config.write_text("--follow\n--no-ignore\n")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(config))
    fake = tmp_path / "bin"
    fake.mkdir()
    marker = tmp_path / "ran"
    (fake / "rg").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (fake / "rg").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    (workspace / "real.txt").write_text("needle\n")
    result = grep(core, pattern="needle")
    assert {m["file_path"] for m in result["matches"]} == {str(workspace / "real.txt")}
    assert not marker.exists()
    # The wheel's own binary, in this environment, not the one first on PATH.
    assert Path(rg.binary()).is_relative_to(os.path.realpath(sys.prefix))


def test_a_printed_path_that_leads_out_is_dropped(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "out").mkdir()
    (root / "swapped").symlink_to(tmp_path / "out")
    assert rg.beneath(str(root), str(root), "./sub/a.txt") == str(root / "sub" / "a.txt")
    assert rg.beneath(str(root), str(root), "../out/a.txt") is None
    assert rg.beneath(str(root), str(root), "/etc/passwd") is None
    assert rg.beneath(str(root), str(root), "./swapped/a.txt") is None
    assert rg.beneath(str(root), str(root), "sub/../../out/a.txt") is None
    # ".." within a name is no step up; a run in a subfolder joins its own paths.
    assert rg.beneath(str(root), str(root), "sub/a..b") == str(root / "sub" / "a..b")
    sub = str(root / "sub")
    assert rg.beneath(str(root), sub, "a.txt") == str(root / "sub" / "a.txt")
    assert rg.beneath(str(root), sub + os.sep, "./a.txt") == str(root / "sub" / "a.txt")
    assert rg.beneath(str(root), sub, "../swapped/a.txt") is None


# --- lines shown count as seen ---------------------------------------------------------------


def test_an_edit_within_lines_a_search_showed_needs_no_read(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "m.py"
    path.write_text("def f():\n    return needle\n\nother\n")
    assert refused(core, "edit", file_path=str(path), old_string="needle", new_string="x").kind == (
        "not_read"
    )
    grep(core, pattern="needle")
    result = edit(core, path, "return needle", "return 1")
    assert result["replacements"] == 1
    assert path.read_text() == "def f():\n    return 1\n\nother\n"


def test_a_search_in_one_session_lets_no_other_session_edit(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "m.py"
    path.write_text("needle\n")
    grep(core, pattern="needle", session="a")
    error = refused(
        core, "edit", file_path=str(path), old_string="needle", new_string="x", session="b"
    )
    assert error.kind == "not_read"


def test_a_file_changed_where_the_search_showed_it_is_stale(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "m.py"
    path.write_text("a\nneedle = 1\nb\n")
    grep(core, pattern="needle")
    path.write_text("a\nneedle = 2\nb\n")  # someone else changed the very line
    error = refused(core, "edit", file_path=str(path), old_string="needle = 2", new_string="x")
    assert error.kind == "stale"
    assert "needle = 1" in error.data["diff"]
    assert path.read_text() == "a\nneedle = 2\nb\n"


def test_files_and_counts_outputs_show_no_lines_so_record_nothing(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "m.py"
    path.write_text("needle\n")
    grep(core, pattern="needle", output="files")
    grep(core, pattern="needle", output="counts")
    assert core.read_states.get("", str(path)) is None


def test_lines_that_no_longer_say_what_was_shown_are_not_recorded(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "m.py"
    path.write_text("needle now\n")
    # What ripgrep showed before the file changed under it.
    assert record_shown(core, "", {str(path): {1: "needle then"}}) == []
    assert core.read_states.get("", str(path)) is None
    assert record_shown(core, "", {str(path): {1: "needle now"}}) == [str(path)]


def test_a_read_after_a_search_returns_the_content_not_a_stub(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "m.py"
    path.write_text("needle\nmore\n")
    grep(core, pattern="needle")
    result = calls.call(core, "read", {"file_path": str(path)})
    assert result["type"] == "text"
    assert "more" in result["file"]["content"]


def test_ignore_rules_agree_with_git_check_ignore(core: Readkeeper, workspace: Path) -> None:
    files = make_repository(workspace)
    ignored = git_ignored(workspace, files)
    assert ignored, "the repository should ignore some files"
    found = set(grep(core, pattern="needle", output="files", max_matches=2000)["files"])
    for name in files:
        assert (str(workspace / name) in found) == (name not in ignored), name


def make_repository(root: Path) -> list[str]:
    """A git repository with nested, negated and excluded ignore rules; every file says
    "needle". Returns the files, relative."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("*.log\nbuild/\n/only_top.txt\n!keep.log\ndeep/**/x.txt\n")
    (root / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("excluded.txt\n")
    names = [
        "a.txt",
        "a.log",
        "keep.log",
        "build/out.txt",
        "only_top.txt",
        "sub/only_top.txt",
        "excluded.txt",
        "sub/excluded.txt",
        "deep/a/b/x.txt",
        "deep/a/b/y.txt",
        "sub/.gitignore",
        "sub/local.tmp",
        "sub/inner/local.tmp",
        "sub/inner/ok.txt",
        ".hidden.txt",
    ]
    for name in names:
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if name != "sub/.gitignore":
            target.write_text("needle\n")
    (root / "sub" / ".gitignore").write_text("*.tmp\n")
    return [n for n in names if n != "sub/.gitignore"]


def git_ignored(root: Path, names: list[str]) -> set[str]:
    """The names git itself ignores."""
    done = subprocess.run(
        ["git", "-C", str(root), "check-ignore", "--no-index", *names],
        capture_output=True,
        text=True,
    )
    return set(done.stdout.split())


def test_a_file_mode_bit_is_no_reason_to_skip(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "run.sh"
    path.write_text("needle\n")
    path.chmod(stat.S_IRWXU)
    assert grep(core, pattern="needle", output="files")["files"] == [str(path)]


def test_context_before_the_first_match_and_a_token_cut_lose_no_match(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("before\nneedle 1\n" + "needle x\n" * 200)
    first = grep(core, pattern="needle", context=1, max_matches=1)
    assert [(m["line"], "context" in m) for m in first["matches"]] == [(1, True), (2, False)]
    core.configure({"max_tokens": 300})
    lines: list[int] = []
    params: dict[str, Any] = {"pattern": "needle", "max_matches": 500}
    while True:
        page = grep(core, **params)
        lines += [m["line"] for m in page["matches"] if "context" not in m]
        if "next" not in page:
            break
        params = page["next"]
    assert lines == list(range(2, 203))


def test_an_edit_of_lines_no_search_showed_needs_a_read(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "m.py"
    path.write_text("needle = 1\nsecret = 2\nmore = 3\n")
    grep(core, pattern="needle")
    error = refused(core, "edit", file_path=str(path), old_string="secret = 2", new_string="x")
    assert error.kind == "not_read"
    assert '"offset": 2' in error.message
    spanning = refused(
        core, "edit", file_path=str(path), old_string="needle = 1\nsecret", new_string="x"
    )
    assert spanning.kind == "not_read"
    assert path.read_text() == "needle = 1\nsecret = 2\nmore = 3\n"
    calls.call(core, "read", {"file_path": str(path), "offset": 2, "limit": 1})
    assert edit(core, path, "secret = 2", "secret = 3")["replacements"] == 1


def test_long_matching_lines_are_held_within_a_byte_cap(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rg, "MAX_OUTPUT_BYTES", 1 << 20)
    line = "needle " + "x" * 200_000 + "\n"
    for i in range(20):
        (workspace / f"min{i}.js").write_text(line * 2)
    result = grep(core, pattern="needle", max_matches=1000)
    assert result["partial"] is True
    assert "found more than it can hold" in result["note"]
    assert all(len(m["text"]) <= grep_module.MAX_LINE_CHARS for m in result["matches"])


@pytest.mark.parametrize("pattern", ["(" * 5000, "(?:" * 3000])
def test_a_pattern_nested_past_any_parser_is_bad_params(core: Readkeeper, pattern: str) -> None:
    error = refused(core, "grep", pattern=pattern)
    assert error.kind == "bad_params"
    assert error.data["field"] == "pattern"


def test_a_pattern_longer_than_an_argument_can_be_is_bad_params(core: Readkeeper) -> None:
    error = refused(core, "grep", pattern="a" * 200_000)
    assert error.kind == "bad_params"
    assert error.data["field"] == "pattern"
    assert len(error.message) < 500
