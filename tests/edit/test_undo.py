"""`readkeeper/undo` on the core: the session's last change taken back, every file or
none, never over a change made since; memory kept to undo is capped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.edit import journal
from readkeeper.errors import ReadkeeperError


def call(core: Readkeeper, name: str, **params: Any) -> Any:
    return calls.call(core, name, params)


def undo_refused(core: Readkeeper, session: str = "") -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        call(core, "undo", session=session)
    return caught.value


def test_undo_restores_the_bytes_before_the_last_edit_and_says_what_the_agent_holds(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n")
    call(core, "read", file_path="a.py")
    call(core, "edit", file_path="a.py", old_string="two", new_string="TWO")
    assert path.read_bytes() == b"\xef\xbb\xbfone\r\nTWO\r\nthree\r\n"
    result = call(core, "undo")
    assert path.read_bytes() == b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n"
    assert result["undone"] == "edit"
    assert result["files"][0]["file_path"] == str(path)
    assert result["files"][0]["read_state"]["next_read"] == "full"
    # The agent holds the restored content: it may edit again without reading.
    call(core, "edit", file_path="a.py", old_string="three", new_string="3")
    assert path.read_bytes() == b"\xef\xbb\xbfone\r\ntwo\r\n3\r\n"


def test_nothing_to_undo_is_a_clear_no_change_and_an_undo_is_done_once(
    core: Readkeeper, workspace: Path
) -> None:
    refusal = undo_refused(core)
    assert refusal.kind == "no_change"
    assert "no change readkeeper can undo" in refusal.message
    (workspace / "a.txt").write_text("x\n")
    call(core, "read", file_path="a.txt")
    call(core, "edit", file_path="a.txt", old_string="x", new_string="y")
    call(core, "undo")
    assert undo_refused(core).kind == "no_change"
    assert (workspace / "a.txt").read_text() == "x\n"


def test_undo_of_a_write_and_only_the_last_change_of_that_session(
    core: Readkeeper, workspace: Path
) -> None:
    a, b = workspace / "a.txt", workspace / "b.txt"
    a.write_text("a\n")
    b.write_text("b\n")
    call(core, "read", file_path="a.txt")
    call(core, "read", file_path="b.txt", session="other")
    call(core, "write", file_path="a.txt", content="A\n")
    call(core, "edit", file_path="b.txt", old_string="b", new_string="B", session="other")
    result = call(core, "undo")  # session "": its write, not the other session's edit
    assert result["undone"] == "write"
    assert a.read_text() == "a\n"
    assert b.read_text() == "B\n"


def test_undo_is_refused_stale_when_the_file_changed_since_and_writes_nothing(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.txt"
    path.write_text("one\ntwo\n")
    call(core, "read", file_path="a.txt")
    call(core, "edit", file_path="a.txt", old_string="two", new_string="TWO")
    path.write_text("one\nTWO\nsomeone else's line\n")
    refusal = undo_refused(core)
    assert refusal.kind == "stale"
    assert "+someone else's line" in refusal.data["diff"]
    assert path.read_text() == "one\nTWO\nsomeone else's line\n"


def test_undo_is_refused_when_the_file_was_deleted(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("one\n")
    call(core, "read", file_path="a.txt")
    call(core, "edit", file_path="a.txt", old_string="one", new_string="1")
    path.unlink()
    assert undo_refused(core).kind == "stale"
    assert not path.exists()


def test_a_refused_edit_leaves_the_last_change_to_undo(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("one\n")
    call(core, "read", file_path="a.txt")
    call(core, "edit", file_path="a.txt", old_string="one", new_string="1")
    with pytest.raises(ReadkeeperError):
        call(core, "edit", file_path="a.txt", old_string="absent", new_string="x")
    call(core, "undo")
    assert path.read_text() == "one\n"


def test_undo_of_a_created_file_is_refused_without_deleting_it(
    core: Readkeeper, workspace: Path
) -> None:
    call(core, "write", file_path="new.txt", content="hello\n")
    refusal = undo_refused(core)
    assert refusal.kind == "unsupported"
    assert (workspace / "new.txt").read_text() == "hello\n"


def test_anchors_shown_before_an_undo_no_longer_apply(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("one\ntwo\n")
    call(core, "read", file_path="a.txt", line_format="anchors")
    call(core, "edit", file_path="a.txt", old_string="two", new_string="TWO")
    shown = call(core, "read", file_path="a.txt", line_format="anchors")
    second = shown["file"]["content"].split("\n")[1].split("\t")[0]
    call(core, "undo")
    with pytest.raises(ReadkeeperError) as caught:
        call(
            core,
            "edit",
            file_path="a.txt",
            anchor_edits=[{"op": "replace", "start": second, "lines": ["2"]}],
        )
    assert caught.value.kind == "stale"
    assert path.read_text() == "one\ntwo\n"


def test_what_is_kept_to_undo_is_capped(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The cap made small, so that a file within the read limit exceeds it.
    monkeypatch.setattr(journal, "MAX_CHANGE_BYTES", 10_000)
    path = workspace / "big.txt"
    path.write_text("x\n" * 3000)
    call(core, "read", file_path="big.txt")
    # Over the per-change cap: not kept, and the undo says why.
    call(core, "write", file_path="big.txt", content="y\n" * 3000)
    refusal = undo_refused(core)
    assert refusal.kind == "no_change"
    assert "kept to undo" in refusal.message
    assert core.journal.kept_bytes == 0


def test_the_total_kept_over_sessions_is_capped_oldest_first() -> None:
    kept = journal.Journal()
    each = journal.MAX_CHANGE_BYTES // 2
    sessions = [f"s{i}" for i in range(journal.MAX_KEPT_BYTES // each + 2)]
    for session in sessions:
        with kept.recording(session, "edit"):
            journal.note(f"/w/{session}", b"a" * (each // 2), b"b" * (each // 2))
    assert kept.kept_bytes <= journal.MAX_KEPT_BYTES
    oldest, why = kept.last(sessions[0])
    assert oldest is None
    assert why is not None
    assert "room" in why
    assert kept.last(sessions[-1])[0] is not None


def test_a_write_racing_the_undo_is_kept_and_the_undo_refused(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from helpers import rewrite_before_every_swap

    path = workspace / "a.txt"
    path.write_text("one\n")
    call(core, "read", file_path="a.txt")
    call(core, "edit", file_path="a.txt", old_string="one", new_string="1")
    # Another program saves the file between the undo's check and its swap.
    rewrite_before_every_swap(monkeypatch, path, lambda text, n: text + f"theirs {n}\n")
    assert undo_refused(core).kind == "stale"
    assert path.read_text() == "1\ntheirs 0\n"
