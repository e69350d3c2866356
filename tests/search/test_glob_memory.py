"""What glob keeps (listings, times) is bounded in bytes over every folder globbed from:
an attacker's tree of long names in a deep chain, globbed from each folder of the chain
(each a listing of its own: a slashed pattern above keeps the root's from answering),
once grew the server by 2.4 MB a call without end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from readkeeper import calls
from readkeeper.search import mtimes, rg
from watch_core_helpers import Watching

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify"),
    pytest.mark.skipif(rg.landlock_abi() < 1, reason="a listing is kept only under Landlock"),
]

DEPTH, FILES = 12, 40


def _chain(root: Path) -> list[Path]:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("no/such/path\n")  # not a plain name
    folders = [root]
    for level in range(DEPTH):
        folders.append(folders[-1] / (f"level{level:02d}_" + "n" * 120))
    folders[-1].mkdir(parents=True)
    for number in range(FILES):
        (folders[-1] / (f"f{number:03d}_" + "x" * 180 + ".txt")).write_text("x\n")
    return folders


def test_what_glob_keeps_stays_within_its_byte_budget(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A small budget, so that a small tree crosses it (the rule, not the constant).
    monkeypatch.setattr(mtimes, "MAX_BYTES", 120_000)
    folders = _chain(workspace)
    watching = Watching(workspace, {"readAhead": False}).start()
    try:
        core = watching.core
        peak = 0
        for folder in folders:
            for _ in range(2):  # the second call keeps what the first one built
                answer = calls.call(core, "glob", {"pattern": "**/*.txt", "path": str(folder)})
                assert answer["paths"]  # a page within the token cap: long names
            core.file_times.builds.wait()
            peak = max(peak, *core.file_times.held())
        assert peak <= mtimes.MAX_BYTES
        assert core.file_times.listings_used > 0  # something was kept: the budget was used
    finally:
        watching.core.close()
