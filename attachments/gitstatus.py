"""git status of each workspace root: the branch and what is changed, with a timeout.

A repository is untrusted input, and git trusts its repository: `git status` runs the
programs its config names (fsmonitor, filters, and for a partial clone's missing
objects a whole fetch: sshCommand, uploadpack, credential helpers, askpass, `ext::`
transports), and follows its `core.worktree`, `commondir` and alternates wherever they
point. No list of `-c` switches closes all of that (git 2.39 has no GIT_NO_LAZY_FETCH).
So readkeeper does not run git: libgit2 computes the status (gitstatus_worker.py), which
has no way to run a program, in a process of its own that the deadline kills.

What libgit2 still reads on the repository's say is confined here, before it starts:
`.git` is opened beneath the root (a symlink is refused), a `gitdir:` file, `commondir`
and `objects/info/alternates` must lead into the workspace, the git folder's own entries
may not be symlinks, and a config that includes other files is refused. The work tree is
always the root itself. A repository that fails these checks gets an attachment saying
why and to ask the user (never a command for the agent: git would run what the
repository names); nothing of it is shown. A pointer that leads nowhere is the
repository's state, `corrupt` (gitstatus_kinds.py), never readkeeper's fault.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import stat
import time
from contextlib import ExitStack
from typing import Any, NoReturn

from readkeeper import quoting
from readkeeper.errors import ReadkeeperError, library_words
from readkeeper.files.beneath import lstat_in, open_in
from readkeeper.files.paths import ALLOWED_SETTING, Workspace
from readkeeper.files.reach import LeadsOut, walk

from . import gitstatus_kinds, gitstatus_stalls, gitstatus_workers
from .gitstatus_workers import read_line


class NotARepository(Exception):
    """The root is not in a git repository: there is no git status to attach."""

    pass


class Unsafe(Exception):
    """The repository cannot be read without trusting it; the message says why."""

    pass


# The entries of a git folder that libgit2 opens by path during a status: a symlink
# among them could hand it another repository's index, refs, objects or config, or a
# file anywhere to read (a FIFO that never ends). Each is checked after its folder.
_ENTRIES = tuple(
    "HEAD config config.worktree commondir index packed-refs refs objects objects/info "  # noqa: SIM905
    "objects/pack info info/exclude info/attributes info/sparse-checkout shallow gitdir".split()
)
# `[include]`, `[includeIf "..."]`: libgit2 would read the file they name, anywhere.
_INCLUDE = re.compile(rb"^\s*\[\s*include", re.IGNORECASE | re.MULTILINE)
# libgit2 follows alternates of alternates this deep.
_ALTERNATES_DEPTH = 5
_SMALL_FILE_MAX = 1 << 20
_O_PATH = getattr(os, "O_PATH", os.O_RDONLY)
# Each status confined by Landlock where the kernel has it (tests turn this off to show
# that their race is real).
CONFINE = True


def status(
    workspace: Workspace,
    root: str,
    timeout: float,
    setting: str = gitstatus_stalls.GIT_TIMEOUT,
    until: float | None = None,
) -> str:
    """git status of `root`, compact: the status, or why it is not shown. Raises
    NotARepository, or ReadkeeperError when reading fails (`corrupt`, `stale`,
    `internal`) or takes longer than `timeout` seconds from when it is sent to a worker,
    the time `setting` gives it (`too_large`, remembered). By `until` (the call's time,
    time.monotonic()) a status still waiting for a worker is told to ask again, and one
    sent is stopped (gitstatus_workers.NotRun, the call's cut) unless it has run its own
    time: `timeout`, or half of it when the call's time is what gives it (`setting`
    ATTACHMENTS_TIMEOUT); neither is remembered."""
    if until is None:
        until = time.monotonic() + timeout + gitstatus_workers.START_SECONDS
    key = (id(workspace), root, timeout, setting)  # one run for concurrent calls
    return gitstatus_workers.shared(
        key, until, lambda: _status(workspace, root, timeout, setting, until)
    )


def _status(workspace: Workspace, root: str, timeout: float, setting: str, until: float) -> str:
    own = timeout / 2 if setting == gitstatus_stalls.ATTACHMENTS_TIMEOUT else timeout
    try:
        with ExitStack() as held:
            reach: list[int] = []
            git_dir, work_tree = _repository(workspace, root, held, reach)
            gitstatus_kinds.known_stall(root, work_tree)
            # Ran out of time on this very git folder: said at once.
            seen = gitstatus_stalls.known(root, git_dir, work_tree, timeout)
            gitstatus_stalls.check_pack(git_dir)
            first = gitstatus_stalls.answered(root)
            try:
                answer = _run(git_dir, work_tree, reach, (timeout, own), until, first)
            except TimeoutError:  # a FIFO deep in the tree or among the objects, or slow
                raise gitstatus_stalls.timed_out(
                    root, git_dir, work_tree, seen, timeout, setting, until
                ) from None
            except gitstatus_workers.NotRun as cut:
                if cut.started:  # the call's cut (collect.py says it)
                    raise
                # other roots held the workers all along
                raise gitstatus_kinds.not_run(gitstatus_workers.MOST_WORKERS) from None
            gitstatus_stalls.forget(root, answered=True)
        if "refused" in answer:
            raise Unsafe(str(answer["refused"]))
    except Unsafe as refused:
        return (
            f"git status of {quoting.name(root)}: not shown: {quoting.line(str(refused))}. "
            "readkeeper reads a repository only when nothing in it can run a program or "
            "reach outside the workspace.\nAsk the user about it: if they trust this "
            "repository, they may run git status in it themselves."
        )
    if "failed" in answer:
        raise gitstatus_kinds.corrupt(library_words(str(answer["failed"])))
    # The worker C-quotes names as git does; a branch name may still hold U+2028 and
    # the like, so every line is escaped like any file text (quoting.py). The branch line
    # continues readkeeper's sentence: every character a name escapes is escaped there (a
    # ref name holds no space, so it cannot pose as the words around it).
    changes = [quoting.line(line) for line in answer["lines"]]
    total: int = answer["total"]
    summary = f"{total} changed files" if total else "clean"
    branch = quoting.phrase(str(answer["branch"]))
    return "\n".join([f"git status of {quoting.name(root)}: branch {branch}, {summary}", *changes])


def _repository(
    workspace: Workspace, root: str, held: ExitStack, reach: list[int]
) -> tuple[int, int]:
    """Open descriptors of the git folder of `root` and of `root` itself, once every
    path libgit2 will take from the repository has been checked; `reach` gets every
    folder libgit2 may read (these two, a common folder, alternates)."""
    where = workspace.locate(root, grants=False)
    if where is None:
        raise NotARepository(root)
    folder = where.anchor.open_folder(where.folder)
    held.callback(os.close, folder)
    work_tree = open_in(folder, where.name, _O_PATH | os.O_DIRECTORY)
    held.callback(os.close, work_tree)
    try:
        git_dir = _git_folder(workspace, root, work_tree, held)
        reach += [work_tree, git_dir]
        _check_git_dir(workspace, git_dir, held, reach)
    except OSError as exc:  # where the repository's files lead: never readkeeper's fault
        raise gitstatus_kinds.unreadable_file(exc) from None
    return git_dir, work_tree


def _git_folder(workspace: Workspace, root: str, work_tree: int, held: ExitStack) -> int:
    """A descriptor of the git folder `.git` at the root is or names."""
    entry = lstat_in(work_tree, ".git")
    if entry is None:
        _no_git_folder(workspace, root)
    if stat.S_ISLNK(entry.st_mode):
        raise Unsafe(f"{root}/.git is a symbolic link (to {os.readlink('.git', dir_fd=work_tree)})")
    if stat.S_ISDIR(entry.st_mode):
        git_dir = open_in(work_tree, ".git", _O_PATH | os.O_DIRECTORY)
        held.callback(os.close, git_dir)
    elif stat.S_ISREG(entry.st_mode):
        text = _gitfile_text(work_tree)
        target = os.path.normpath(os.path.join(root, text))
        what = gitstatus_kinds.pointer("its .git file points to", text)
        git_dir = _open_inside(workspace, target, held, what)
    else:  # a FIFO, a socket, a device: said, never a status gone without a word
        raise gitstatus_kinds.dot_git(entry.st_mode)
    return git_dir


def _no_git_folder(workspace: Workspace, root: str) -> NoReturn:
    """No `.git` at the root: git would look in the folders above, which lie outside
    the workspace; say so when one of them is a repository (one that another root
    holds has its own attachment)."""
    above = os.path.dirname(root)
    while True:
        if os.path.lexists(os.path.join(above, ".git")):
            if workspace.locate(above, grants=False) is not None:
                raise NotARepository(root)
            raise Unsafe(
                f"{root} lies inside the repository at {above}, outside the workspace "
                f"(open {above} as a workspace folder to see its status)"
            )
        if above == os.path.dirname(above):
            raise NotARepository(root)
        above = os.path.dirname(above)


def _gitfile_text(folder: int) -> str:
    """The path a `.git` file names, as it is written."""
    text = _read_small(folder, ".git").decode("utf-8", "replace")
    line = text.strip().splitlines()[0] if text.strip() else ""
    if not line.startswith("gitdir:"):
        raise gitstatus_kinds.not_a_pointer(text)
    return line[len("gitdir:") :].strip()


def _open_inside(workspace: Workspace, path: str, held: ExitStack, what: str) -> int:
    """A descriptor of the folder at `path` (as the repository names it), opened beneath
    the workspace root that holds it; Unsafe (naming `what`) when its text or a link on
    its way leads beyond the roots, looking at nothing outside them (files/reach.py);
    `corrupt` (or `stale`) when it cannot be opened."""
    try:
        real = walk(path, workspace.reaches())
    except OSError:
        real = LeadsOut()
    where = workspace.locate(real, grants=False) if isinstance(real, str) else None
    if where is None:
        raise Unsafe(
            f"{what}, outside the workspace (the user may allow it with {ALLOWED_SETTING})"
        )
    try:
        folder = where.anchor.open_folder(where.folder)
    except OSError as exc:  # a folder on its way missing, or a file
        raise gitstatus_kinds.unreadable(what, exc) from None
    try:
        fd = open_in(folder, where.name, _O_PATH | os.O_DIRECTORY)
    except OSError as exc:
        raise gitstatus_kinds.unreadable(what, exc) from None
    finally:
        os.close(folder)
    held.callback(os.close, fd)
    return fd


def _check_git_dir(workspace: Workspace, git_dir: int, held: ExitStack, reach: list[int]) -> None:
    """Confine what the git folder (and its common folder) leads libgit2 to."""
    folders = [git_dir]
    if lstat_in(git_dir, "commondir") is not None:
        text = _read_small(git_dir, "commondir").decode("utf-8", "replace")
        what = gitstatus_kinds.pointer("its commondir names", text)
        folders.append(_open_inside(workspace, _resolve(git_dir, text), held, what))
        reach.append(folders[-1])
    for folder in folders:
        for name in (*_ENTRIES, *gitstatus_kinds.head_ref(folder, _read_small)):
            entry = lstat_in(folder, name)
            if entry is not None and stat.S_ISLNK(entry.st_mode):
                raise Unsafe(f"{name} in its git folder is a symbolic link")
            if entry is not None:
                gitstatus_kinds.check(name, entry.st_mode)  # a FIFO: said, not waited on
        for name in ("config", "config.worktree"):
            if lstat_in(folder, name) is not None and _INCLUDE.search(_read_small(folder, name)):
                raise Unsafe("its config includes other files (include.path or includeIf)")
    _check_alternates(workspace, folders[-1], held, reach, "objects", _ALTERNATES_DEPTH)


def _check_alternates(
    workspace: Workspace, folder: int, held: ExitStack, reach: list[int], objects: str, depth: int
) -> None:
    """Every object store that `objects/info/alternates` names lies in the workspace,
    and so on down the chain."""
    if depth == 0 or lstat_in(folder, objects) is None:
        return
    store = open_in(folder, objects, _O_PATH | os.O_DIRECTORY)
    held.callback(os.close, store)
    if lstat_in(store, "info") is None:
        return
    try:
        info = open_in(store, "info", _O_PATH | os.O_DIRECTORY)
    except OSError as exc:  # an alternate store's info a file
        raise gitstatus_kinds.unreadable("an object store's info", exc) from None
    held.callback(os.close, info)
    if lstat_in(info, "alternates") is None:
        return
    for line in (
        _read_small(info, "alternates", "objects/info/alternates")
        .decode("utf-8", "replace")
        .splitlines()
    ):
        if not line.strip() or line.startswith("#"):
            continue
        what = gitstatus_kinds.pointer("its objects/info/alternates names", line)
        store = _open_inside(workspace, _resolve(store, line), held, what)
        reach.append(store)
        _check_alternates(workspace, store, held, reach, ".", depth - 1)


def _resolve(folder: int, text: str) -> str:
    """`text` as a path, relative to the folder open as `folder` (by name: where it
    really leads is found by `_open_inside`, which looks at nothing outside)."""
    return os.path.normpath(os.path.join(_real_path(folder), text.strip()))


def _read_small(folder: int, name: str, shown: str = "") -> bytes:
    """A small file of the repository, opened without following a symlink: `corrupt`
    when it is not a regular file or cannot be read, `stale` when it went meanwhile."""
    entry = lstat_in(folder, name)
    if entry is None or stat.S_ISLNK(entry.st_mode):
        raise gitstatus_kinds.stale()  # it was there a moment ago, not a link
    gitstatus_kinds.check(shown or name, entry.st_mode)
    try:
        fd = open_in(folder, name, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise gitstatus_kinds.stale() from None
    except OSError as exc:
        raise gitstatus_kinds.unreadable(quoting.name(shown or name), exc) from None
    try:
        return os.read(fd, _SMALL_FILE_MAX)
    finally:
        os.close(fd)


def _run(
    git_dir: int,
    work_tree: int,
    reach: list[int],
    timeout: tuple[float, float],
    until: float,
    first: bool,
) -> dict[str, Any]:
    """The worker's answer about the repository open as `git_dir`, for the work tree
    open as `work_tree`. libgit2 takes their real paths; with Landlock it can read
    nothing but the folders of `reach` (named with their device and inode). A worker
    that dies with the status unanswered is replaced and the status sent once more."""
    allow = [[_real_path(fd), os.fstat(fd).st_dev, os.fstat(fd).st_ino] for fd in reach]
    request = {"git_dir": _real_path(git_dir), "work_tree": _real_path(work_tree)}
    line = json.dumps({**request, "allow": allow if CONFINE else []}).encode() + b"\n"
    for tries in (1, 2):
        worker = gitstatus_workers.WORKERS.take(until, first)
        if worker is None:  # every worker busy with other roots' statuses all along
            raise gitstatus_workers.NotRun
        try:
            reply, code = _ask(worker, line, timeout, until)
        finally:
            worker.sent = None
            gitstatus_workers.WORKERS.give(worker)
        if reply.endswith(b"\n"):
            break
        if tries == 2:
            raise ReadkeeperError(
                "internal",
                f"git status failed: its reader stopped twice (exit status {code}). "
                "Ask for the attachments again.",
            )
    # libgit2 opened these folders by name: an answer about whatever stands there now
    # in place of the folders checked is not theirs. A swap undone before this look is
    # not seen here; Landlock (gitstatus_worker) keeps libgit2 from reading it.
    for fd, path in ((git_dir, request["git_dir"]), (work_tree, request["work_tree"])):
        if not _still_at(fd, path):
            raise gitstatus_kinds.stale()
    answer: dict[str, Any] = json.loads(reply)
    return answer


def _ask(
    worker: gitstatus_workers.Worker, line: bytes, timeout: tuple[float, float], until: float
) -> tuple[bytes, int | None]:
    """The reply of `worker`, started and answering a ping, to `line`, given `timeout`
    (its time, and the least of it that is its own) from when it is sent, cut at
    `until`: TimeoutError when it had run its own time, else NotRun; an unended reply
    when the worker died meanwhile, with its exit status."""
    for _ in range(2):  # a worker that does not answer a ping is replaced, once
        process = worker.ready(until)
        if time.monotonic() >= until:
            raise gitstatus_workers.NotRun
        if worker.ping():
            break
    else:
        raise gitstatus_workers.NotRun
    assert process.stdin is not None
    assert process.stdout is not None
    sent = worker.sent = time.monotonic()
    try:
        process.stdin.write(line)
        process.stdin.flush()
        reply = read_line(process.stdout.fileno(), min(sent + timeout[0], until))
    except BrokenPipeError:
        reply = b""
    except TimeoutError:
        # Stopped from outside (SIGSTOP) as it ran: the worker's time, not the
        # repository's (round 32: a healthy root was remembered as stalled).
        stopped = gitstatus_workers.stopped(process.pid)
        worker.stop()
        if not worker.spare:  # the next root's worker starts now, not when it is needed
            worker.spawn()
        if stopped or time.monotonic() - sent < timeout[1]:  # not its own time that ran out
            raise gitstatus_workers.NotRun(started=True, stopped=stopped) from None
        raise
    if not reply.endswith(b"\n"):
        code = process.poll()
        worker.stop()
        return reply, code
    worker.used = time.monotonic()
    return reply, None


def _still_at(fd: int, path: str) -> bool:
    """Whether the folder open as `fd` is still the one at `path`, with no symlink on
    the way."""
    try:
        here, held = os.stat(path), os.fstat(fd)
        return (
            _real_path(fd) == path
            and os.path.realpath(path) == path
            and ((here.st_dev, here.st_ino) == (held.st_dev, held.st_ino))
        )
    except OSError:
        return False


def _real_path(fd: int) -> str:
    """Where the folder open as `fd` is now (Linux: its /proc link; macOS: F_GETPATH)."""
    if os.path.isdir("/proc/self/fd"):
        return os.readlink(f"/proc/self/fd/{fd}")
    get_path = getattr(fcntl, "F_GETPATH", None)
    if get_path is None:
        raise Unsafe("readkeeper cannot tell where its git folder is on this system")
    path: bytes = fcntl.fcntl(fd, get_path, bytes(os.pathconf("/", "PC_PATH_MAX")))
    return os.fsdecode(path.rstrip(b"\0"))
