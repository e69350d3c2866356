"""Opening beneath a root's descriptor (server/files/beneath.py): the kernel's openat2 and the
portable component-by-component walk must refuse the same escapes."""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from helpers import run_python
from readkeeper.errors import ReadkeeperError
from readkeeper.files import beneath, fileio
from readkeeper.files.beneath import Anchor, Moved
from readkeeper.files.fileio import open_regular, read_at_most
from readkeeper.files.paths import Location, Workspace


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


def test_a_symlink_on_the_way_is_moved_naming_the_whole_path(
    walk: str, tree: tuple[Path, Path]
) -> None:
    # What a message names (fileio.moved): the path beneath the anchor, not one name of
    # it, whichever open met the link.
    root, outside = tree
    anchor = Anchor.open(str(root))
    (root / "sub" / "deep").rename(root / "sub" / "was-deep")
    (root / "sub" / "deep").symlink_to(outside)
    for opened in (
        lambda: anchor.open_folder("sub/deep"),
        lambda: anchor.make_folders("sub/deep/new"),
    ):
        with pytest.raises(Moved) as caught:
            opened()
        assert caught.value.filename in (str(root / "sub" / "deep"), str(root / "sub/deep/new"))
    assert not (outside / "new").exists()


def _inside_file(root: Path) -> Location:
    """Where sub/deep/a.txt of a workspace rooted at `root` is, as reads resolve it."""
    workspace = Workspace()
    workspace.set_roots([str(root)])
    return workspace.resolve("sub/deep/a.txt")


def _refusal(where: Location) -> ReadkeeperError:
    """The error of opening `where`, which must be refused."""
    with pytest.raises(ReadkeeperError) as caught, open_regular(where):
        pass
    return caught.value


def test_a_file_swapped_for_a_symlink_is_not_read(walk: str, tree: tuple[Path, Path]) -> None:
    root, outside = tree
    where = _inside_file(root)
    os.replace(root / "sub" / "deep" / "a.txt", root / "a.txt.bak")
    (root / "sub" / "deep" / "a.txt").symlink_to(outside / "a.txt")
    with pytest.raises(ReadkeeperError) as caught, open_regular(where) as opened:
        read_at_most(opened.fd, 100)
    assert caught.value.kind == "stale"
    assert caught.value.data["moved"] is True


def _open_changed_after_the_check(
    monkeypatch: pytest.MonkeyPatch, root: Path, change: Callable[[Path], object]
) -> ReadkeeperError:
    """Open sub/deep/a.txt of `root`, with `change(its path)` run between the look at
    its name (lstat) and the open; returns the refusal."""
    where = _inside_file(root)
    looked = fileio.lstat_in

    def look_then_change(folder: int, name: str) -> os.stat_result | None:
        seen = looked(folder, name)
        change(root / "sub" / "deep" / "a.txt")
        return seen

    monkeypatch.setattr(fileio, "lstat_in", look_then_change)
    return _refusal(where)


def test_a_file_swapped_for_a_symlink_between_its_check_and_its_open_is_stale(
    tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, outside = tree

    def plant_a_link(name: Path) -> None:
        os.replace(name, root / "a.txt.bak")
        name.symlink_to(outside / "a.txt")

    error = _open_changed_after_the_check(monkeypatch, root, plant_a_link)
    assert error.kind == "stale"
    assert error.data["moved"] is True


def test_a_file_swapped_for_a_fifo_between_its_check_and_its_open_is_refused_at_once(
    tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A FIFO with no writer blocks an open that waits: the open must not wait.
    def plant_a_fifo(name: Path) -> None:
        name.unlink()
        os.mkfifo(name)

    error = _open_changed_after_the_check(monkeypatch, tree[0], plant_a_fifo)
    assert error.kind == "unsupported", error
    assert "not a regular file" in error.message


def test_a_file_deleted_between_its_check_and_its_open_is_not_found(
    tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    error = _open_changed_after_the_check(monkeypatch, tree[0], Path.unlink)
    assert error.kind == "not_found"
    assert "disappeared while being opened" in error.message


def test_read_at_most_reads_up_to_the_limit_across_chunks_and_stops_at_the_end(
    tmp_path: Path,
) -> None:
    chunk = fileio._CHUNK  # fileio reads at most this much per system call
    path = tmp_path / "big.bin"
    path.write_bytes(b"x" * (2 * chunk))
    fd = os.open(path, os.O_RDONLY)
    try:
        assert read_at_most(fd, chunk + 1) == b"x" * (chunk + 1)
        assert read_at_most(fd, 1) == b"x"
        assert read_at_most(fd, 0) == b""
        assert len(read_at_most(fd, chunk)) == chunk - 2  # the rest, then the end
    finally:
        os.close(fd)


def test_a_read_that_would_wait_for_data_is_unsupported_not_a_hang() -> None:
    # A "regular" file that is a kernel interface (/proc/kmsg) with nothing to say yet
    # reads like an empty non-blocking pipe.
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    try:
        with pytest.raises(ReadkeeperError) as caught:
            read_at_most(read_end, 100)
        assert caught.value.kind == "unsupported"
        assert "waits for events" in caught.value.message
    finally:
        os.close(read_end)
        os.close(write_end)


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
    from sandbox_helpers import SECRET
    from swapper import swapping

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


def test_opens_go_through_openat2_where_the_kernel_has_it(tree: tuple[Path, Path]) -> None:
    # The "openat2" runs of the tests above must really take openat2 (Linux 5.6 and
    # later, as CI's kernel is), also after a test forced the portable walk and let go.
    root, _ = tree
    release = tuple(int(n) for n in os.uname().release.split("-")[0].split(".")[:2])
    if sys.platform != "linux" or release < (5, 6):
        pytest.skip("openat2 needs Linux 5.6 or later")
    # In a fresh process (the server), from the first open on.
    script = (
        "import os, sys\n"
        "from readkeeper.files import beneath\n"
        "os.close(beneath.Anchor.open(sys.argv[1]).open_folder('sub'))\n"
        "print(beneath.openat2_available())\n"
    )
    done = run_python(script, str(root))
    assert done.stdout.strip() == "True", done.stderr
    beneath.force_portable_walk(True)
    beneath.force_portable_walk(False)
    os.close(Anchor.open(str(root)).open_folder("sub"))
    assert beneath.openat2_available()
    beneath.force_portable_walk(True)
    try:
        os.close(Anchor.open(str(root)).open_folder("sub"))
        assert not beneath.openat2_available()
    finally:
        beneath.force_portable_walk(False)


def test_a_first_open_of_a_missing_folder_does_not_turn_openat2_off(
    tree: tuple[Path, Path],
) -> None:
    # Only the kernel refusing the call itself (ENOSYS, EPERM) means openat2 is missing;
    # a path that is not there is the path's fault.
    root, _ = tree
    release = tuple(int(n) for n in os.uname().release.split("-")[0].split(".")[:2])
    if sys.platform != "linux" or release < (5, 6):
        pytest.skip("openat2 needs Linux 5.6 or later")
    script = (
        "import os, sys\n"
        "from readkeeper.files import beneath\n"
        "anchor = beneath.Anchor.open(sys.argv[1])\n"
        "try:\n"
        "    anchor.open_folder('missing')\n"
        "except FileNotFoundError:\n"
        "    pass\n"
        "os.close(anchor.open_folder('sub'))\n"
        "print(beneath.openat2_available())\n"
    )
    done = run_python(script, str(root))
    assert done.stdout.strip() == "True", done.stderr


def test_a_folder_opened_as_descriptor_0_opens(tree: tuple[Path, Path]) -> None:
    # A server started with stdin closed (a TCP server, a daemon) gets descriptor 0 for
    # its next open: that is a descriptor like any other, not a failure.
    root, _ = tree
    script = (
        "import os, sys\n"
        "from readkeeper.files import beneath\n"
        "anchor = beneath.Anchor.open(sys.argv[1])\n"
        "os.close(0)\n"
        "fd = anchor.open_folder('sub')\n"
        "print(fd, os.path.samestat(os.fstat(fd), os.stat(sys.argv[1] + '/sub')))\n"
    )
    done = run_python(script, str(root), stdin=subprocess.DEVNULL)
    assert done.stdout.split() == ["0", "True"], done.stderr


def test_a_folder_on_another_filesystem_beneath_the_anchor_opens(walk: str) -> None:
    # A mount point inside a workspace (a bind mount, a container volume) is crossed:
    # only symlinks and ways up are refused.
    if sys.platform != "linux" or not os.path.ismount("/proc"):
        pytest.skip("needs Linux's /proc mount")
    fd = Anchor.open("/").open_folder("proc")
    try:
        assert os.path.samestat(os.fstat(fd), os.stat("/proc"))
    finally:
        os.close(fd)


def test_a_file_swapped_for_a_link_to_a_folder_is_stale_not_a_folder(
    walk: str, tree: tuple[Path, Path]
) -> None:
    # The entry is looked at without following it: a link planted there is a change
    # of the tree, whatever it points at (a folder, nothing at all).
    root, outside = tree
    where = _inside_file(root)
    name = root / "sub" / "deep" / "a.txt"
    name.unlink()
    for target in (outside, outside / "missing"):
        name.symlink_to(target)
        error = _refusal(where)
        assert error.kind == "stale"
        assert error.data["moved"] is True
        assert where.lstat() is not None
        name.unlink()


def test_opening_a_name_that_is_a_symlink_raises_moved(tree: tuple[Path, Path]) -> None:
    # The last step of every open: a link planted under the name after it was checked.
    root, outside = tree
    (root / "link.txt").symlink_to(outside / "a.txt")
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(Moved):
            beneath.open_in(folder, "link.txt", os.O_RDONLY)
        fd = beneath.open_in(folder, "sub/deep/a.txt", os.O_RDONLY)
        os.close(fd)
    finally:
        os.close(folder)


def test_a_relative_symlink_that_stays_inside_is_refused(
    walk: str, tree: tuple[Path, Path]
) -> None:
    # Not only an absolute link (which openat2 refuses as an escape): any link at all.
    root, _ = tree
    anchor = Anchor.open(str(root))
    (root / "link").symlink_to("sub")
    with pytest.raises(Moved):
        anchor.open_folder("link/deep")


def test_a_folder_opened_for_writing_can_be_fsynced(walk: str, tree: tuple[Path, Path]) -> None:
    # The rename of a write is made durable by fsyncing its folder, which a descriptor
    # that only names the folder (O_PATH) cannot do.
    root, _ = tree
    anchor = Anchor.open(str(root))
    for relative in ("", "sub", "sub/deep"):
        fd = anchor.open_folder(relative, write=True)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def test_made_folders_get_the_mode_any_new_folder_gets(tree: tuple[Path, Path]) -> None:
    # 0o777 less the umask, as `mkdir -p` would make them.
    root, _ = tree
    os.mkdir(root / "reference")
    Anchor.open(str(root)).make_folders("fresh/one")
    expected = stat.S_IMODE((root / "reference").stat().st_mode)
    assert stat.S_IMODE((root / "fresh").stat().st_mode) == expected
    assert stat.S_IMODE((root / "fresh" / "one").stat().st_mode) == expected


def test_a_failed_walk_leaves_the_anchor_open_and_leaks_nothing(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    anchor = Anchor.open(str(root))
    beneath.force_portable_walk(True)

    def open_on_sub() -> list[str]:  # descriptors of `sub` (other threads' do not count)
        found = []
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/self/fd/{fd}") == str(root / "sub"):
                    found.append(fd)
        return found

    try:
        for missing in ("nothing/here", "sub/nothing/here"):
            with pytest.raises(FileNotFoundError):
                anchor.open_folder(missing)
        assert open_on_sub() == []
        os.close(anchor.open_folder("sub/deep"))
    finally:
        beneath.force_portable_walk(False)


def test_make_folders_refuses_a_file_where_a_folder_should_be(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    with pytest.raises(NotADirectoryError):
        Anchor.open(str(root)).make_folders("sub/deep/a.txt")
    assert (root / "sub" / "deep" / "a.txt").read_text() == "inside\n"


def test_a_fifo_on_the_way_is_not_a_folder_and_never_blocks(
    walk: str, tree: tuple[Path, Path]
) -> None:
    # Opening a FIFO to read waits for a writer: a folder on the way is only named
    # (O_PATH), never opened, so a FIFO there is refused at once.
    root, _ = tree
    os.mkfifo(root / "fifo")
    anchor = Anchor.open(str(root))
    with pytest.raises(NotADirectoryError):
        anchor.open_folder("fifo/sub")


def test_a_folder_swapped_for_a_link_after_resolving_is_stale(
    walk: str, tree: tuple[Path, Path]
) -> None:
    root, outside = tree
    where = _inside_file(root)
    (root / "sub" / "deep").rename(root / "sub" / "was-deep")
    (root / "sub" / "deep").symlink_to(outside)
    error = _refusal(where)
    assert error.kind == "stale"
    assert error.data["moved"] is True


def test_an_absolute_path_is_never_opened_from_the_anchor(
    walk: str, tree: tuple[Path, Path]
) -> None:
    # openat2 would take an absolute path from `/`, not beneath the anchor's folder.
    root, outside = tree
    anchor = Anchor.open(str(root))
    with pytest.raises(OSError):  # noqa: PT011 (Moved or FileNotFoundError, by walk)
        os.close(anchor.open_folder(str(outside)))


_REFUSE_OPENAT2 = """
import ctypes, os, sys

class Filter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]

class Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(Filter))]

errno_ = int(sys.argv[2])
rules = (Filter * 4)(
    Filter(0x20, 0, 0, 0),                       # load the system call number
    Filter(0x15, 0, 1, 437),                     # openat2?
    Filter(0x06, 0, 0, 0x00050000 | errno_),     # refused, with this errno
    Filter(0x06, 0, 0, 0x7FFF0000),              # everything else allowed
)
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.byref(Program(4, rules)), 0, 0):
    sys.exit("seccomp: " + os.strerror(ctypes.get_errno()))
from readkeeper.files import beneath
anchor = beneath.Anchor.open(sys.argv[1])
for _ in range(2):
    os.close(anchor.open_folder("sub/deep"))
print(beneath.openat2_available())
"""


@pytest.mark.parametrize("refusal", ["ENOSYS", "EPERM"])
def test_where_the_kernel_refuses_openat2_opens_take_the_walk(
    refusal: str, tree: tuple[Path, Path]
) -> None:
    # An old kernel (ENOSYS) or a container's seccomp filter (EPERM), made real with a
    # seccomp filter in a child process: the first open finds out, and every open
    # then takes the portable walk.
    import errno

    if sys.platform != "linux" or os.uname().machine == "alpha":
        pytest.skip("a seccomp filter on openat2 (437) is Linux's")
    root, _ = tree
    done = run_python(_REFUSE_OPENAT2, str(root), str(getattr(errno, refusal)))
    assert (done.returncode, done.stdout.strip()) == (0, "False"), done.stderr
