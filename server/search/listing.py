"""`readkeeper/glob` (files by pattern, newest first) and `readkeeper/list` (a folder's
entries with kinds and sizes, to a depth).

Both keep to the ignore rules of search. `glob` asks ripgrep for the files (`--files`,
the same rules and walk as `grep`) and orders them by the times mtimes.py looks up (or
kept while the watcher hears the folders); `list` reads the folder itself, beneath its
root's open descriptor with no symlink followed (a symlink is listed as one, never
entered), and skips what `.rgignore`, `.ignore`, `.gitignore` and `.git/info/exclude`
ignore, with ripgrep's precedence (files/rgignore.py; pathspec's GitIgnoreSpec matches,
as for the watcher). Each is capped, with a note naming the
call that shows the rest.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Callable
from typing import Any

from .. import quoting
from ..errors import ReadkeeperError, shown_name
from ..files.beneath import Anchor
from ..files.fileio import moved, opening_error
from ..files.ignore import IgnoreRules
from ..files.rgignore import RipgrepRules
from ..hints import again
from ..progress import step
from ..protocol.search import GlobParams, ListParams
from ..read.services import ReadServices
from ..words import count
from . import kept, rg, stalls
from .above import Above
from .deferred import Build
from .exclude import Exclude
from .globs import Glob
from .kept import Match, Token
from .lookup import Opener
from .mtimes import FileTimes
from .newest import FILE_LINES, TIMES_LATE, inside, newest_sorted_by_rg, why_stopped
from .paging import refuse_past_end
from .priced import (
    NAME_TOKENS,
    TOKEN_CAP,
    fitting,
    refuse_long_params,
    repeated_tokens,
    reserve,
    size_cap,
)
from .where import searched

MAX_PATHS = 1000
MAX_ENTRIES = 1000
MAX_DEPTH = 10


def glob(services: ReadServices, params: GlobParams, times: FileTimes) -> dict[str, Any]:
    """Serve `readkeeper/glob`: files matching `pattern` under `path`, newest first."""
    matcher = Glob(params.pattern, exclude=Exclude(params.exclude))
    if params.offset < 0:
        raise ReadkeeperError("bad_params", "offset must be 0 or more.", field="offset")
    # As grep's (priced.py): the pattern and path each page repeats.
    refuse_long_params(
        services,
        "glob",
        params.session,
        pattern=params.pattern,
        path=params.path,
        exclude=params.exclude,
    )
    root, cwd, _ = searched(services, params.path, params.session, folder_only=True)
    wanted = params.offset + MAX_PATHS + 1  # one more says there are more
    folder = shown_name(params.path) if params.path else "the workspace"
    step(f"finding {shown_name(params.pattern)} in {folder}")
    avoided = stalls.avoid(root, cwd, times.suspects(cwd))
    watched = times.kept(cwd)
    if watched:
        for key in {os.fsencode(root), os.fsencode(cwd)}:
            times.builds.join(key)  # mid-build: its listing answers once it ends
    # ripgrep sorts on its one-thread walk, which opens a left-out folder's ignore
    # files all the same (stalls.py): with a folder left out, the times are stat-ed here.
    if avoided.folders or (watched and not times.cold(cwd, root)):
        where = (root, cwd)
        found, stopped = _newest_listed(services, params, matcher, where, wanted, times, avoided)
    else:
        opener = _opener(services, cwd, params.session)
        found, stopped = newest_sorted_by_rg(matcher, (root, cwd), wanted, avoided, times, opener)
        if watched:  # nothing kept yet: the listing is built after the answer
            build = _build(opener, root, cwd, times)
            times.builds.start(os.fsencode(cwd), build)
    refuse_past_end(params.offset, len(found), "file", so_far=bool(stopped))
    names = found[params.offset : params.offset + MAX_PATHS]
    room = reserve(
        services, params.pattern, params.path, *(params.exclude or []), session=params.session
    )
    page = names[: fitting(names, services, NAME_TOKENS, room)]
    more = len(found) > params.offset + len(page)
    result: dict[str, Any] = {"paths": page, "partial": more or bool(stopped)}
    notes = []
    if more:
        after = params.offset + len(page)
        result["next"] = {"pattern": params.pattern, "path": params.path, "offset": after}
        if params.exclude:
            result["next"]["exclude"] = params.exclude
        if params.session:  # the next page's call is this one's, in the same session
            result["next"]["session"] = params.session
        notes.append(
            cut_note(
                params.offset, len(page), MAX_PATHS, "file", size_cap(names, len(page), NAME_TOKENS)
            )
            + f"; the rest: {again(offset=after)}, or a narrower pattern."
        )
    if stopped:
        notes.append(stopped)
    if not page and not more and not stopped:
        notes.append("No files match.")
    if notes:
        result["note"] = " ".join(notes)
    return stalls.with_note(result, avoided)


def _newest_listed(
    services: ReadServices,
    params: GlobParams,
    matcher: Glob,
    where: tuple[str, str],
    wanted: int,
    times: FileTimes,
    avoided: stalls.Avoided,
) -> tuple[list[str], str]:
    """The `wanted` newest matches, and why the walk stopped early ("" when it did not,
    `why_stopped`): ripgrep lists
    in parallel, in no order, and the times come from mtimes.py (kept across calls). A
    subfolder with no listing of its own is answered from its root's, when that is
    kept and valid and the ignore patterns above the folder are plain (then what
    ripgrep lists beneath the folder from the root is what it lists run in it,
    `kept.plain_above`): no ripgrep run. A folder with nothing kept is not answered
    here (`glob`: ripgrep sorts, the listing is built after, deferred.py). A listing
    not yet in order (ripgrep's just now, or a build stopped by a call) answers by the
    times of its matches only; the order of all is made after the answer (deferred.py)."""
    root, cwd = where
    deadline = time.monotonic() + rg.DEADLINE_S
    match = matcher.match_bytes()
    names, token = times.listing(cwd)
    listed = cwd
    stopped = ""
    if names is None and cwd != root and kept.plain_above(*map(os.fsencode, (root, cwd))):
        names = times.listing_under(root, cwd)
        if names is not None:
            listed, match = root, _beneath(os.fsencode(os.path.relpath(cwd, root)), match)
    if names is None:
        names, stopped = list_files(root, cwd, times, token, avoided=avoided)
    opener = _opener(services, listed, params.session)
    unordered = not times.ordered(listed)
    matching: Match | None = match
    if unordered:  # not the listing itself: `newest` looks up these only, orders none
        names, matching = list(filter(match, names)), None
    newest, late = times.newest(listed, names, wanted, deadline, opener, matching)
    found = inside(newest, root, listed)
    if len(found) < len(newest) and len(newest) == wanted:  # a path led out: look further
        everything = times.newest(listed, names, len(names), deadline, opener, matching)[0]
        found = inside(everything, root, listed)[:wanted]
    if unordered and not stopped and times.kept(listed):
        times.builds.start(os.fsencode(listed), _build(opener, root, listed, times))
    return found, stopped or (TIMES_LATE if late else "")


def list_files(
    root: str,
    cwd: str,
    times: FileTimes,
    token: Token,
    stop: Callable[[], bool] | None = None,
    avoided: stalls.Avoided | None = None,
) -> tuple[list[bytes], str]:
    """Every file ripgrep lists under `cwd`, whatever the pattern, so that the listing
    can be kept (kept.py: `token` from `times.listing`, taken before); and why the run
    stopped early ("" when it did not; a deadline, the cap, a failure or `stop`: then
    nothing is kept, `why_stopped`). The
    folders ripgrep would wait in are left out (stalls.py; `avoided` when already
    known), and so kept: an event there drops the listing."""
    if avoided is None:
        avoided = stalls.avoid(root, cwd, times.suspects(cwd))
    # No path argument: ripgrep then prints paths without "./".
    above = Above.of(root, cwd, avoided.judged)
    flags = ["--files", "--null", *avoided.flags(), *(above.flags() if above else [])]
    token = times.before_listing(root, cwd, token)
    ran = rg.run(cwd, flags, max_lines=FILE_LINES, sep=b"\0", readable=root, stop=stop)
    names = list(filter(None, ran.lines))
    if above is not None:  # kept so: the ignore files above are among `unheard`
        names = above.keep(names)
    stopped = why_stopped(ran)
    if not stopped and ran.returncode == 0 and rg.landlock_abi() > 0:
        times.keep_listing(root, cwd, names, token)
    return names, stopped


def _build(opener: Opener, root: str, cwd: str, times: FileTimes) -> Build:
    """What a glob of `cwd` with nothing kept runs to keep its listing and every time
    (search/deferred.py): `list_files`, then the times of all and their order."""

    def build(stop: Callable[[], bool]) -> None:
        names, token = times.listing(cwd, used=False)
        if names is None:
            names, cut = list_files(root, cwd, times, token, stop)
            if cut:
                return
        deadline = time.monotonic() + rg.DEADLINE_S
        times.newest(cwd, names, 1, deadline, opener, None, stop)

    return build


def _beneath(prefix: bytes, match: Match) -> Match:
    """`match` of a path relative to the folder `prefix`, for paths relative to its
    root: those beneath the folder only."""
    cut = len(prefix) + 1
    prefix += b"/"

    def beneath(name: bytes) -> object:
        return name.startswith(prefix) and match(name[cut:])

    return beneath


def _opener(services: ReadServices, cwd: str, session: str) -> Opener:
    """Opens a folder given relative to `cwd` beneath the permitted folder's descriptor,
    with no symlink followed (files/beneath.py)."""
    where = services.workspace.locate(cwd, session)
    if where is None:  # checked by `searched`; the roots may have changed since
        raise services.workspace.not_found(cwd)
    return opener_at(where.anchor, cwd)


def opener_at(anchor: Anchor, cwd: str) -> Opener:
    """`_opener` beneath `anchor` (a permitted folder, files/beneath.py)."""
    offset = "" if cwd == anchor.path else os.path.relpath(cwd, anchor.path)

    def opener(folder: bytes) -> int:
        return anchor.open_folder(os.path.join(offset, os.fsdecode(folder)).rstrip("/"))

    return opener


# Entries listed between two progress steps.
_STEP_ENTRIES = 1000


def list_folder(services: ReadServices, params: ListParams) -> dict[str, Any]:
    """Serve `readkeeper/list`: the entries of a folder, to `depth` levels."""
    if params.depth < 1 or params.depth > MAX_DEPTH:
        raise ReadkeeperError("bad_params", f"depth must be 1 to {MAX_DEPTH}.", field="depth")
    if params.offset < 0:
        raise ReadkeeperError("bad_params", "offset must be 0 or more.", field="offset")
    root, folder, _ = searched(services, params.path, params.session, folder_only=True)
    # The header, the note's way on and `next` repeat them.
    refuse_long_params(services, "list", params.session, path=folder, exclude=params.exclude)
    where = services.workspace.locate(folder, params.session)
    if where is None:  # checked by `searched`; the roots may have changed since
        raise services.workspace.not_found(folder)
    rules = RipgrepRules(root)
    exclude = Exclude(params.exclude)
    entries: list[dict[str, Any]] = []
    limit = params.offset + MAX_ENTRIES + 1
    relative = "" if folder == where.anchor.path else os.path.relpath(folder, where.anchor.path)
    try:
        fd = where.anchor.open_folder(relative, write=True)
    except OSError as exc:  # changed since `searched` looked (a swap, a removal)
        raise opening_error(folder, exc) from None
    moved_out: list[str] = []  # folders beneath that left their place as they were listed
    denied: list[str] = []  # entries that could not be looked at (`_DENIED`)

    def placed(held: int, prefix: str) -> bool:
        """Whether the folder `held` (at `prefix` beneath the one listed) is still at its
        place beneath its root, its entries read: one moved out as it was listed (a
        racing process) is never shown, what it holds is not the workspace's (round 46:
        a folder swapped into one moved out was listed with its names and sizes)."""
        if where.anchor.in_place(os.path.join(relative, prefix).rstrip(os.sep), held):
            return True
        moved_out.append(prefix)
        return False

    try:
        _walk(fd, folder, "", params.depth, (rules, exclude, placed, denied), entries, limit)
    finally:
        os.close(fd)
    if moved_out[:1] == [""]:
        raise moved(folder)
    refuse_past_end(params.offset, len(entries), "entry")
    page = entries[params.offset : params.offset + MAX_ENTRIES]
    # The path in the header, then in the note's way on and the `next` call (COPIES).
    room = reserve(services, folder, *(params.exclude or []), session=params.session)
    room += repeated_tokens(services, folder)
    names = [entry["name"] for entry in page]
    page = page[: fitting(names, services, _ENTRY_TOKENS, room)]
    more = len(entries) > params.offset + len(page)
    partial = more or bool(moved_out) or bool(denied)
    result: dict[str, Any] = {"path": folder, "entries": page, "partial": partial}
    if more:
        after = params.offset + len(page)
        result["next"] = {"path": folder, "depth": params.depth, "offset": after}
        if params.exclude:
            result["next"]["exclude"] = params.exclude
        if params.session:  # the next page's call is this one's, in the same session
            result["next"]["session"] = params.session
        result["note"] = (
            cut_note(
                params.offset,
                len(page),
                MAX_ENTRIES,
                "entry",
                size_cap(names, len(page), _ENTRY_TOKENS),
            )
            + f"; the rest: {again(offset=after)}, or list a subfolder."
        )
    said = []
    if denied:
        said.append(
            f"Not listed: {count(len(denied), 'entry')} readkeeper may not look at "
            f"(permission denied): {_first(denied)}."
        )
    if rules.passed:
        said.append(
            "Some folders' ignore files were not applied: those on the way hold more "
            "patterns, or lie in more folders, than one call looks at, so entries they "
            "hide from grep and glob may be listed."
        )
    if moved_out:
        gone = _first([prefix.rstrip(os.sep) for prefix in moved_out])
        said.append(
            f"Not listed: what {gone} held (moved out of its place as it was listed); "
            "list it again."
        )
    if said:
        result["note"] = " ".join([*([result["note"]] if "note" in result else []), *said])
    return result


def _first(names: list[str]) -> str:
    """The first five of `names`, quoted, and whether there are others."""
    shown = ", ".join(quoting.name(name) for name in names[:5])
    return shown + (" and others" if names[5:] else "")


def cut_note(offset: int, shown: int, cap: int, noun: str, size: str = TOKEN_CAP) -> str:
    """The one way a cut page says what it shows: how many (from which), and which cap
    cut it, the count's (`cap`) or its size (a page of long names stops short: `size`,
    priced.size_cap)."""
    which = f"the cap of {count(cap, noun)}" if shown >= cap else size
    return f"Showing {count(shown, noun)} ({offset + 1}-{offset + shown}), cut by {which}"


# What an entry costs besides its shown name, in the framing of every front end: its
# kind, size and keys (the LSP's JSON, the drop-in's `[FILE]` and size, its tree's node).
# (A path on glob's page: priced.NAME_TOKENS.)
_ENTRY_TOKENS = 16


def _walk(
    fd: int,
    folder: str,
    prefix: str,
    depth: int,
    kept: tuple[IgnoreRules, Exclude, Callable[[int, str], bool], list[str]],
    into: list[dict[str, Any]],
    limit: int,
) -> None:
    """Append the entries of the open folder `fd` (at `folder`), breadth within a
    folder by name, each subfolder's entries after it; what `kept` (the ignore rules,
    the caller's exclude) leaves out is neither counted nor entered, nor a folder no
    more in its place once read (its third judge); an entry it may not look at is
    added to its fourth."""
    rules, exclude, placed, denied = kept
    with os.scandir(fd) as scan:
        items = [(item, _status(item)) for item in sorted(scan, key=lambda entry: entry.name)]
    if not placed(fd, prefix):  # its names and sizes read: from where they are shown
        return
    above = folder if folder.endswith(os.sep) else folder + os.sep
    for item, st in items:
        if len(into) >= limit:
            return
        if isinstance(st, int):  # gone since it was listed, or not to be looked at
            if st in _DENIED:
                denied.append(prefix + item.name)
            continue
        mode = st.st_mode
        path = above + item.name
        is_dir = stat.S_ISDIR(mode)
        if rules.ignored(path, is_dir) or exclude.excludes(prefix + item.name, is_dir):
            continue
        kind = _KINDS.get(stat.S_IFMT(mode), "other")  # other: a FIFO, socket or device
        entry: dict[str, Any] = {"name": prefix + item.name, "kind": kind}
        if kind == "file":
            entry["size"] = st.st_size
        into.append(entry)
        if len(into) % _STEP_ENTRIES == 0:
            step(f"{len(into):,} entries listed")
        if is_dir and depth > 1:
            try:
                child = os.open(
                    item.name,
                    os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                    dir_fd=fd,
                )
            except OSError as exc:  # replaced by a symlink, or unreadable: not entered
                if exc.errno in _DENIED:
                    denied.append(prefix + item.name + "/")
                continue
            try:
                _walk(child, path, prefix + item.name + "/", depth - 1, kept, into, limit)
            finally:
                os.close(child)


def _status(entry: os.DirEntry[str]) -> os.stat_result | int:
    """The entry's status, or the error that kept it from being looked at."""
    try:
        return entry.stat(follow_symlinks=False)
    except OSError as exc:
        return exc.errno or 0


# Why an entry could not be looked at that a list says (round 48: a folder one may read
# but not search listed as empty, without a word).
_DENIED = (errno.EACCES, errno.EPERM)
# Listed, never opened, unless a folder (entered beneath its parent's descriptor).
_KINDS = {stat.S_IFDIR: "dir", stat.S_IFREG: "file", stat.S_IFLNK: "symlink"}
