"""git status computed by libgit2 (pygit2) in a process of its own: the child side.

Run as a script (`python -P gitstatus_worker.py`, no readkeeper import) by gitstatus.py
and kept warm (importing pygit2 takes longer than most statuses). The server sends the
real paths of a git folder and a work tree it has already confined (the commondir, the
alternates and the config files too) and kills this process at the deadline: libgit2
cannot be interrupted, and a stalled filesystem can hold a read forever.

libgit2 is chosen over git because it has no way to run a program during a status:
no hooks, no fsmonitor, no filter drivers or textconv (none is registered here), no
pager, no credential helpers or askpass, and no transport at all, so a partial clone's
missing objects are an error rather than a fetch. What it still takes from the
repository is confined here: `core.worktree` is ignored (the repository is opened as
bare and handed the workspace root as its work tree), configs other than the
repository's own are not read, and a config that names an ignore or attributes file is
refused (that file could be anywhere), and so is a work tree whose tracked or top-level
`.gitignore` or `.gitattributes` is a symlink out of it or not a regular file (git never
follows those; libgit2 would).

libgit2 opens the repository by path (it resolves even a /proc/self/fd/N path to the
folder's current name first), so a folder swapped for a symlink out while it reads would
lead it out. Where the kernel has Landlock, each status therefore runs in a child forked
from this warm process that first confines itself to reading beneath the folders the
server checked (each opened here and matched to the server's device and inode): what a
swapped name leads to outside them cannot be opened. Without Landlock that race is open.

Each answer is one JSON line: {"branch", "lines", "total"}, or {"refused": reason}, or
{"failed": libgit2's message}.
"""

from __future__ import annotations

import importlib.util
import json
import os
import select
import stat
import sys
from types import ModuleType
from typing import Any

# A worker with nothing to do this long exits (the server starts another when needed);
# the server retires one idle half as long, so it never writes to one about to leave.
IDLE_SECONDS = 120.0
# Lines sent back at most; the attachment's token cap is far below this anyway.
MAX_LINES = 5000
# Config keys naming a file libgit2 reads during a status, which could lie anywhere.
_PATH_KEYS = ("core.excludesfile", "core.attributesfile")
# The work tree's rule files, and how far beyond the index they are looked for.
_RULE_NAMES = (b".gitignore", b".gitattributes")
_RULE_LEVELS = 1
_RULE_FOLDERS = 2000
_ESCAPES = {7: "a", 8: "b", 9: "t", 10: "n", 11: "v", 12: "f", 13: "r", 34: '"', 92: "\\"}


def quoted(raw: bytes) -> str:
    """A path as `git status --porcelain` prints it (core.quotePath): in double quotes,
    with C escapes and octal bytes, when it holds a space, a quote, a backslash, a
    control character or a byte outside ASCII."""
    if not any(b <= 32 or b >= 127 or b in (34, 92) for b in raw):
        return raw.decode("ascii")
    out = []
    for b in raw:
        if b in _ESCAPES:
            out.append("\\" + _ESCAPES[b])
        elif b < 32 or b >= 127:
            out.append(f"\\{b:03o}")
        else:
            out.append(chr(b))
    return '"' + "".join(out) + '"'


def _raw(entry: Any) -> bytes:
    raw = getattr(entry, "raw_path", None)
    return raw if isinstance(raw, bytes) else os.fsencode(entry.path)


def _configure() -> None:
    """libgit2's process-wide settings, once per worker."""
    import pygit2
    from pygit2.enums import ConfigLevel

    # Only the repository's own config: no system, global or XDG file (as git, run
    # without HOME, read none of the user's), so a result depends on the repository.
    for level in (ConfigLevel.SYSTEM, ConfigLevel.GLOBAL, ConfigLevel.XDG):
        pygit2.settings.search_path[level] = os.devnull
    # Ownership checks guard git against running an owner's configured programs;
    # libgit2 runs none, and refusing a folder owned by another user would hide its
    # status for nothing.
    pygit2.settings.owner_validation = False
    # A partial clone opens; its missing objects then fail (never fetched).
    pygit2.settings.set_extensions(["partialclone"])


def _open(gitdir: str, workdir: str) -> Any:
    import pygit2
    from pygit2.enums import RepositoryOpenFlag

    repo = pygit2.Repository(gitdir, RepositoryOpenFlag.NO_SEARCH | RepositoryOpenFlag.BARE)
    repo.workdir = workdir
    return repo


def _rule_files(repo: Any, workdir: str) -> list[bytes]:
    """The work tree's ignore and attributes files libgit2 may read: every tracked one
    (what a repository brings), and any in the root or the folders up to
    `_RULE_LEVELS` below it, at most `_RULE_FOLDERS` of them (what a build left,
    bounded: libgit2 reads deeper untracked ones too)."""
    found = {r for r in map(_raw, repo.index) if os.path.basename(r) in _RULE_NAMES}
    folders: list[tuple[bytes, int]] = [(b"", 0)]
    seen = 0
    while folders and seen < _RULE_FOLDERS:
        rel, depth = folders.pop()
        seen += 1
        try:
            entries = list(os.scandir(os.path.join(os.fsencode(workdir), rel)))
        except OSError:
            continue
        for entry in entries:
            if entry.name in _RULE_NAMES:
                found.add(os.path.join(rel, entry.name))
            elif (
                depth < _RULE_LEVELS
                and entry.name != b".git"
                and entry.is_dir(follow_symlinks=False)
            ):
                folders.append((os.path.join(rel, entry.name), depth + 1))
    return sorted(found)


def _rule_file_refusal(repo: Any, workdir: str) -> str | None:
    """Why libgit2 may not read the work tree's rules: git never follows a symlinked
    .gitignore or .gitattributes there, and libgit2 would, to a file anywhere (a FIFO
    outside stalls it, outside patterns hide changes). A link within the work tree to
    a regular file gives what the tree holds, and is read."""
    top = os.path.realpath(workdir)
    for rel in _rule_files(repo, workdir):
        path = os.path.join(os.fsencode(top), rel)
        try:
            entry = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISREG(entry.st_mode):
            continue
        shown = quoted(rel)
        if not stat.S_ISLNK(entry.st_mode):
            return f"{shown} in its work tree is not a regular file"
        real = os.path.realpath(path)
        inside = real.startswith(os.fsencode(top.rstrip(os.sep) + os.sep))
        try:
            regular = stat.S_ISREG(os.stat(real).st_mode)
        except OSError:
            regular = False
        if not (inside and regular):
            target = json.dumps(os.fsdecode(os.readlink(path)))  # the repository's words
            return (
                f"{shown} in its work tree is a symbolic link to {target}, which git never follows"
            )
    return None


def _branch(repo: Any) -> str:
    """The `## ` line of `git status --branch`, without its `## `."""
    if repo.head_is_unborn:
        target = repo.references["HEAD"].target
        return f"No commits yet on {target.removeprefix('refs/heads/')}"
    if repo.head_is_detached:
        return "HEAD (no branch)"
    name = repo.head.shorthand
    try:
        upstream = repo.branches.local[name].upstream
    except Exception:  # no upstream configured, or a config libgit2 cannot follow
        upstream = None
    if upstream is None:
        return str(name)
    line = f"{name}...{upstream.shorthand}"
    try:
        ahead, behind = repo.ahead_behind(repo.head.target, upstream.target)
    except Exception:  # commits missing (a partial or shallow clone): no counts
        return line
    counts = [f"ahead {ahead}"] * bool(ahead) + [f"behind {behind}"] * bool(behind)
    return f"{line} [{', '.join(counts)}]" if counts else line


_CONFLICT_CODES = {
    (True, False, False): "DD",
    (False, True, False): "AU",
    (True, True, False): "UD",
    (False, False, True): "UA",
    (True, False, True): "DU",
    (False, True, True): "AA",
    (True, True, True): "UU",
}


def _changes(repo: Any) -> list[str]:
    """Porcelain v1 lines: tracked changes by path (XY: index, work tree), then the
    untracked files and folders."""
    import pygit2
    from pygit2.enums import DeltaStatus, DiffOption

    codes = {
        DeltaStatus.ADDED: "A",
        DeltaStatus.DELETED: "D",
        DeltaStatus.MODIFIED: "M",
        DeltaStatus.TYPECHANGE: "T",
        DeltaStatus.RENAMED: "R",
    }
    index = repo.index
    tracked: dict[bytes, list[str]] = {}
    conflicts = index.conflicts
    if conflicts is not None:
        for ancestor, ours, theirs in conflicts:
            entry = ancestor or ours or theirs
            stages = (ancestor is not None, ours is not None, theirs is not None)
            tracked[_raw(entry)] = [_CONFLICT_CODES[stages], ""]
    if repo.head_is_unborn:
        for entry in index:
            tracked.setdefault(_raw(entry), ["A", " "])
    else:
        staged = index.diff_to_tree(
            repo.head.peel(pygit2.Tree), flags=DiffOption.INCLUDE_TYPECHANGE
        )
        staged.find_similar()
        for delta in staged.deltas:
            new, old = _raw(delta.new_file), _raw(delta.old_file)
            if delta.status == DeltaStatus.RENAMED:
                tracked[new] = ["R", " ", quoted(old) + " -> "]
            elif delta.status in codes:
                tracked.setdefault(new, [codes[delta.status], " "])
    untracked: list[bytes] = []
    flags = DiffOption.INCLUDE_UNTRACKED | DiffOption.IGNORE_SUBMODULES
    for delta in index.diff_to_workdir(flags=flags | DiffOption.INCLUDE_TYPECHANGE).deltas:
        path = _raw(delta.new_file)
        if delta.status == DeltaStatus.UNTRACKED:
            untracked.append(path)
        elif delta.status in codes and tracked.get(path, [" ", " "])[1] != "":
            tracked.setdefault(path, [" ", " "])[1] = codes[delta.status]
    lines = []
    for path in sorted(tracked):
        x, y, *renamed = tracked[path]
        lines.append(f"{x}{y} {''.join(renamed)}{quoted(path)}")
    return lines + [f"?? {quoted(path)}" for path in sorted(untracked)]


def status(gitdir: str, workdir: str) -> dict[str, Any]:
    import pygit2

    try:
        repo = _open(gitdir, workdir)
        for key in _PATH_KEYS:
            if key in repo.config:
                return {
                    # The repository's words: one JSON string, never bare.
                    "refused": f"its config names a file for git to read ({key} = "
                    f"{json.dumps(str(repo.config[key]))})"
                }
        refused = _rule_file_refusal(repo, workdir)
        if refused is not None:
            return {"refused": refused}
        lines = _changes(repo)
        branch = _branch(repo)
    except (pygit2.GitError, KeyError, ValueError, OSError) as exc:  # OSError: libgit2's too
        if "repo" in locals() and "extensions.partialclone" in repo.config:
            return {
                "refused": "it is a partial clone and objects that git status needs are "
                "missing here (git would fetch them, running programs its config names)"
            }
        # A KeyError's str is its repr, quoted: its words are its argument.
        said = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        return {"failed": str(said).strip() or type(exc).__name__}
    return {"branch": branch, "lines": lines[:MAX_LINES], "total": len(lines)}


def _by_path(name: str, path: str) -> ModuleType | None:
    """A module of readkeeper's (server/files/), loaded by its path: this script imports
    nothing of readkeeper's package."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _landlock(path: str) -> ModuleType | None:
    """readkeeper's Landlock binding (server/files/landlock.py), when the kernel has it."""
    module = _by_path("_readkeeper_landlock", path)
    return module if module is not None and module.abi() > 0 else None


# server/files/lifeline.py, loaded first thing (`main`): its `hold` ties this process,
# and the child it forks for each status, to its parent's life.
_lifeline: ModuleType | None = None


def _confined(landlock: ModuleType, request: dict[str, Any]) -> dict[str, Any]:
    """The status, computed by a child that can read nothing but the folders the server
    checked (as [path, device, inode] in request["allow"])."""
    reader, writer = os.pipe()
    worker = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: confine, answer, leave without running any cleanup
        answer: dict[str, Any]
        try:
            if _lifeline is not None:  # killed with this worker, itself killed with the server
                _lifeline.hold(worker)
            os.close(reader)
            held = []
            for path, device, inode in request["allow"]:
                fd = os.open(path, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW)
                seen = os.fstat(fd)
                if (seen.st_dev, seen.st_ino) != (device, inode):
                    raise OSError(f"{path} was replaced")
                held.append(fd)
            if not landlock.restrict([*held, os.devnull]):
                raise OSError("Landlock could not be applied")
            for fd in held:
                os.close(fd)
            answer = status(request["git_dir"], request["work_tree"])
        except OSError as exc:
            answer = {"failed": f"the repository was moved or replaced while read ({exc})"}
        except BaseException as exc:  # the child must answer whatever went wrong
            answer = {"failed": f"{type(exc).__name__}: {exc}"}
        data = json.dumps(answer).encode()
        with os.fdopen(writer, "wb") as out:
            out.write(data)
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as got:
        data = got.read()
    os.waitpid(pid, 0)
    if not data:
        return {"failed": "its confined reader stopped without an answer"}
    answer = json.loads(data)
    return answer


def serve(landlock_path: str | None = None) -> None:
    """Answer requests, one JSON line each ({"git_dir", "work_tree", "allow"}, or
    {"ping": true}, answered "pong"), until stdin closes or nothing comes for
    IDLE_SECONDS. The first line says whether each
    status will be confined by Landlock."""
    _configure()
    landlock = _landlock(landlock_path) if landlock_path else None
    sys.stdout.write("ready confined\n" if landlock else "ready\n")
    sys.stdout.flush()
    while select.select([sys.stdin], [], [], IDLE_SECONDS)[0]:
        line = sys.stdin.readline()
        if not line:
            return
        request = json.loads(line)
        if request.get("ping"):  # the server's check that this worker answers
            sys.stdout.write("pong\n")
            sys.stdout.flush()
            continue
        if landlock is not None and request.get("allow"):
            answer = _confined(landlock, request)
        else:
            answer = status(request["git_dir"], request["work_tree"])
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


def main(argv: list[str]) -> None:
    """`gitstatus_worker.py LANDLOCK_PATH LIFELINE_PATH PARENT_PID`: tied to the parent's
    life before anything else runs, then serving."""
    global _lifeline
    if len(argv) > 2:
        _lifeline = _by_path("_readkeeper_lifeline", argv[1])
        if _lifeline is not None:
            _lifeline.hold(int(argv[2]))
    serve(argv[0] if argv else None)


if __name__ == "__main__":
    main(sys.argv[1:])
