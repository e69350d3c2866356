"""How a search's lines are proved before they count as seen (search/seen.py), and what
an edit then does with them: the file changed after the search in the lines shown or
elsewhere, swapped for a symlink or a FIFO, too large, two sessions, a later read, and
`forget`. A search of a file the session already holds at a stamp that still proves it
checks the lines against the text kept of it, without reading the file again."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.files.stamps import settled, settles_after
from readkeeper.search import seen
from readkeeper.search.seen import record_shown
from readkeeper.state.snapshots import Snapshots


def grep(core: Readkeeper, **params: Any) -> dict[str, Any]:
    """A search, its proof done (it runs after the answer, state/later.py): a change the
    test makes next lands after both, as an agent's next move does."""
    result: dict[str, Any] = calls.call(core, "grep", params)
    core.read_states.later.settle()
    return result


def edit(core: Readkeeper, path: Path, old: str, new: str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = calls.call(
        core, "edit", {"file_path": str(path), "old_string": old, "new_string": new, **params}
    )
    return result


def refused(core: Readkeeper, path: Path, old: str, new: str, **params: Any) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        edit(core, path, old, new, **params)
    return caught.value


def settle(path: Path) -> None:
    """Wait until the file's stamp proves its content (`stamps.settled`)."""
    st = os.stat(path)
    left = max(st.st_mtime_ns, st.st_ctime_ns) + settles_after(st) - time.time_ns()
    if left > 0:
        time.sleep(left / 1e9 + 0.005)
    assert settled(os.stat(path), time.time_ns())


class Loads:
    """Counts the files whose bytes a search's proof reads (the real reader, counted)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = seen.read_at_most

        def counted(fd: int, limit: int) -> bytes:
            self.count += 1
            return real(fd, limit)

        monkeypatch.setattr(seen, "read_at_most", counted)


def test_a_change_outside_the_lines_shown_after_the_search_is_merged(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "m.py"
    path.write_text("a = 1\nneedle = 1\nb = 1\n")
    grep(core, pattern="needle")
    path.write_text("a = 2\nneedle = 1\nb = 1\n")  # someone else changed another line
    result = edit(core, path, "needle = 1", "needle = 2")
    assert result["merged"] is True
    assert "a = 1" in result["external_change"]["diff"]
    assert path.read_text() == "a = 2\nneedle = 2\nb = 1\n"


def test_a_change_in_the_lines_shown_after_the_search_is_stale_with_its_diff(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "m.py"
    path.write_text("a = 1\nneedle = 1\nb = 1\n")
    grep(core, pattern="needle")
    path.write_text("a = 1\nneedle = 3\nb = 1\n")
    error = refused(core, path, "needle = 3", "needle = 4")
    assert error.kind == "stale"
    assert "needle = 1" in error.data["diff"]
    assert "needle = 3" in error.data["diff"]
    assert path.read_text() == "a = 1\nneedle = 3\nb = 1\n"


@pytest.mark.parametrize(
    ("swap", "kind"), [("symlink", "outside_workspace"), ("fifo", "unsupported")]
)
def test_a_file_swapped_after_the_search_is_never_edited(
    core: Readkeeper, workspace: Path, tmp_path: Path, swap: str, kind: str
) -> None:
    path = workspace / "m.py"
    path.write_text("needle = 1\n")
    outside = tmp_path / "outside.py"
    outside.write_text("needle = 1\n")
    grep(core, pattern="needle")
    path.unlink()
    if swap == "symlink":
        path.symlink_to(outside)
    else:
        os.mkfifo(path)
    error = refused(core, path, "needle = 1", "needle = 2")
    assert error.kind == kind
    assert outside.read_text() == "needle = 1\n"


def test_a_file_over_the_size_cap_is_not_seen_by_a_search(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "m.py"
    path.write_text("needle = 1\n" + "x" * 40 + "\n")
    core.configure({"max_size_bytes": path.stat().st_size - 1})
    grep(core, pattern="needle")
    # Not licensed by the search; and no read would license it either (a file over the
    # cap is never edited), so the refusal says that rather than ask for a read.
    assert refused(core, path, "needle = 1", "needle = 2").kind == "too_large"


def test_a_later_read_supersedes_the_search_and_forget_drops_it(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "m.py"
    path.write_text("needle = 1\nother = 1\n")
    grep(core, pattern="needle")
    assert refused(core, path, "other = 1", "other = 2").kind == "not_read"
    calls.call(core, "read", {"file_path": str(path)})
    assert edit(core, path, "other = 1", "other = 2")["replacements"] == 1
    grep(core, pattern="needle")
    calls.call(core, "forget", {})
    assert refused(core, path, "needle = 1", "needle = 2").kind == "not_read"


def test_a_second_search_of_a_settled_file_needs_no_second_look(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = workspace / "m.py"
    path.write_text("needle = 1\nmiddle = 1\nhaystack = 1\n")
    settle(path)
    loads = Loads(monkeypatch)
    grep(core, pattern="needle")
    assert loads.count == 1
    grep(core, pattern="haystack")
    assert loads.count == 1  # the stamp still proves the text the first look kept
    result = edit(core, path, "haystack = 1", "haystack = 2")
    assert result["merged"] is False
    assert refused(core, path, "middle = 1", "middle = 2").kind == "not_read"
    assert edit(core, path, "needle = 1", "needle = 2")["replacements"] == 1


def test_the_kept_text_is_checked_against_the_lines_shown(
    core: Readkeeper, workspace: Path
) -> None:
    # ripgrep saw other bytes than the text kept under the stamp (a write through a
    # shared memory map keeps the stamp): the lines are checked all the same.
    path = workspace / "m.py"
    path.write_text("needle = 1\n")
    settle(path)
    assert record_shown(core, "", {str(path): {1: "needle = 1"}}) == [str(path)]
    before = core.read_states.get("", str(path))
    assert record_shown(core, "", {str(path): {1: "needle = 9"}}) == []
    assert core.read_states.get("", str(path)) == before


def test_a_search_after_a_change_looks_again_and_not_at_the_older_text(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = workspace / "m.py"
    path.write_text("needle = 1\nother = 1\n")
    settle(path)
    calls.call(core, "read", {"file_path": str(path)})
    path.write_text("needle = 1\nother = 2\n")
    loads = Loads(monkeypatch)
    grep(core, pattern="needle")
    assert loads.count == 1
    # The search saw the file as it is now: no change since, so nothing to merge.
    result = edit(core, path, "needle = 1", "needle = 2")
    assert result["merged"] is False


def test_another_sessions_record_proves_nothing_for_this_one(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = workspace / "m.py"
    path.write_text("needle = 1\nother = 1\n")
    settle(path)
    calls.call(core, "read", {"file_path": str(path), "session": "a"})
    loads = Loads(monkeypatch)
    grep(core, pattern="needle", session="b")
    assert loads.count == 1
    assert refused(core, path, "other = 1", "other = 2", session="b").kind == "not_read"
    assert edit(core, path, "needle = 1", "needle = 2", session="b")["replacements"] == 1
    # The session that read it whole is told of the other session's change, and its
    # edit elsewhere is merged over it.
    assert edit(core, path, "other = 1", "other = 2", session="a")["merged"] is True


def test_a_search_showing_many_files_keeps_the_snapshots_within_their_bound(
    core: Readkeeper, workspace: Path
) -> None:
    core.snapshots = Snapshots(searched_entries=8)  # a search's budget, apart from reads'
    for n in range(30):
        (workspace / f"m{n:02d}.py").write_text(f"needle = {n}\n")
    result = grep(core, pattern="needle", max_matches=30)
    assert result["num_matches"] == 30
    assert len(core.snapshots) <= 8
    assert core.read_states.count("") == 30


def test_a_printed_path_that_is_a_link_within_the_workspace_records_its_target(
    core: Readkeeper, workspace: Path
) -> None:
    # Each folder's real path is looked up once per search; the file's own name may
    # still be a link, followed as before.
    target = workspace / "real.py"
    target.write_text("needle = 1\n")
    (workspace / "link.py").symlink_to("real.py")
    (workspace / "other.py").write_text("needle = 2\n")
    printed = {
        str(workspace / "link.py"): {1: "needle = 1"},
        str(workspace / "other.py"): {1: "needle = 2"},
    }
    assert record_shown(core, "", printed) == list(printed)
    assert core.read_states.get("", str(target)) is not None
    assert core.read_states.get("", str(workspace / "link.py")) is None
    assert edit(core, target, "needle = 1", "needle = 3")["replacements"] == 1


def test_a_write_after_search_alone_is_refused_and_loses_nothing(
    core: Readkeeper, workspace: Path
) -> None:
    """A search shows some lines; a write replaces them all: it needs a read (attack a3b:
    a grep of line 1 let a write drop the 198 lines never shown)."""
    path = workspace / "w.py"
    body = "needle = 1\n" + "".join(f"line_{n} = {n}\n" for n in range(198))
    path.write_text(body)
    grep(core, pattern="needle")
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, "write", {"file_path": str(path), "content": "needle = 2\n"})
    assert caught.value.kind == "not_read"
    assert "search" in caught.value.message
    assert path.read_text() == body
    calls.call(core, "read", {"file_path": str(path)})
    calls.call(core, "write", {"file_path": str(path), "content": "needle = 2\n"})
    assert path.read_text() == "needle = 2\n"
