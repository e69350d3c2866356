"""A search's proof of a file the session already holds (search/seen.py `_kept`): the
stamp is taken by name in the file's folder, without opening it, so what stands at that
name now decides: a link, a FIFO or a folder put there since is never taken for the file
held, and the session's record of it stays as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_seen_proof import settle

from readkeeper.core import Readkeeper
from readkeeper.search.seen import record_shown


@pytest.mark.parametrize("swap", ["link out", "link within", "fifo", "folder"])
def test_a_held_file_replaced_at_its_name_is_not_proved_by_its_old_stamp(
    core: Readkeeper, workspace: Path, tmp_path: Path, swap: str
) -> None:
    path = workspace / "m.py"
    path.write_text("needle = 1\n")
    settle(path)
    shown = {str(path): {1: "needle = 1"}}
    assert record_shown(core, "", shown) == [str(path)]
    held = core.read_states.get("", str(path))
    assert held is not None
    assert held.stamp is not None
    path.unlink()
    if swap == "link out":
        outside = tmp_path / "outside.py"
        outside.write_text("needle = 1\n")
        path.symlink_to(outside)
    elif swap == "link within":
        (workspace / "other.py").write_text("needle = 1\n")
        path.symlink_to("other.py")
    elif swap == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    recorded = record_shown(core, "", shown)
    assert core.read_states.get("", str(path)) == held
    if swap == "link within":
        # The name leads to another file of the workspace: that file is proved (read,
        # as never held) and recorded at its own path, never under the held one.
        assert recorded == [str(path)]
        other = core.read_states.get("", str(workspace / "other.py"))
        assert other is not None
        assert other.digest == held.digest
    else:
        assert recorded == []


def test_a_held_file_rewritten_with_the_same_text_is_read_again(
    core: Readkeeper, workspace: Path
) -> None:
    # Another inode (or only a new ctime) is another stamp: the proof reads the file,
    # and records the stamp it has now.
    path = workspace / "m.py"
    path.write_text("needle = 1\n")
    settle(path)
    shown = {str(path): {1: "needle = 1"}}
    record_shown(core, "", shown)
    held = core.read_states.get("", str(path))
    assert held is not None
    replacement = workspace / "m.py.new"
    replacement.write_text("needle = 1\n")
    os.replace(replacement, path)
    settle(path)
    assert record_shown(core, "", shown) == [str(path)]
    now = core.read_states.get("", str(path))
    assert now is not None
    assert now.stamp is not None
    assert now.stamp != held.stamp
    assert now.stamp[1] == os.stat(path).st_ino
