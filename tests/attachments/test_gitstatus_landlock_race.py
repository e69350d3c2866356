"""git status while a tracked folder of the work tree is swapped again and again for a
link to an outside folder, each swap undone at once. libgit2 walks the work tree by name,
and readkeeper's check after the status looks only at the work tree and the git folder
themselves (a `.git` swapped for a link is caught by it: test_gitstatus_race.py); with
Landlock, libgit2 cannot open anything outside the folders readkeeper checked. Bounded in
count and time; the control (Landlock off) must leak at least once, which proves the test
is live. A leak needs the swapper to run inside libgit2's window, so on a loaded machine
it may take hundreds of statuses: the control tries up to ten times as many as the test,
stopping at its first leak (300 tries once missed under a CI run's load)."""

from __future__ import annotations

from pathlib import Path

import pytest
from swapper import races
from test_lsp_gitstatus_hostile import OUTSIDE_NAME, committed, git

from readkeeper.attachments import gitstatus, gitstatus_workers
from readkeeper.errors import ReadkeeperError
from readkeeper.files import landlock
from readkeeper.files.paths import Workspace

_STATUSES = 300
_SECONDS = 25.0
_CONTROL_STATUSES = 3000
_CONTROL_SECONDS = 120.0
# How many statuses, in how long, until how many leaks: the test's, the control's.
_BUDGETS = {False: (_STATUSES, _SECONDS, 3), True: (_CONTROL_STATUSES, _CONTROL_SECONDS, 1)}

pytestmark = pytest.mark.skipif(landlock.abi() < 1, reason="the kernel has no Landlock")


def _leaks(workspace: Path, tmp_path: Path, control: bool = False) -> tuple[int, int]:
    """How many statuses showed an outside name (counting up to three, or for the
    `control` one), and how many showed a status at all."""
    outside = committed(tmp_path / "outside", OUTSIDE_NAME)
    (outside / "loose").mkdir()
    (outside / "loose" / OUTSIDE_NAME).write_text("untracked outside\n")
    (workspace / "sub").mkdir(parents=True)
    (workspace / "sub" / "inside.txt").write_text("tracked inside\n")
    committed(workspace)
    # Tracked files before `sub`: libgit2 looks at `sub` when it lists the root, and
    # opens it by name only after comparing these, which widens the window of the race.
    for n in range(300):
        (workspace / f"a{n:03d}.txt").write_text(f"{n}\n")
    git(workspace, "add", ".")
    git(workspace, "commit", "-q", "-m", "sub")
    roots = Workspace()
    roots.set_roots([str(workspace)])
    link = workspace.parent / "link-out"
    link.symlink_to(outside / "loose", target_is_directory=True)

    def look() -> str:
        try:
            return gitstatus.status(roots, str(workspace), 20.0)
        except (ReadkeeperError, OSError, gitstatus.NotARepository) as exc:
            return str(exc)

    try:
        return races(
            workspace / "sub", link, look, OUTSIDE_NAME, "branch master", *_BUDGETS[control]
        )
    finally:
        gitstatus_workers.WORKERS.stop()


def test_git_status_never_shows_an_outside_name_through_folders_swapped_while_it_reads(
    workspace: Path, tmp_path: Path
) -> None:
    leaks, answered = _leaks(workspace, tmp_path)
    assert leaks == 0
    assert answered > 0  # statuses were computed under Landlock, not all refused


def test_without_landlock_the_same_swaps_leak_which_proves_the_race_test_live(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gitstatus, "CONFINE", False)
    leaks, answered = _leaks(workspace, tmp_path, control=True)
    assert leaks > 0, f"no leak in {answered} statuses answered"
