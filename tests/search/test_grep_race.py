"""grep while a folder of the workspace is swapped, again and again, for a symlink to a
folder outside holding a secret: ripgrep opens by name, so without Landlock a match in the
outside file can be printed while the link stands and pass readkeeper's check of the path
once the real folder is back. With Landlock ripgrep cannot read outside the root at all.

The loops are bounded in count and in time; the control run (Landlock off) must see the
secret at least once in its budget, which proves the race is real on this machine. On a
loaded machine that can take many searches, so the control tries up to ten times as many
as the test, stopping at its first leak."""

from __future__ import annotations

from pathlib import Path

import pytest
from swapper import races

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search import rg

MARKER = "OUTSIDE_SECRET_MARKER"
_SEARCHES = 400
_SECONDS = 25.0
_CONTROL_SEARCHES = 4000
_CONTROL_SECONDS = 120.0
# How many searches, in how long, until how many leaks: the test's, the control's.
_BUDGETS = {False: (_SEARCHES, _SECONDS, 3), True: (_CONTROL_SEARCHES, _CONTROL_SECONDS, 1)}

pytestmark = pytest.mark.skipif(rg.landlock_abi() < 1, reason="the kernel has no Landlock")


def _leaks(
    core: Readkeeper, workspace: Path, outside: Path, control: bool = False
) -> tuple[int, int]:
    """How many of the bounded searches showed the outside marker (counting up to three,
    or for the `control` run one), and how many showed the inside one."""
    (workspace / "walk").mkdir()
    for n in range(20):
        (workspace / "walk" / f"f{n}.txt").write_text(f"{MARKER} {n} inside\n" if n == 0 else "x\n")
    link = workspace.parent / "link-out"
    link.symlink_to(outside, target_is_directory=True)

    def look() -> str:
        result = calls.call(core, "grep", {"pattern": MARKER, "output": "matches"})
        return " ".join(str(m.get("text", "")) for m in result.get("matches", []))

    return races(workspace / "walk", link, look, "from outside", "inside", *_BUDGETS[control])


def _outside(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    for n in range(20):
        (outside / f"f{n}.txt").write_text(f"{MARKER} from outside {n}\n")
    return outside


def test_grep_never_shows_an_outside_file_through_a_folder_swapped_mid_walk(
    core: Readkeeper, workspace: Path, tmp_path: Path
) -> None:
    leaks, found = _leaks(core, workspace, _outside(tmp_path))
    assert leaks == 0
    assert found > 0  # the confined searches did search


def test_without_landlock_the_same_swap_leaks_which_proves_the_race_test_live(
    core: Readkeeper, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rg, "landlock_abi", lambda: 0)
    leaks, found = _leaks(core, workspace, _outside(tmp_path), control=True)
    assert leaks > 0, f"no leak in the control's searches ({found} found the inside file)"


def test_a_confined_grep_of_a_subfolder_still_follows_the_roots_gitignore(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / ".gitignore").write_text("sub/*.log\n")
    (workspace / ".git").mkdir()  # ripgrep reads .gitignore files inside a repository
    (workspace / "sub").mkdir()
    (workspace / "sub" / "a.log").write_text("NEEDLE\n")
    (workspace / "sub" / "b.txt").write_text("NEEDLE\n")
    result = calls.call(core, "grep", {"pattern": "NEEDLE", "path": str(workspace / "sub")})
    assert [Path(m["file_path"]).name for m in result["matches"]] == ["b.txt"]
