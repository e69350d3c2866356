"""Reads made ahead while the agent thinks (read/ahead.py, issue 34): the files an agent
is likely to read next are made as a whole read makes them, through the same functions,
so its first read finds the outline and the counts in the read's caches; never while a
call is in flight, within a budget, never outside the roots (no symlink followed, no
FIFO opened, no huge or binary file read), never writing a user file, and never
changing what a read answers."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from helpers import read
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.files.fileio import digest
from readkeeper.read import ahead, ahead_sources
from readkeeper.read.readers import outline
from readkeeper.read.readers import text as text_reader
from readkeeper.read.readers.grammars import PYTHON
from readkeeper.state.buffers import Buffer
from watch_core_helpers import Watching, wait_for

# A module over outline_over_tokens (8,000) and under ahead.MAX_BYTES: read whole, it
# answers its outline.
BIG = "".join(
    f"class Sibling{i}:\n    def run(self, value):\n        return value + {i}\n\n"
    for i in range(600)
)
SMALL = "def tiny():\n    return 'small and whole'\n"


def _core(root: Path, **settings: object) -> Readkeeper:
    core = Readkeeper(roots=[str(root)], client_settings=settings or None)
    core.tokens.warm_up()
    core.ahead.busy = lambda: False  # the shared test machine's load must not decide
    return core


def _tree(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every regular file under `root`: its bytes and mtime (a FIFO is only named)."""
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_fifo() or path.is_symlink() or not path.is_file():
            continue
        found[str(path)] = (path.read_bytes(), path.stat().st_mtime_ns)
    return found


def _cold(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Forget what this process made of any file: the outlines and views in memory, and
    the user's cache folder (another one)."""
    with outline._languages_lock:
        outline._cache.clear()
    with text_reader._VIEWS_LOCK:
        text_reader._VIEWS.clear()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cold-cache"))


def test_a_read_answers_byte_for_byte_the_same_with_reading_ahead_on_and_off(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = workspace / "first.py"
    first.write_text(SMALL)
    sibling = workspace / "sibling.py"
    sibling.write_text(BIG)
    small = workspace / "small.py"
    small.write_text(SMALL.replace("small", "little"))
    before = _tree(workspace)

    core = _core(workspace)
    try:
        calls.call(core, "readkeeper/read", {"file_path": str(first)})
        assert core.ahead.settle(120)  # the worker ran once the call ended
        assert {str(sibling), str(small)} <= set(core.ahead.made)
        # It filled the read's own caches: the outline by the content's digest.
        assert outline.recall(PYTHON, digest(sibling.read_bytes())) is not None
        warm = [json.dumps(read(core, p), sort_keys=True) for p in (sibling, small)]
    finally:
        core.close()
    assert _tree(workspace) == before  # nothing written, not even a file's mtime

    _cold(monkeypatch, tmp_path)
    off = _core(workspace, read_ahead=False)
    try:
        calls.call(off, "readkeeper/read", {"file_path": str(first)})
        assert off.ahead.settle(120)
        assert list(off.ahead.made) == []
        assert outline.recall(PYTHON, digest(sibling.read_bytes())) is None
        cold = [json.dumps(read(off, p), sort_keys=True) for p in (sibling, small)]
    finally:
        off.close()
    assert json.loads(warm[0])["type"] == "outline"
    assert json.loads(warm[1])["type"] == "text"
    assert warm == cold


def test_reading_ahead_never_reads_outside_the_roots_nor_a_fifo_a_huge_or_binary_file(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.py"
    secret.write_text(BIG.replace("Sibling", "Secret"))
    folder = workspace / "pkg"
    folder.mkdir()
    (folder / "first.py").write_text(SMALL)
    (folder / "link.py").symlink_to(secret)  # a sibling that is a symlink out
    (workspace / "out").symlink_to(outside, target_is_directory=True)
    os.mkfifo(folder / "pipe.py")  # opening it for reading would wait for a writer
    huge = folder / "huge.py"
    huge.write_text(BIG * ((ahead.MAX_BYTES // len(BIG)) + 2))
    (folder / "blob.py").write_bytes(b"\x00\x01binary\x00" * 100)
    plain = folder / "plain.py"
    plain.write_text(SMALL.replace("tiny", "plain"))

    class Open:
        """The editor's documents: one through a symlinked folder, one outside."""

        def get(self, real_path: str) -> Buffer | None:
            return None

        def paths(self) -> list[str]:
            return [str(workspace / "out" / "secret.py"), str(secret)]

    core = Readkeeper(roots=[str(workspace)], buffers=Open())
    core.tokens.warm_up()
    core.ahead.busy = lambda: False
    try:
        core.ahead.read(str(folder / "first.py"))
        core.ahead.run_once()
        assert list(core.ahead.made) == [str(plain)]
        assert outline.recall(PYTHON, digest(secret.read_bytes())) is None
        assert outline.recall(PYTHON, digest(huge.read_bytes())) is None
    finally:
        core.close()


def test_nothing_is_read_ahead_while_a_call_is_in_flight(workspace: Path) -> None:
    (workspace / "first.py").write_text(SMALL)
    (workspace / "next.py").write_text(SMALL.replace("tiny", "next"))
    core = _core(workspace)
    try:
        core.ahead.read(str(workspace / "first.py"))
        with core.ahead.call():
            assert core.ahead.run_once() == 0
        assert core.ahead.counts["stopped_by_call"] == 1
        assert core.ahead.run_once() == 1  # once it ended
    finally:
        core.close()


def test_the_setting_turns_it_off_and_a_busy_machine_or_an_unloaded_table_stop_it(
    workspace: Path,
) -> None:
    (workspace / "first.py").write_text(SMALL)
    (workspace / "next.py").write_text(SMALL.replace("tiny", "next"))
    off = _core(workspace, read_ahead=False)
    busy = _core(workspace)
    busy.ahead.busy = lambda: True
    unloaded = Readkeeper(roots=[str(workspace)])
    unloaded.ahead.busy = lambda: False
    try:
        for core in (off, busy, unloaded):
            core.ahead.read(str(workspace / "first.py"))
            assert core.ahead.run_once() == 0
        assert unloaded.tokens.state == "unloaded"  # it did not load the table either
    finally:
        for core in (off, busy, unloaded):
            core.close()


def test_one_trigger_makes_a_bounded_number_of_files_the_likely_ones_first(
    workspace: Path,
) -> None:
    (workspace / "first.py").write_text(SMALL)
    for i in range(ahead.FILES_PER_TRIGGER + 4):
        path = workspace / f"other{i}.txt"
        path.write_text(f"text {i}\n")
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
    for i in range(3):
        path = workspace / f"mod{i}.py"
        path.write_text(SMALL.replace("tiny", f"mod{i}"))
        os.utime(path, (1_000 + i, 1_000 + i))
    core = _core(workspace)
    try:
        core.ahead.read(str(workspace / "first.py"))
        assert core.ahead.run_once() == ahead.FILES_PER_TRIGGER
        # The same extension first (newest first), then the others.
        assert list(core.ahead.made) == [
            str(workspace / "mod2.py"),
            str(workspace / "mod1.py"),
            str(workspace / "mod0.py"),
            str(workspace / f"other{ahead.FILES_PER_TRIGGER + 3}.txt"),
        ]
        core.ahead.run_once()  # the next trigger goes on where it stopped
        assert len(core.ahead.made) == 2 * ahead.FILES_PER_TRIGGER
        assert len(set(core.ahead.made)) == len(core.ahead.made)
    finally:
        core.close()


def test_open_documents_and_the_files_git_status_names_come_before_siblings(
    workspace: Path,
) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", str(workspace)], check=True, env=env)
    sub = workspace / "sub"
    sub.mkdir()
    (sub / "first.py").write_text(SMALL)
    (sub / "sibling.py").write_text(SMALL.replace("tiny", "sibling"))
    changed = workspace / "changed.py"
    changed.write_text(SMALL.replace("tiny", "changed"))
    opened = workspace / "opened.py"
    opened.write_text(SMALL.replace("tiny", "opened"))

    class Open:
        def get(self, real_path: str) -> Buffer | None:
            if real_path == str(opened):
                return Buffer(SMALL.replace("tiny", "unsaved"), 3)
            return None

        def paths(self) -> list[str]:
            return [str(opened)]

    core = Readkeeper(roots=[str(workspace)], buffers=Open())
    core.tokens.warm_up()
    core.ahead.busy = lambda: False
    try:
        # The git status attachment tells the worker what it found: the worker never
        # runs git itself.
        attached = calls.call(core, "readkeeper/attachments", {"types": ["git_status"]})
        if not attached["attachments"]:
            pytest.skip(f"no git status here: {attached['dropped']}")
        core.ahead.read(str(sub / "first.py"))
        core.ahead.run_once()
        made = list(core.ahead.made)
        assert made[0] == str(opened)
        assert made.index(str(changed)) < made.index(str(sub / "sibling.py"))
        core.trusted = False  # restricted mode: not even what an earlier status named
        assert core.ahead._git_status() == []
    finally:
        core.close()


def test_the_names_git_status_gives_are_taken_as_paths_only_when_plain() -> None:
    answer = "\n".join(
        [
            "git status of /r: branch main, 5 changed files",
            " M src/a.py",
            "R  old.py -> new.py",
            '?? "quoted\\tname.py"',
            "?? folder/",
            "If you trust this repository, run `git status` yourself.",
        ]
    )
    assert ahead_sources.status_paths(answer, "/r", 10) == ["/r/src/a.py", "/r/new.py"]


def test_files_the_watcher_saw_change_come_before_siblings(workspace: Path) -> None:
    sub = workspace / "sub"
    sub.mkdir()
    (sub / "first.py").write_text(SMALL)
    (sub / "sibling.py").write_text(SMALL.replace("tiny", "sibling"))
    w = Watching(workspace).start()
    core = w.core
    core.tokens.warm_up()
    core.ahead.busy = lambda: False
    try:
        core.ahead.run_once()  # nothing read yet: it only starts listening
        changed = workspace / "elsewhere.py"
        changed.write_text(SMALL.replace("tiny", "elsewhere"))
        wait_for(lambda: str(changed) in core.ahead._changed, "the watcher's event")
        core.ahead.read(str(sub / "first.py"))
        core.ahead.run_once()
        assert list(core.ahead.made) == [str(changed), str(sub / "sibling.py")]
    finally:
        core.close()


def test_the_modules_the_last_read_imports_come_before_its_siblings(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text(SMALL.replace("tiny", "secret"))
    pkg = workspace / "app" / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (workspace / "app" / "__init__.py").write_text("")
    (workspace / "app" / "helpers.py").write_text(SMALL.replace("tiny", "helpers"))
    (pkg / "__init__.py").write_text("")
    (pkg / "models.py").write_text(SMALL.replace("tiny", "models"))
    (pkg / "sub" / "__init__.py").write_text(SMALL.replace("tiny", "sub"))
    (pkg / "sub" / "deep.py").write_text(SMALL.replace("tiny", "deep"))
    (pkg / "sibling.py").write_text(SMALL.replace("tiny", "sibling"))
    (pkg / "linked.py").symlink_to(outside / "secret.py")  # imported, and a symlink out
    first = pkg / "first.py"
    first.write_text(
        "import os\nfrom . import models, linked\nfrom .sub import deep as d\n"
        "from .. import helpers\nfrom ....... import escape\nimport app.pkg.sub\n"
        "try:\n    import missing\nexcept ImportError:\n    pass\n" + SMALL
    )
    core = _core(workspace)
    try:
        core.ahead.read(str(first))
        assert core.ahead._imports() == [
            str(pkg / "models.py"),
            str(pkg / "linked.py"),
            str(pkg / "sub" / "__init__.py"),
            str(pkg / "sub" / "deep.py"),
            str(workspace / "app" / "helpers.py"),
        ]
        core.ahead.run_once()
        core.ahead.run_once()
        made = list(core.ahead.made)
        # What it imports first (the symlink out never read), then the siblings.
        assert made[:4] == [
            str(pkg / "models.py"),
            str(pkg / "sub" / "__init__.py"),
            str(pkg / "sub" / "deep.py"),
            str(workspace / "app" / "helpers.py"),
        ]
        assert str(pkg / "sibling.py") in made[4:]
        assert not any("secret" in path or "linked" in path for path in made)
    finally:
        core.close()


def test_a_call_arriving_mid_work_stops_it_before_the_next_file(workspace: Path) -> None:
    names = [workspace / f"open{i}.py" for i in range(3)]
    for path in names:
        path.write_text(SMALL.replace("tiny", path.stem))
    arrived = []

    class Open:
        """The editor's documents; listing them, the worker meets a call arriving."""

        def get(self, real_path: str) -> Buffer | None:
            return None

        def paths(self) -> list[str]:
            call = core.ahead.call()
            call.__enter__()
            arrived.append(call)
            return [str(path) for path in names]

    core = Readkeeper(roots=[str(workspace)], buffers=Open())
    core.tokens.warm_up()
    core.ahead.busy = lambda: False
    try:
        assert core.ahead.run_once() == 0
        assert core.ahead.counts["stopped_by_call"] == 1
        arrived.pop().__exit__(None, None, None)
    finally:
        core.close()


def test_a_file_the_ignore_rules_skip_is_not_read_ahead(workspace: Path) -> None:
    sub = workspace / "sub"
    sub.mkdir()
    (workspace / ".gitignore").write_text("ignored_*.py\n")
    (sub / "first.py").write_text(SMALL)
    (sub / "ignored_one.py").write_text(SMALL.replace("tiny", "ignored"))
    (sub / "kept.py").write_text(SMALL.replace("tiny", "kept"))
    w = Watching(workspace).start()
    core = w.core
    core.tokens.warm_up()
    core.ahead.busy = lambda: False
    try:
        core.ahead.read(str(sub / "first.py"))
        core.ahead.run_once()
        assert list(core.ahead.made) == [str(sub / "kept.py")]
    finally:
        core.close()
