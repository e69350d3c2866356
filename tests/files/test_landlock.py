"""The Landlock binding (server/files/landlock.py): a child that confined itself reads
beneath the folders it was allowed and nothing else, and the ripgrep launcher does the
same for the program it becomes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.files import landlock

pytestmark = pytest.mark.skipif(landlock.abi() < 1, reason="the kernel has no Landlock")

_CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
import landlock
allowed, inside, outside = sys.argv[2:5]
print(landlock.restrict([allowed]))
print(open(inside).read().strip())
try:
    open(outside).read()
    print("outside read")
except PermissionError:
    print("outside refused")
try:
    open(inside + ".new", "w")
    print("written")
except PermissionError:
    print("write refused")
"""


def _tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    (tmp_path / "allowed" / "deep").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    inside = tmp_path / "allowed" / "deep" / "in.txt"
    inside.write_text("inside text\n")
    outside = tmp_path / "outside" / "secret.txt"
    outside.write_text("outside text\n")
    return tmp_path / "allowed", inside, outside


def test_a_restricted_child_reads_inside_its_roots_and_nothing_outside(tmp_path: Path) -> None:
    allowed, inside, outside = _tree(tmp_path)
    folder = str(Path(landlock.__file__).parent)
    ran = subprocess.run(
        [sys.executable, "-c", _CHILD, folder, str(allowed), str(inside), str(outside)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.stdout.split("\n")[:4] == ["True", "inside text", "outside refused", "write refused"]


def test_a_symlink_inside_the_root_to_outside_leads_nowhere(tmp_path: Path) -> None:
    allowed, _, outside = _tree(tmp_path)
    (allowed / "link").symlink_to(outside.parent, target_is_directory=True)
    ran = subprocess.run(
        [sys.executable, "-S", "-P", landlock.__file__, ".", "--", "/bin/cat", "link/secret.txt"],
        cwd=allowed,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "outside text" not in ran.stdout
    assert "Permission denied" in ran.stderr
    unconfined = subprocess.run(
        ["/bin/cat", "link/secret.txt"], cwd=allowed, capture_output=True, text=True, timeout=60
    )
    assert unconfined.stdout == "outside text\n"  # the link itself works: the test is live


def test_stats_say_whether_the_programs_readkeeper_runs_are_confined(core: Readkeeper) -> None:
    sandbox = calls.call(core, "stats", {})["sandbox"]
    assert sandbox["landlock_abi"] == landlock.abi()
    assert sandbox["programs_confined"] is True
    assert "Landlock" in sandbox["note"]
