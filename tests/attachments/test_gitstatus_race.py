"""git status when the repository is swapped after readkeeper checked it: libgit2 opens
the repository by path, so a `.git` replaced by a link to a repository outside between
the check and libgit2's open would list that repository's names. The swap is made at
that very moment (when the worker is handed the request), and left in place: the answer
must be discarded, never shown."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_lsp_gitstatus_hostile import OUTSIDE_NAME, committed

from readkeeper.attachments import gitstatus, gitstatus_workers
from readkeeper.errors import ReadkeeperError
from readkeeper.files.paths import Workspace


def test_a_git_folder_swapped_for_a_link_out_after_the_check_shows_nothing(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = committed(tmp_path / "outside", OUTSIDE_NAME)
    committed(workspace)
    roots = Workspace()
    roots.set_roots([str(workspace)])
    handed = gitstatus_workers.Worker.ready

    def swapped_then_handed(worker: gitstatus_workers.Worker, *args: float) -> object:
        (workspace / ".git").rename(workspace / ".git.checked")
        (workspace / ".git").symlink_to(outside / ".git", target_is_directory=True)
        return handed(worker, *args)

    monkeypatch.setattr(gitstatus_workers.Worker, "ready", swapped_then_handed)
    try:
        shown = gitstatus.status(roots, str(workspace), 20.0)
    except ReadkeeperError as exc:
        shown = str(exc)
        assert "moved" in shown
    assert OUTSIDE_NAME not in shown
    os.unlink(workspace / ".git")
