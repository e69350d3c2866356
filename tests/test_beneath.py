"""Opening beneath a root's descriptor (server/beneath.py): the kernel's openat2 and the
portable component-by-component walk must refuse the same escapes."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from readkeeper import atomic, beneath
from readkeeper.beneath import Anchor, Moved
from readkeeper.errors import ReadkeeperError
from readkeeper.fileio import open_regular, read_at_most
from readkeeper.paths import Workspace


@pytest.fixture(params=["openat2", "portable"])
def walk(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each test runs on both ways of resolving beneath a folder."""
    beneath.force_portable_walk(request.param == "portable")
    try:
        yield str(request.param)
    finally:
        beneath.force_portable_walk(False)


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "ws"
    (root / "sub" / "deep").mkdir(parents=True)
    (root / "sub" / "deep" / "a.txt").write_text("inside\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.txt").write_text("SECRET\n")
    return root.resolve(), outside.resolve()


def test_a_folder_beneath_the_anchor_opens(walk: str, tree: tuple[Path, Path]) -> None:
    root, _ = tree
    anchor = Anchor.open(str(root))
    fd = anchor.open_folder("sub/deep")
    try:
        assert os.path.samestat(os.fstat(fd), os.stat(root / "sub" / "deep"))
    finally:
        os.close(fd)


def test_a_folder_swapped_for_a_symlink_out_is_refused(walk: str, tree: tuple[Path, Path]) -> None:
    root, outside = tree
    anchor = Anchor.open(str(root))
    (root / "sub" / "deep").rename(root / "sub" / "was-deep")
    (root / "sub" / "deep").symlink_to(outside)
    with pytest.raises(Moved):
        anchor.open_folder("sub/deep")


def test_a_symlink_that_stays_inside_is_refused_too(walk: str, tree: tuple[Path, Path]) -> None:
    # The caller hands real paths: any symlink on the way means the tree changed since.
    root, _ = tree
    anchor = Anchor.open(str(root))
    (root / "link").symlink_to(root / "sub")
    with pytest.raises(Moved):
        anchor.open_folder("link/deep")


def test_a_way_up_is_refused(walk: str, tree: tuple[Path, Path]) -> None:
    root, _ = tree
    anchor = Anchor.open(str(root / "sub"))
    with pytest.raises(Moved):
        anchor.open_folder("../sub")


def test_the_anchor_holds_the_folder_it_opened_after_a_rename(
    walk: str, tree: tuple[Path, Path]
) -> None:
    root, outside = tree
    anchor = Anchor.open(str(root / "sub"))
    (root / "sub").rename(root / "moved")
    (root / "sub").symlink_to(outside)
    fd = anchor.open_folder("deep")
    try:
        assert os.path.samestat(os.fstat(fd), os.stat(root / "moved" / "deep"))
    finally:
        os.close(fd)


def test_make_folders_will_not_create_through_a_symlink(walk: str, tree: tuple[Path, Path]) -> None:
    root, outside = tree
    anchor = Anchor.open(str(root))
    (root / "out").symlink_to(outside)
    with pytest.raises(OSError):  # noqa: PT011 (ENOTDIR or ELOOP, by system)
        anchor.make_folders("out/new")
    assert not (outside / "new").exists()
    anchor.make_folders("fresh/one/two")
    assert (root / "fresh" / "one" / "two").is_dir()


def test_a_file_swapped_for_a_symlink_is_not_read(walk: str, tree: tuple[Path, Path]) -> None:
    root, outside = tree
    workspace = Workspace()
    workspace.set_roots([str(root)])
    where = workspace.resolve("sub/deep/a.txt")
    os.replace(root / "sub" / "deep" / "a.txt", root / "a.txt.bak")
    (root / "sub" / "deep" / "a.txt").symlink_to(outside / "a.txt")
    with pytest.raises(ReadkeeperError) as caught, open_regular(where) as opened:
        read_at_most(opened.fd, 100)
    assert caught.value.kind == "stale"
    assert caught.value.data["moved"] is True


def test_a_located_read_gets_the_inside_file(walk: str, tree: tuple[Path, Path]) -> None:
    root, _ = tree
    workspace = Workspace()
    workspace.set_roots([str(root)])
    where = workspace.resolve(str(root / "sub" / "deep" / "a.txt"))
    with open_regular(where) as opened:
        assert read_at_most(opened.fd, 100) == b"inside\n"


def test_a_granted_single_file_opens_only_that_name(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    (outside / "b.txt").write_text("other\n")
    workspace = Workspace()
    workspace.set_roots([str(root)])
    workspace.grant("s", str(outside / "a.txt"))
    where = workspace.locate(str(outside / "a.txt"), "s")
    assert where is not None
    with open_regular(where) as opened:
        assert read_at_most(opened.fd, 100) == b"SECRET\n"
    assert workspace.locate(str(outside / "b.txt"), "s") is None
    assert workspace.locate(str(outside / "a.txt"), "s", grants=False) is None


def test_leftover_temp_files_older_than_the_start_are_removed(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    old = root / ".a.txt.0badf00d.rk-tmp"
    old.write_bytes(b"half a write")
    os.utime(old, ns=(1_000_000_000, 1_000_000_000))
    young = root / ".a.txt.0000beef.rk-tmp"
    young.write_bytes(b"a write in progress")
    mine = root / "notes.rk-tmp.txt"  # not ours: the suffix must end the name
    mine.write_text("keep")
    os.utime(mine, ns=(1_000_000_000, 1_000_000_000))
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        removed = atomic.remove_leftovers(fd, older_than_ns=young.stat().st_mtime_ns)
    finally:
        os.close(fd)
    assert removed == 1
    assert not old.exists()
    assert young.exists()
    assert mine.exists()


def test_anchor_descriptors_are_closed_when_dropped(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    anchor = Anchor.open(str(root))
    fd = anchor.fd
    assert os.readlink(f"/proc/self/fd/{fd}") == str(root)
    del anchor
    # Closed: the number is free, or already another file's (another thread's open).
    with contextlib.suppress(FileNotFoundError):
        assert os.readlink(f"/proc/self/fd/{fd}") != str(root)


def test_both_walks_hold_against_a_racing_swapper(walk: str, tmp_path: Path) -> None:
    """Raced in process (so the portable fallback is raced too): a folder swapped with
    a symlink out, 1,000 reads and 1,000 creates, nothing read or made outside, and
    every refusal a named error."""
    from sandbox_helpers import SECRET, swapping

    from readkeeper.core import Readkeeper
    from readkeeper.protocol import ReadParams, WriteParams

    root = tmp_path / "ws"
    (root / "d").mkdir(parents=True)
    (root / "d" / "r.txt").write_text("inside\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "r.txt").write_text(f"{SECRET}\n")
    (root / ".d.link").symlink_to(outside, target_is_directory=True)
    core = Readkeeper(roots=[str(root)], client_settings={"watch": False})
    outcomes: dict[str, int] = {}
    with swapping(root / "d", root / ".d.link"):
        for i in range(1_000):
            for op in ("read", "create"):
                try:
                    if op == "read":
                        result = core.read(ReadParams(str(root / "d" / "r.txt"), force=True))
                        assert SECRET not in str(result)
                    else:
                        core.write(WriteParams(str(root / "d" / f"n{i}.txt"), "new\n"))
                    outcomes[f"{op} ok"] = outcomes.get(f"{op} ok", 0) + 1
                except ReadkeeperError as exc:
                    outcomes[exc.kind] = outcomes.get(exc.kind, 0) + 1
    assert sorted(p.name for p in outside.iterdir()) == ["r.txt"], "created outside"
    assert (outside / "r.txt").read_text() == f"{SECRET}\n"
    # The race was real: some tries got through, some were refused.
    assert outcomes.get("read ok"), outcomes
    assert outcomes.get("create ok"), outcomes
    assert sum(n for k, n in outcomes.items() if not k.endswith(" ok")), outcomes
