"""A workspace narrowed to an attached agent's roots (server/files/narrowed.py): it
reaches its roots and the session's rendered pages, nothing else of the editor's, and
its roots are opened beneath the editor's root, so a root swapped for a link opens
nothing (on both ways of resolving beneath a folder)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from readkeeper.errors import ReadkeeperError
from readkeeper.files import beneath
from readkeeper.files.beneath import Anchor, Moved
from readkeeper.files.fileio import open_regular, read_at_most
from readkeeper.files.narrowed import Narrowed
from readkeeper.files.paths import Location, Workspace


@pytest.fixture(params=["openat2", "portable"])
def walk(request: pytest.FixtureRequest) -> Iterator[None]:
    beneath.force_portable_walk(request.param == "portable")
    try:
        yield
    finally:
        beneath.force_portable_walk(False)


@pytest.fixture
def editor(workspace: Path) -> Workspace:
    (workspace / "secret.env").write_text("TOKEN=hunter2\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "f.txt").write_text("inside\n")
    (workspace / "other").mkdir()
    (workspace / "other" / "f.txt").write_text("TOKEN=hunter2\n")
    outer = Workspace()
    outer.set_roots([str(workspace)])
    outer.allowed = (str(workspace.parent),)
    return outer


def read(where: Location) -> bytes:
    with open_regular(where) as opened:
        return read_at_most(opened.fd, 1000)


def test_it_reaches_its_roots_and_the_sessions_pages_only(
    walk: None, editor: Workspace, workspace: Path, tmp_path: Path
) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "p1.png").write_bytes(b"png")
    sub = str(workspace / "sub")
    narrowed = Narrowed.within(editor, [sub], lambda s: str(pages) if s == "mine" else None)
    assert read(narrowed.resolve("f.txt")) == b"inside\n"
    for beyond in ("../secret.env", str(workspace / "secret.env"), str(tmp_path)):
        with pytest.raises(ReadkeeperError) as refused:
            narrowed.resolve(beyond)
        assert refused.value.kind == "outside_workspace"
    assert narrowed.locate(str(pages / "p1.png"), "mine") is not None
    assert narrowed.locate(str(pages / "p1.png"), "theirs") is None
    assert narrowed.locate(str(pages / "p1.png"), "mine", grants=False) is None
    paths = [f"{sub}/f.txt", str(workspace / "secret.env"), str(pages / "p1.png")]
    assert narrowed.forgettable(paths, "mine") == [paths[0], paths[2]]


def test_a_root_swapped_for_a_link_opens_nothing(
    walk: None, editor: Workspace, workspace: Path
) -> None:
    narrowed = Narrowed.within(editor, [str(workspace / "sub")], lambda s: None)
    assert read(narrowed.resolve("f.txt")) == b"inside\n"
    (workspace / "sub").rename(workspace / "sub.old")
    (workspace / "sub").symlink_to(workspace / "other", target_is_directory=True)
    for attempt in (lambda: narrowed.resolve("f.txt"), lambda: narrowed.direct("f.txt")):
        try:
            where = attempt()
        except ReadkeeperError:
            continue
        assert where is None
    where = narrowed.locate(str(workspace / "sub" / "f.txt"))
    assert where is None


def test_an_anchor_beneath_another_refuses_what_is_not_beneath_it(
    walk: None, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "sub").mkdir()
    (workspace / "link").symlink_to(workspace / "sub", target_is_directory=True)
    outer = Anchor.open(str(workspace))
    assert Anchor.beneath(outer, str(workspace / "sub")).identity[1] == (
        (workspace / "sub").stat().st_ino
    )
    for path in (str(workspace / "link"), str(tmp_path), str(workspace) + "x/sub"):
        with pytest.raises(Moved):
            Anchor.beneath(outer, path)
