"""`readkeeper/glob` and `readkeeper/list` in-process: order, ignore rules (against git
itself), depth, caps with the way on, and the sandbox."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from test_grep import git_ignored, make_repository

from helpers import tiktoken_count
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.search import listing


def call(core: Readkeeper, method: str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = calls.call(core, method, params)
    return result


def refused(core: Readkeeper, method: str, **params: Any) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, method, params)
    return caught.value


def test_glob_is_newest_first(core: Readkeeper, workspace: Path) -> None:
    for age, name in enumerate(["new.py", "mid.py", "old.py"]):
        path = workspace / name
        path.write_text("x\n")
        os.utime(path, ns=(10**18 - age * 10**9, 10**18 - age * 10**9))
    (workspace / "other.txt").write_text("x\n")
    result = call(core, "glob", pattern="*.py")
    assert result["paths"] == [str(workspace / n) for n in ("new.py", "mid.py", "old.py")]


def test_glob_patterns_are_relative_to_the_folder(core: Readkeeper, workspace: Path) -> None:
    (workspace / "src" / "a").mkdir(parents=True)
    (workspace / "src" / "a" / "x.py").write_text("")
    (workspace / "src" / "y.py").write_text("")
    (workspace / "z.py").write_text("")
    deep = call(core, "glob", pattern="src/**/*.py")
    assert sorted(deep["paths"]) == [
        str(workspace / "src" / "a" / "x.py"),
        str(workspace / "src" / "y.py"),
    ]
    inside = call(core, "glob", pattern="a/*.py", path="src")
    assert inside["paths"] == [str(workspace / "src" / "a" / "x.py")]


def test_glob_and_list_agree_with_git_check_ignore(core: Readkeeper, workspace: Path) -> None:
    files = make_repository(workspace)
    ignored = git_ignored(workspace, files)
    globbed = set(call(core, "glob", pattern="**/*")["paths"])
    listed = {
        str(workspace / e["name"])
        for e in call(core, "list", path=".", depth=10)["entries"]
        if e["kind"] == "file"
    }
    for name in files:
        assert (str(workspace / name) in globbed) == (name not in ignored), name
        assert (str(workspace / name) in listed) == (name not in ignored), name


def test_list_shows_kinds_and_sizes_to_a_depth(
    core: Readkeeper, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "d" / "e").mkdir(parents=True)
    (workspace / "d" / "e" / "deep.txt").write_text("deep")
    (workspace / "d" / "f.txt").write_text("12345")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    (workspace / "out").symlink_to(outside)
    os.mkfifo(workspace / "pipe")
    one = call(core, "list", path=".")
    assert one["entries"] == [
        {"name": "d", "kind": "dir"},
        {"name": "out", "kind": "symlink"},
        {"name": "pipe", "kind": "other"},
    ]
    two = call(core, "list", path=str(workspace), depth=3)
    assert {"name": "d/f.txt", "kind": "file", "size": 5} in two["entries"]
    assert {"name": "d/e/deep.txt", "kind": "file", "size": 4} in two["entries"]
    assert not any("secret" in e["name"] for e in two["entries"])  # a symlink is not entered


def test_list_and_glob_are_capped_with_the_way_on(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(25):
        (workspace / f"f{i:02}.txt").write_text("")
    monkeypatch.setattr(listing, "MAX_ENTRIES", 10)
    monkeypatch.setattr(listing, "MAX_PATHS", 10)
    names: list[str] = []
    params: dict[str, Any] = {"path": "."}
    while True:
        page = call(core, "list", **params)
        names += [e["name"] for e in page["entries"]]
        if "next" not in page:
            break
        assert page["partial"] is True
        assert f"offset={page['next']['offset']}" in page["note"]
        params = page["next"]
    assert names == [f"f{i:02}.txt" for i in range(25)]
    first = call(core, "glob", pattern="*.txt")
    assert first["partial"] is True
    rest = call(core, "glob", **first["next"])
    assert (
        len(first["paths"]) + len(rest["paths"]) + len(call(core, "glob", **rest["next"])["paths"])
        == 25
    )


def test_bad_input_to_list_and_glob(core: Readkeeper, workspace: Path, tmp_path: Path) -> None:
    (workspace / "f.txt").write_text("")
    assert refused(core, "list", path="f.txt").kind == "bad_params"
    assert refused(core, "list", path=".", depth=0).kind == "bad_params"
    assert refused(core, "list", path=str(tmp_path)).kind == "outside_workspace"
    assert refused(core, "list", path="missing").kind == "not_found"
    assert refused(core, "glob", pattern="").kind == "bad_params"
    assert refused(core, "glob", pattern="!*.py").kind == "bad_params"


def test_a_glob_never_brings_back_what_the_ignore_rules_hide(
    core: Readkeeper, workspace: Path
) -> None:
    make_repository(workspace)
    # ripgrep's own --glob would un-ignore these (and list .git's insides).
    assert call(core, "glob", pattern="*.log")["paths"] == [str(workspace / "keep.log")]
    assert call(core, "glob", pattern="**/HEAD")["paths"] == []
    found = calls.call(core, "grep", {"pattern": "needle", "glob": "*.log", "output": "files"})
    assert found["files"] == [str(workspace / "keep.log")]
    deep = calls.call(core, "grep", {"pattern": "needle", "glob": "deep/**", "output": "files"})
    assert deep["files"] == [str(workspace / "deep" / "a" / "b" / "y.txt")]


def test_a_glob_selects_raw_names_as_it_matches_decoded_ones() -> None:
    """The fast path over ripgrep's bytes agrees with the pattern over decoded names,
    multi-byte and non-UTF-8 names included."""
    from readkeeper.search.globs import Glob

    names = [
        b"pkg/mod001.py",
        b"pkg/sub/mod001.py",
        "p\u00e9/mod00\u00e9.py".encode(),
        b"p\xff/mod00\xfe.py",
        b"mod001.py",
        b"src/a/b/c.ts",
        b"src/c.ts",
        b"docs/x.md",
        b"a\nb/mod00.py",
    ]
    for pattern in ["*/mod00*.py", "src/**/*.ts", "**/*.py", "docs/", "x?.py", "p*/*.py"]:
        glob = Glob(pattern)
        decoded = [name for name in names if glob.matches(os.fsdecode(name))]
        assert glob.select(names) == decoded, pattern


@pytest.mark.parametrize("method", ["glob", "list"])
def test_long_names_are_paged_within_the_token_cap(
    core: Readkeeper, workspace: Path, method: str
) -> None:
    """A page of 1,000 names of 200 characters is ~200,000 characters: glob and list
    are budgeted like a read (max_tokens), with the call for the rest."""
    folder = workspace / ("d" * 200)
    folder.mkdir()
    for i in range(600):
        (folder / (f"{i:04}" + "n" * 200 + ".txt")).write_text("")
    counter = core.tokens
    cap = core.settings.max_tokens
    params: dict[str, Any] = (
        {"pattern": "**/*.txt"} if method == "glob" else {"path": ".", "depth": 3}
    )
    seen: list[str] = []
    pages = 0
    while True:
        page = call(core, method, **params)
        pages += 1
        names = page["paths"] if method == "glob" else [e["name"] for e in page["entries"]]
        assert names
        assert counter.count("\n".join(names)) <= cap
        seen += names
        if "next" not in page:
            break
        assert page["partial"] is True
        assert f"offset={page['next']['offset']}" in page["note"]
        params = page["next"]
    assert pages > 1
    assert len([n for n in seen if n.endswith(".txt")]) == 600
    assert len(set(seen)) == len(seen)


def test_an_ignore_line_that_cannot_compile_leaves_the_rest_applied(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / ".git").mkdir()  # a repository: ripgrep's rules apply `.gitignore` there only
    (workspace / ".gitignore").write_text("[z-a]\n*.log\n")
    (workspace / "a.txt").write_text("x\n")
    (workspace / "b.log").write_text("x\n")
    listed = call(core, "list", path=".", depth=2)
    assert {e["name"] for e in listed["entries"]} == {".gitignore", "a.txt"}
    error = refused(core, "glob", pattern="[z-a]")
    assert error.kind == "bad_params"


@pytest.mark.parametrize("method", ["glob", "list"])
def test_hostile_names_are_paged_within_the_token_cap_as_sent(
    core: Readkeeper, workspace: Path, method: str
) -> None:
    """The cap counts each name as it is sent (escaped), not as the file system holds
    it: 300 names of controls, quotes, backslashes and a bidirectional override, sent
    as the LSP's JSON (orjson, as lsp/endpoint.py writes it), stay within max_tokens
    with a small allowance for the note and the next call; before, about 1.5 times it."""
    for i in range(300):
        (workspace / (f"{i:04d}" + '\x01 "\\\u202ex' * 25 + "abc.txt")).write_text("")
    cap = 4000
    core.configure({"max_tokens": cap})
    params: dict[str, Any] = {"pattern": "**/*"} if method == "glob" else {"path": "."}
    page = call(core, method, **params)
    assert tiktoken_count(orjson.dumps(page).decode()) <= cap + 200
    assert "cut by the token cap (max_tokens)" in page["note"]
    assert page["next"]["offset"] > 0


@pytest.mark.parametrize("moved", ["a subfolder's folder", "the folder listed"])
def test_a_folder_moved_out_as_it_is_listed_shows_nothing_of_where_it_went(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moved: str
) -> None:
    """Round 46 R3: a racing process moved `top` out of the root and swapped a folder
    that was never inside into it as `sub`: a list of `top` to depth 3 went on through
    its descriptors and showed that folder's names and sizes. A folder's entries are
    shown only if it is still at its place beneath the root once they are read."""
    outside = tmp_path / "outside"
    (outside / "secretdir").mkdir(parents=True)
    (outside / "secretdir" / "SECRET_NAME").write_text("S")
    (workspace / "top" / "sub").mkdir(parents=True)
    (workspace / "top" / "sub" / "mine.txt").write_text("m")
    core = Readkeeper(roots=[str(workspace)])
    real_open, real_scandir = os.open, os.scandir

    def swap() -> None:
        os.rename(workspace / "top", outside / "top_out")
        os.rename(outside / "top_out" / "sub", outside / "sub_was")
        os.rename(outside / "secretdir", outside / "top_out" / "sub")

    def racing_open(path: Any, *args: Any, **kwargs: Any) -> int:
        if path == "sub" and kwargs.get("dir_fd") is not None:
            swap()  # after `top` was read in its place, before `sub` is entered
        return real_open(path, *args, **kwargs)

    def racing_scandir(path: Any = ".") -> Any:
        listed = real_scandir(path)
        if isinstance(path, int) and not (outside / "top_out").exists():
            swap()  # `top` read, then moved out before it is checked
        return listed

    if moved == "the folder listed":
        monkeypatch.setattr(os, "scandir", racing_scandir)
    else:
        monkeypatch.setattr(os, "open", racing_open)
    try:
        answer: Any = calls.call(core, "list", {"path": "top", "depth": 3})
    except ReadkeeperError as refused:  # the folder listed moved: nothing shown of it
        answer = refused
    finally:
        monkeypatch.undo()
        core.close()
    if moved == "the folder listed":
        assert isinstance(answer, ReadkeeperError), answer
        assert "SECRET" not in answer.message
        return
    assert "SECRET" not in orjson.dumps(answer).decode()
    assert [entry["name"] for entry in answer["entries"]] == ["sub"]
    assert answer["partial"] is True
    assert answer["note"].startswith("Not listed: what sub held (moved out of its place"), answer


def test_entries_it_may_not_look_at_are_said_never_listed_as_nothing(workspace: Path) -> None:
    """Round 48: a folder one may read but not search (mode 644) was listed as empty,
    and its parent's list showed it with nothing beneath, without a word. The entries
    that cannot be looked at are named in the note, and the page is partial. Run as a
    user the folder's mode holds (root's overrides dropped)."""
    import shutil
    import subprocess
    import sys

    (workspace / "sub").mkdir()
    (workspace / "sub" / "f.txt").write_text("x\n")
    (workspace / "sub").chmod(0o644)
    drop = ["--bounding-set=-dac_override,-dac_read_search", "--"]
    as_user = [shutil.which("setpriv") or "setpriv", *drop] if os.geteuid() == 0 else []
    script = (
        "import json, sys\n"
        "from readkeeper import calls\n"
        "from readkeeper.core import Readkeeper\n"
        "core = Readkeeper(roots=[sys.argv[1]])\n"
        "print(json.dumps([calls.call(core, 'list', {'path': p, 'depth': 2})"
        " for p in ('sub', '.')]))\n"
    )
    try:
        done = subprocess.run(
            [*as_user, sys.executable, "-c", script, str(workspace)],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
    finally:
        (workspace / "sub").chmod(0o755)
    inside, above = json.loads(done.stdout)
    assert inside["entries"] == []
    assert inside["partial"] is True
    assert (
        "Not listed: 1 entry readkeeper may not look at (permission denied): f.txt"
        in (inside["note"])
    )
    assert [entry["name"] for entry in above["entries"]] == ["sub"]
    assert "(permission denied): sub/f.txt." in above["note"]
