"""The watcher and change notices in-process: real files, real watchdog, real inotify.

Waiting is always a poll with a deadline. "Exactly one notice" is checked after a
sentinel: a later write to another read file, whose notice can only come once every
earlier event has been looked at (events reach the watcher in order, and a batch's
notices are sent together).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from readkeeper.core import Readkeeper
from readkeeper.files import ignore
from readkeeper.files.ignore import IgnoreRules
from readkeeper.protocol import (
    ChangesParams,
    EditParams,
    FileChange,
    ForgetParams,
    ReadParams,
    WriteParams,
)
from readkeeper.watch.probes import filesystem_type
from readkeeper.watch.watcher import Watcher, outermost
from watch_core_helpers import Watching, wait_for
from watch_helpers import make, save_like_a_formatter


@pytest.fixture
def watching(workspace: Path) -> Iterator[Watching]:
    """A core watching the workspace with the default settings."""
    w = Watching(workspace)
    yield w.start()
    w.close()


@pytest.fixture
def hand_fed(workspace: Path) -> Iterator[tuple[Watching, Watcher]]:
    """A watching core, and its watcher, that polls too rarely to notice anything itself
    (no real event crosses those the test hands to `watcher.intake`)."""
    settings = {"watch_force_polling": True, "watch_poll_interval_ms": 600_000}
    w = Watching(workspace, settings).start()
    try:
        assert w.core.watcher is not None
        yield w, w.core.watcher
    finally:
        w.close()


# --- notices ------------------------------------------------------------------------------


def test_external_write_is_one_notice_with_the_diff(watching: Watching, workspace: Path) -> None:
    make(workspace / "src" / "app.py", "def main():\n    return 1\n")
    watching.read("src/app.py")
    (workspace / "src" / "app.py").write_text("def main():\n    return 2\n")
    [notice] = watching.wait_notice("src/app.py")
    assert notice.kind == "modified"
    assert notice.file_path == str(workspace / "src" / "app.py")
    assert "-    return 1" in notice.diff
    assert "+    return 2" in notice.diff
    assert not notice.truncated
    assert notice.total_lines == 2
    watching.sentinel()
    assert len(watching.notices(path="src/app.py")) == 1
    # The agent's channel reports it once, with the same diff.
    taken = [c for c in watching.take() if c.file_path.endswith("app.py")]
    assert [c.diff for c in taken] == [notice.diff]
    assert not [c for c in watching.take() if c.file_path.endswith("app.py")]
    stats = watching.core.stats.snapshot("")
    assert stats["session"]["notices_sent"] >= 1
    assert stats["session"]["changes_reported"] >= 1


def test_a_formatter_burst_is_one_change(workspace: Path) -> None:
    w = Watching(workspace, {"watch_debounce_ms": 200}).start()
    try:
        path = make(workspace / "fmt.py", "x=1\ny=2\n")
        w.read("fmt.py")
        save_like_a_formatter(path, "x = 1\n", "y = 2\n", "x = 1\ny = 2\n\n")
        os.utime(path)  # and a touch
        [notice] = w.wait_notice("fmt.py")
        w.sentinel()
        assert len(w.notices(path="fmt.py")) == 1
        assert notice.diff.count("\n+") >= 2  # the final content, not an intermediate one
        assert "+x = 1" in notice.diff
        assert "+y = 2" in notice.diff
        assert w.status()["coalesced_bursts"] >= 1
        assert not w.notices(path=".fmt.py.tmp")
    finally:
        w.close()


def test_rename_is_reported_as_moved(watching: Watching, workspace: Path) -> None:
    make(workspace / "old.txt", "hello\n")
    watching.read("old.txt")
    os.rename(workspace / "old.txt", workspace / "new.txt")
    [notice] = watching.wait_notice("old.txt")
    assert notice.kind == "moved"
    assert notice.new_path == str(workspace / "new.txt")
    assert notice.diff == ""
    assert notice.note is not None
    assert "content you read" in notice.note
    watching.sentinel()
    assert len(watching.notices(path="old.txt")) == 1
    assert not watching.notices(path="new.txt")  # never read: nothing to tell


def test_folder_rename_moves_the_files_read_in_it(watching: Watching, workspace: Path) -> None:
    make(workspace / "pkg" / "mod.py", "A = 1\n")
    watching.read("pkg/mod.py")
    os.rename(workspace / "pkg", workspace / "lib")
    [notice] = watching.wait_notice("pkg/mod.py")
    assert notice.kind == "moved"
    assert notice.new_path == str(workspace / "lib" / "mod.py")


def test_a_stat_recheck_racing_a_rename_does_not_turn_the_move_into_a_delete(
    workspace: Path,
) -> None:
    # A re-check (after setup or an overflow) stats every read file; one that runs
    # after a rename's event sees the old path gone. That says less than the event,
    # which knows where the file went (here the new file is also written at once, so
    # its content no longer tells): the notice must still be a move.
    make(workspace / "old.txt", "one\n")
    w = Watching(workspace, {"watch_debounce_ms": 1500}).start()
    try:
        w.read("old.txt")
        watcher = w.core.watcher
        assert watcher is not None
        events = watcher.counters.events
        os.rename(workspace / "old.txt", workspace / "new.txt")
        (workspace / "new.txt").write_text("two\n")
        wait_for(lambda: watcher.counters.events > events, "the rename's events")
        watcher.overflowed()  # a re-check of every read file, now, before the batch
        [notice] = w.wait_notice("old.txt")
        assert (notice.kind, notice.new_path) == ("moved", str(workspace / "new.txt"))
    finally:
        w.close()


def test_a_folder_rename_whose_halves_were_not_paired_is_still_a_move(
    hand_fed: tuple[Watching, Watcher], workspace: Path
) -> None:
    # watchdog pairs a rename's two halves only within half a second; a busy machine
    # can split them, and then reports the folder deleted and, a moment later, its
    # files created. Fed to the watcher in that order (polling mode, so no real event
    # crosses them), the read file is still reported moved, not deleted.
    from watchdog.events import DirDeletedEvent, FileCreatedEvent

    w, watcher = hand_fed
    make(workspace / "pkg" / "mod.py", "A = 1\n")
    w.read("pkg/mod.py")
    os.rename(workspace / "pkg", workspace / "lib")
    watcher.intake.on_event(DirDeletedEvent(str(workspace / "pkg")))
    threading.Event().wait(0.1)  # the late half, as a split pair delivers it
    watcher.intake.on_event(FileCreatedEvent(str(workspace / "lib" / "mod.py")))
    [notice] = w.wait_notice("pkg/mod.py")
    assert (notice.kind, notice.new_path) == ("moved", str(workspace / "lib" / "mod.py"))


def test_a_copy_then_delete_is_a_move(watching: Watching, workspace: Path) -> None:
    # What a rename looks like when its two halves are not paired (watchdog waits half
    # a second for the second), or a move made as copy-and-delete.
    path = make(workspace / "orig.txt", "some content\n")
    watching.read("orig.txt")
    copy = workspace / "elsewhere" / "copy.txt"
    copy.parent.mkdir()
    copy.write_bytes(path.read_bytes())
    path.unlink()
    [notice] = watching.wait_notice("orig.txt")
    assert (notice.kind, notice.new_path) == ("moved", str(copy))


def test_delete_then_create(watching: Watching, workspace: Path) -> None:
    path = make(workspace / "note.md", "one\ntwo\n")
    watching.read("note.md")
    path.unlink()
    [deleted] = watching.wait_notice("note.md")
    assert deleted.kind == "deleted"
    assert deleted.diff == ""
    assert [c.kind for c in watching.take()] == ["deleted"]
    path.write_text("one\nthree\n")
    created = watching.wait_notice("note.md", count=2)[1]
    assert created.kind == "created"
    assert "-two" in created.diff
    assert "+three" in created.diff
    [taken] = watching.take()
    assert taken.kind == "created"
    watching.sentinel()
    assert len(watching.notices(path="note.md")) == 2


def test_a_second_change_is_diffed_from_the_first(watching: Watching, workspace: Path) -> None:
    path = make(workspace / "a.txt", "1\n2\n3\n")
    watching.read("a.txt")
    path.write_text("1\nTWO\n3\n")
    watching.wait_notice("a.txt")
    [first] = watching.take()
    assert "+TWO" in first.diff
    path.write_text("1\nTWO\nTHREE\n")
    watching.wait_notice("a.txt", count=2)
    [second] = watching.take()
    assert "+THREE" in second.diff
    removed = [
        line
        for line in second.diff.splitlines()
        if line.startswith("-") and not line.startswith("---")
    ]
    assert removed == ["-3"]  # the TWO change was already told; only line 3 is new


def test_a_change_reverted_before_the_agent_asks_is_not_reported(
    watching: Watching, workspace: Path
) -> None:
    path = make(workspace / "flip.txt", "a\n")
    watching.read("flip.txt")
    path.write_text("b\n")
    watching.wait_notice("flip.txt")
    path.write_text("a\n")
    watching.wait_notice("flip.txt", count=2)
    assert not [c for c in watching.take() if c.file_path.endswith("flip.txt")]


def test_touch_and_identical_rewrite_are_no_change(watching: Watching, workspace: Path) -> None:
    path = make(workspace / "same.txt", "same\n")
    watching.read("same.txt")
    os.utime(path, ns=(1, 1))
    path.write_text("same\n")
    watching.sentinel()
    assert not watching.notices(path="same.txt")
    assert not [c for c in watching.take() if c.file_path.endswith("same.txt")]


def test_a_session_that_never_read_the_file_gets_nothing(
    watching: Watching, workspace: Path
) -> None:
    path = make(workspace / "shared.txt", "v1\n")
    watching.read("shared.txt", session="reader")
    path.write_text("v2\n")
    watching.wait_notice("shared.txt", session="reader")
    watching.sentinel(session="other")
    assert not watching.notices("other", "shared.txt")
    assert not [c for c in watching.take("other") if c.file_path.endswith("shared.txt")]


def test_readkeepers_own_edit_is_not_reported_to_the_editing_session(
    watching: Watching, workspace: Path
) -> None:
    make(workspace / "edit.py", "value = 1\n")
    watching.read("edit.py", session="editor")
    watching.read("edit.py", session="bystander")
    core = watching.core
    core.edit(
        EditParams(
            file_path="edit.py", old_string="value = 1", new_string="value = 2", session="editor"
        )
    )
    # The other session read the old content: it is told, with the diff.
    [notice] = watching.wait_notice("edit.py", session="bystander")
    assert "+value = 2" in notice.diff
    watching.sentinel(session="editor")
    assert not watching.notices("editor", "edit.py")
    assert not [c for c in watching.take("editor") if c.file_path.endswith("edit.py")]
    # A whole-file write likewise.
    core.write(WriteParams(file_path="edit.py", content="value = 3\n", session="editor"))
    watching.wait_notice("edit.py", session="bystander", count=2)
    watching.sentinel(session="editor")
    assert not watching.notices("editor", "edit.py")


def test_ignored_folders_produce_nothing(workspace: Path) -> None:
    make(workspace / ".gitignore", "generated/\n*.log\n")
    make(workspace / "node_modules" / "pkg" / "index.js", "module.exports = 1\n")
    make(workspace / "generated" / "out.txt", "1\n")
    make(workspace / "app.log", "start\n")
    make(workspace / "src" / "main.py", "print(1)\n")
    w = Watching(workspace).start()
    try:
        for path in ("node_modules/pkg/index.js", "generated/out.txt", "app.log", "src/main.py"):
            w.read(path)
        events_before = w.status()["events"]
        (workspace / "node_modules" / "pkg" / "index.js").write_text("module.exports = 2\n")
        (workspace / "generated" / "out.txt").write_text("2\n")
        (workspace / "app.log").write_text("start\nmore\n")
        (workspace / "src" / "main.py").write_text("print(2)\n")
        w.wait_notice("src/main.py")
        w.sentinel()
        assert [c.file_path for c in w.notices()] == [
            str(workspace / "src" / "main.py"),
            str(workspace / "sentinel.txt"),
        ]
        status = w.status()
        assert status["skipped_folders"] >= 2  # node_modules and generated: never watched
        # Only app.log's events reached the watcher (its folder is watched) and were
        # dropped; the ignored folders' files sent none at all.
        assert status["ignored_events"] >= 1
        assert status["events"] - events_before < 20
    finally:
        w.close()


def test_roots_added_later_are_watched(watching: Watching, tmp_path: Path) -> None:
    other = tmp_path / "other"
    make(other / "x.txt", "x\n")
    core = watching.core
    core.workspace.set_roots([*core.workspace.roots, str(other)])
    core.roots_changed()
    wait_for(lambda: str(other) in watching.status()["watched_roots"], "the new root")
    watching.read(str(other / "x.txt"))
    (other / "x.txt").write_text("y\n")
    notice = wait_for(
        lambda: [c for s, c in watching.pushed if c.file_path == str(other / "x.txt")],
        "a notice from the added root",
    )
    assert "+y" in notice[0].diff


def test_forget_drops_pending_changes(watching: Watching, workspace: Path) -> None:
    path = make(workspace / "f.txt", "1\n")
    watching.read("f.txt")
    path.write_text("2\n")
    watching.wait_notice("f.txt")
    watching.core.forget(ForgetParams(paths=["f.txt"]))
    assert not [c for c in watching.take() if c.file_path.endswith("f.txt")]


def test_a_file_over_the_read_caps_gets_a_notice_without_diff(workspace: Path) -> None:
    w = Watching(workspace, {"max_size_bytes": 1000}).start()
    try:
        path = make(workspace / "big.log", "line\n" * 400)  # 2,000 bytes: read in ranges
        w.core.read(ReadParams(file_path="big.log", offset=1, limit=10))
        with open(path, "a") as f:
            f.write("more\n" * 10)
        [notice] = w.wait_notice("big.log")
        assert notice.kind == "modified"
        assert notice.diff == ""
        assert notice.truncated
        assert notice.total_lines == 410
        assert notice.note is not None
        assert "410 lines" in notice.note
    finally:
        w.close()


def test_a_file_over_the_read_caps_rewritten_to_the_same_size_gets_a_notice(
    workspace: Path,
) -> None:
    # Its content is never digested whole: its stat (the mtime, here) tells the change.
    w = Watching(workspace, {"max_size_bytes": 1000}).start()
    try:
        path = make(workspace / "big.log", "line\n" * 400)
        w.core.read(ReadParams(file_path="big.log", offset=1, limit=10))
        path.write_text("LINE\n" * 400)
        [notice] = w.wait_notice("big.log")
        assert notice.kind == "modified"
    finally:
        w.close()


def test_the_changes_reply_is_capped_and_the_rest_waits(workspace: Path) -> None:
    w = Watching(workspace, {"changes_total_max_tokens": 200}).start()
    try:
        names = [f"f{i}.txt" for i in range(6)]
        for name in names:
            make(workspace / name, "old line\n" * 20)
            w.read(name)
        for name in names:
            (workspace / name).write_text("new line\n" * 20)
        for name in names:
            w.wait_notice(name)
        first = w.core.changes_for(ChangesParams())
        assert first.changes
        assert first.remaining
        rest: list[FileChange] = []
        while True:
            more = w.core.changes_for(ChangesParams())
            rest += more.changes
            if not more.remaining:
                break
        assert sorted(c.file_path for c in [*first.changes, *rest]) == sorted(
            str(workspace / n) for n in names
        )
    finally:
        w.close()


# --- fallback and lifecycle -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "reason"),
    [
        ({"watch_force_polling": True}, "watch_force_polling is set"),
        ({"watcher": "polling"}, "the watcher setting is polling"),
    ],
)
def test_forced_polling_still_reports_changes(
    workspace: Path, setting: dict[str, Any], reason: str
) -> None:
    w = Watching(workspace, {**setting, "watch_poll_interval_ms": 50}).start()
    try:
        assert (w.status()["state"], w.status()["backend"]) == ("polling", "polling")
        assert w.status()["polled_roots"] == {str(workspace): reason}
        names = {t.name for t in threading.enumerate()}
        assert "readkeeper-watch-inotify" not in names  # no observer at all
        path = make(workspace / "p.txt", "1\n")
        w.read("p.txt")
        path.write_text("2\n")
        [notice] = w.wait_notice("p.txt")
        assert "+2" in notice.diff
        path.unlink()
        assert w.wait_notice("p.txt", count=2)[1].kind == "deleted"
        assert w.status()["polls"] > 0
        assert not w.warnings  # asked for: no warning
    finally:
        w.close()


def test_stopping_leaves_no_thread_running(workspace: Path) -> None:
    make(workspace / "a" / "b" / "c.txt", "c\n")
    w = Watching(workspace)
    w.core.tokens.warm_up()  # the read counts, and starts no load of the table
    before = set(threading.enumerate())
    w.start()
    w.read("a/b/c.txt")
    started = {t.name for t in set(threading.enumerate()) - before}
    assert {"readkeeper-watch-worker", "readkeeper-watch-inotify"} <= started
    w.close()
    assert set(threading.enumerate()) - before == set()
    # The OS threads themselves end a moment after Python's join() returns.
    wait_for(lambda: not _os_threads_named("rk-watch"), "the watcher's OS threads to end")
    assert w.status()["state"] == "off"


def test_stopping_during_setup_of_a_big_tree_is_prompt(workspace: Path) -> None:
    for i in range(300):
        (workspace / f"d{i}" / "e").mkdir(parents=True)
    before = set(threading.enumerate())
    w = Watching(workspace)
    w.core.start_watching()
    w.close()  # while the setup may still be walking
    assert set(threading.enumerate()) - before == set()


def test_setup_reports_progress(watching: Watching) -> None:
    stages = [stage for stage, _ in watching.progress]
    assert stages[0] == "begin"
    assert stages[-1] == "end"
    assert re.search(r"Watching \d+ folders?\b", watching.progress[-1][1])


def test_watch_setting_off_starts_nothing(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"watch": False})
    assert core.start_watching() is False
    assert core.watcher_status()["state"] == "off"
    core.close()


def test_a_closed_core_never_starts_watching(workspace: Path) -> None:
    """The LSP front end starts the watcher after importing it on a thread: a `shutdown`
    that closed the core meanwhile must win, with no watcher or thread left running."""
    before = set(threading.enumerate())
    core = Readkeeper(roots=[str(workspace)])
    core.close()
    assert core.start_watching() is False
    assert core.watcher is None
    assert core.watcher_status()["state"] == "off"
    assert set(threading.enumerate()) - before == set()


def test_changing_a_watch_setting_restarts_the_watcher(watching: Watching) -> None:
    first = watching.core.watcher
    watching.core.configure({"watch_exclude": ["nothing/"]})
    wait_for(
        lambda: (
            watching.core.watcher not in (None, first) and watching.status()["state"] == "watching"
        ),
        "the restarted watcher",
    )
    assert watching.core.watcher is not None
    assert watching.core.watcher.settings.watch_exclude == ("nothing/",)


def _os_threads_named(prefix: str) -> list[str]:
    names = []
    for task in os.listdir(f"/proc/{os.getpid()}/task"):
        try:
            name = Path(f"/proc/{os.getpid()}/task/{task}/comm").read_text().strip()
        except OSError:  # ended meanwhile
            continue
        if name.startswith(prefix):
            names.append(name)
    return names


# --- ignore rules and helpers ----------------------------------------------------------------


def test_ignore_rules(tmp_path: Path) -> None:
    root = tmp_path
    make(root / ".gitignore", "gen/\n*.log\n!keep.log\n/top.txt\n")
    make(root / "sub" / ".gitignore", "!x.log\nlocal/\n")
    (root / ".git" / "info").mkdir(parents=True)
    make(root / ".git" / "info" / "exclude", "secret.txt\n")
    rules = IgnoreRules(str(root), ["node_modules/", "*.tmp"])
    cases = {
        ("src/a.py", False): False,
        ("node_modules", True): True,
        ("pkg/node_modules", True): True,
        ("node_modules/x/y.js", False): True,
        ("gen", True): True,
        ("gen/deep/file.py", False): True,
        ("a.log", False): True,
        ("keep.log", False): False,
        ("sub/x.log", False): False,  # a deeper .gitignore re-includes it
        ("sub/y.log", False): True,
        ("sub/local", True): True,
        ("top.txt", False): True,
        ("sub/top.txt", False): False,  # anchored to the root
        ("secret.txt", False): True,
        (".git", True): True,
        (".git/config", False): True,
        ("build.tmp", False): True,
    }
    for (relative, is_dir), expected in cases.items():
        assert rules.ignored(str(root / relative), is_dir) is expected, relative
    assert rules.ignored("/somewhere/else.txt")
    # A changed .gitignore is read again.
    (root / ".gitignore").write_text("")
    rules.forget_folder(str(root))
    assert not rules.ignored(str(root / "a.log"))


def test_invalid_patterns_are_skipped_like_git_does(tmp_path: Path) -> None:
    rules = IgnoreRules(str(tmp_path), ["!", "*.bak"])
    assert rules.ignored(str(tmp_path / "x.bak"))
    assert not rules.ignored(str(tmp_path / "x.py"))


def test_a_pathological_gitignore_is_matched_within_its_budget(tmp_path: Path) -> None:
    # Patterns whose regular expressions backtrack for minutes on a long name (stars in
    # one segment, stars across segments), then many patterns: each path is still
    # judged at once, by the patterns that can be matched cheaply.
    hostile = ["*a" * 10 + "b", "/".join(["*a*"] * 4) + "/b", "*a*a*b"]
    many = [f"generated-{i}/" for i in range(ignore.MAX_PATTERNS + 500)]
    make(tmp_path / ".gitignore", "\n".join([*hostile, "*.log", "*.min.*", *many]) + "\n")
    rules = IgnoreRules(str(tmp_path), [])
    long_name = "a" * 200
    make(tmp_path / long_name / long_name / long_name / long_name / "c", "x\n")
    assert not rules.ignored(str(tmp_path / long_name), True)
    assert not rules.ignored(str(tmp_path / long_name / long_name / long_name / long_name / "c"))
    assert rules.ignored(str(tmp_path / "x.log"))  # the cheap patterns still hold
    assert rules.ignored(str(tmp_path / "app.min.js"))
    assert rules.ignored(str(tmp_path / "generated-1"), True)
    # Past MAX_PATTERNS, the rest of the file is not honoured.
    assert not rules.ignored(str(tmp_path / f"generated-{ignore.MAX_PATTERNS + 100}"), True)


def test_outermost_roots_and_filesystem_type(tmp_path: Path) -> None:
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    assert outermost([str(inner), str(tmp_path / "a"), str(tmp_path / "a")]) == [
        str(tmp_path / "a")
    ]


@pytest.mark.skipif(not Path("/proc/self/mountinfo").is_file(), reason="needs Linux's mountinfo")
def test_filesystem_type_is_that_of_the_innermost_mount(tmp_path: Path) -> None:
    assert filesystem_type("/proc") == "proc"
    assert filesystem_type("/proc/self/status") == "proc"
    # A folder whose name merely starts like a mount point's is not on that mount.
    assert filesystem_type("/procx/y") == filesystem_type("/")
    if shutil.which("findmnt"):
        found = subprocess.run(
            ["findmnt", "-n", "-o", "FSTYPE", "-T", str(tmp_path)],
            capture_output=True,
            text=True,
            check=True,
        )
        assert filesystem_type(str(tmp_path)) == found.stdout.strip()


def test_an_edit_slow_to_record_what_it_left_is_not_reported_back(
    watching: Watching, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A busy machine can hold the edit's thread between its rename and its read-state
    # record for longer than the watcher's quiet time. The notice waits for the record
    # (locks.py), so the agent is not told of its own edit; another reader still is.
    from readkeeper.edit import edits

    make(workspace / "slow.py", "n = 1\n")
    watching.read("slow.py", session="agent")
    watching.read("slow.py", session="other")
    recorded = edits.remember_change

    def slowly(*args: Any, **kwargs: Any) -> Any:
        threading.Event().wait(0.5)  # ten times the watcher's quiet time
        return recorded(*args, **kwargs)

    monkeypatch.setattr(edits, "remember_change", slowly)
    watching.core.edit(
        EditParams(file_path="slow.py", old_string="n = 1", new_string="n = 2", session="agent")
    )
    [notice] = watching.wait_notice("slow.py", session="other")
    assert "+n = 2" in notice.diff
    watching.sentinel(session="agent")
    assert watching.notices(session="agent", path="slow.py") == []


def test_a_write_judged_after_a_rename_does_not_report_the_file_deleted(
    hand_fed: tuple[Watching, Watcher], workspace: Path
) -> None:
    # The file's own creation or last write can be judged after it was renamed (a busy
    # watcher): then it is gone, and only the rename's event may say where it went.
    from watchdog.events import FileModifiedEvent, FileMovedEvent

    w, watcher = hand_fed
    make(workspace / "a.txt", "a\n")
    w.read("a.txt")
    # The check of read files that follows setup must be over before the rename (it
    # would rightly see a.txt gone): a change's notice comes after it.
    first = make(workspace / "first.txt", "1\n")
    w.read("first.txt")
    first.write_text("2\n")
    watcher.intake.on_event(FileModifiedEvent(str(first)))
    w.wait_notice("first.txt")
    os.rename(workspace / "a.txt", workspace / "b.txt")
    watcher.intake.on_event(FileModifiedEvent(str(workspace / "a.txt")))  # the late write
    batches = watcher.counters.batches
    wait_for(lambda: watcher.counters.batches > batches, "the late write's batch")
    watcher.intake.on_event(FileMovedEvent(str(workspace / "a.txt"), str(workspace / "b.txt")))
    [notice] = w.wait_notice("a.txt")
    assert (notice.kind, notice.new_path) == ("moved", str(workspace / "b.txt"))
