"""The modification times `glob` orders its files by (newest first), and the listing
of kept.py, kept across calls while the watcher hears the folders.

Newest first needs a time per file. ripgrep's own `--sortr=modified` walks on one
thread and stats as it sorts, several times slower than its parallel `--files`
(bench/bench_search.py); stat-ing every file here costs about as much. So where times
can be kept, ripgrep lists in parallel and the times are read here once, one stat a
file by its name in its folder opened beneath the root (never an open of the file: a
FIFO or device is only stat-ed; never a symlink followed), and kept; where they cannot
(no watcher hears the folder: the CLI) listing.py lets ripgrep sort.

A folder's files' times are kept only while the watcher hears every change to that
folder (watch/hears.py: readkeeper's inotify reader holds a watch on it and the watcher
is `watching`). An event forgets the path it names (a folder's: everything beneath).
Before anything kept is used, the watcher must have told every change made so far
(`quiet`: nothing unread in inotify's queue, no rename half-paired; waited for up to
SETTLE_S, else nothing kept is used): a file added, written or removed just before the
call is then already forgotten. A time read before an event is not kept after it. A new
watcher (restarted, or another) or an overflow of its queue (the era) starts afresh.
"""

from __future__ import annotations

import operator
import os
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from itertools import compress, repeat
from typing import cast

from ..watch.hears import Heard
from . import kept
from .deferred import Builds
from .kept import Listing, Match, Token
from .lookup import Folders, Opener, look_up, newest_of

# What is held at most, over every folder globbed from, of times and of listings each,
# counted in bytes (a name's own, plus what holding it costs: about 150 bytes a time,
# 100 a listed name): past it that store starts again. In bytes, not files: a deep
# tree's names are kilobytes each, and every folder globbed from keeps its own.
MAX_BYTES = 64 << 20
_TIME_COST, _NAME_COST = 150, 100
SETTLE_S = 0.1  # the longest wait for the watcher to tell what happened before a call


class _Tree:
    """What is kept of the files under one folder globbed from (paths relative to it, as
    ripgrep prints them)."""

    def __init__(self) -> None:
        self.times: dict[bytes, int] = {}
        self.folders: dict[bytes, list[bytes]] = {}  # a folder -> its files with a time
        self.cost = 0  # bytes held, as MAX_BYTES counts them (what is dropped is not taken off)

    def drop_folder(self, folder: bytes) -> None:
        for name in self.folders.pop(folder, []):
            self.times.pop(name, None)


class FileTimes:
    """Modification times of files, and listings, kept while the watcher hears their
    changes. Thread-safe: the watcher's thread forgets, requests look up."""

    def __init__(self, watcher: Callable[[], Heard | None]) -> None:
        self._watcher = watcher
        self._heard_by: Heard | None = None
        self._era: object | None = None
        self._trees: dict[bytes, _Tree] = {}
        self._cleared = 0  # times started again so often
        self._listings: dict[bytes, Listing] = {}
        self._lock = threading.Lock()
        self._events = 0  # events heard so far: a time read before one is not kept after it
        self.hits = 0  # files whose time came from the cache (tests, the bench)
        self.listings_used = 0  # globs answered with no ripgrep run (tests, the bench)
        self.builds = Builds()  # listings built after a first answer (search/deferred.py)

    def kept(self, cwd: str) -> bool:
        """Whether times under `cwd` can be kept: the watcher hears that folder."""
        watcher = self._watcher()
        return watcher is not None and watcher.hears(os.fsencode(cwd))

    def suspects(self, cwd: str) -> list[bytes] | None:
        """The watcher's suspects beneath `cwd` (search/stalls.py), once it has told
        every change made before this call; None when it cannot know them all."""
        watcher, era = self._settled()
        if watcher is None or era is None:
            return None
        return watcher.suspects(os.fsencode(cwd))

    def listing(self, cwd: str, used: bool = True) -> tuple[list[bytes] | None, Token]:
        """The kept listing of `cwd` when still valid (else None), and a token for
        `keep_listing` taken before ripgrep runs. `used`: counted as a glob answered."""
        era = self._settled()[1]
        base = os.fsencode(cwd)
        with self._lock:
            token = Token(era, self._events)
            listing = self._listings.get(base) if era is not None else None
        if listing is not None and listing.era == era and listing.still():
            self.listings_used += used
            return listing.names, token
        return None, token

    def cold(self, cwd: str, root: str) -> bool:
        """Whether nothing is kept for a glob of `cwd`: no listing of it or of its root,
        no time of a file beneath it."""
        base, top = os.fsencode(cwd), os.fsencode(root)
        with self._lock:
            listed = base in self._listings or top in self._listings
            return not listed and not self._trees.get(base)

    def ready(self, cwd: str, checked: bool = True) -> bool:
        """Whether `cwd`'s listing is kept, valid and ordered (nothing left to build
        ahead; not counted as used). Not `checked`: what no watch hears is not looked
        at (an lstat each, 1,000s in a large tree)."""
        era = self._settled()[1]
        with self._lock:
            listing = self._listings.get(os.fsencode(cwd)) if era is not None else None
        return (
            listing is not None
            and listing.era == era
            and listing.order is not None
            and not listing.changed
            and (not checked or listing.still())
        )

    def ordered(self, cwd: str) -> bool:
        """Whether `cwd`'s kept listing has its order (written files are moved to their
        places in it as a glob takes it)."""
        with self._lock:
            listing = self._listings.get(os.fsencode(cwd))
            return listing is not None and listing.order is not None

    def listing_under(self, root: str, cwd: str) -> list[bytes] | None:
        """The kept listing of `root` when still valid and it lists a file beneath its
        folder `cwd` (so ripgrep walked into `cwd` from the root: it is neither hidden
        nor ignored there, and ripgrep run in `cwd` lists what it listed beneath it;
        tests/search/test_glob_ahead.py compares the two); else None."""
        base = os.fsencode(root)
        prefix = os.fsencode(os.path.relpath(cwd, root)) + b"/"
        era = self._settled()[1]
        with self._lock:
            listing = self._listings.get(base) if era is not None else None
        if listing is None or listing.era != era or not listing.still():
            return None
        if not any(map(bytes.startswith, listing.names, repeat(prefix))):
            return None
        self.listings_used += 1
        return listing.names

    def before_listing(self, root: str, cwd: str, token: Token) -> Token:
        """`token` with what no watch hears stamped: called just before ripgrep lists."""
        watcher = self._watcher()
        if token.era is None or watcher is None:
            return token
        base = os.fsencode(cwd)
        cut = len(base) + 1  # each is beneath `base`: its name relative to it
        watched = {folder[cut:] for folder in watcher.watched_under(base)}
        return replace(token, unheard=kept.stamped(os.fsencode(root), base, watched))

    def keep_listing(self, root: str, cwd: str, names: list[bytes], token: Token) -> None:
        """Keep what ripgrep listed under `cwd` (see kept.py for when it may be)."""
        watcher, before = self._watcher(), token.unheard
        cost = _listing_cost(names)
        if token.era is None or watcher is None or before is None or cost > MAX_BYTES:
            return
        base = os.fsencode(cwd)
        folders = kept.folders_of(names)
        if not folders <= before.folders:
            return  # a folder with no watch when the stamps were taken
        if not all(watcher.hears(os.path.join(base, f) if f else base) for f in folders):
            return
        if not kept.heard_ignore_files(watcher.suspects(base)):
            return
        skipped = watcher.skipped(base)
        if skipped is None or kept.skipped_walked(root, base, skipped, before.in_repo):
            return
        cost += _listing_cost(before.paths)  # the files above, each with its stamp
        listing = Listing(token.era, names, before.paths, before.stamps, cost=cost)
        if self._settled()[1] != token.era:
            return
        with self._lock:
            if self._events != token.events or token.era != self._era:
                return  # something changed while ripgrep walked
            self._listings.pop(base, None)
            if self._listing_bytes() + cost > MAX_BYTES:
                self._listings.clear()
            self._listings[base] = listing

    def newest(
        self,
        cwd: str,
        names: list[bytes],
        count: int,
        deadline: float,
        opener: Opener,
        match: Match | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> tuple[list[tuple[int, bytes]], bool]:
        """The `count` newest of `names` (paths relative to `cwd`, as ripgrep printed
        them) that `match` (None: all), as (modification time, name), newest first; and
        whether the deadline (a `time.monotonic()` value) stopped the look-ups early
        (then only the files looked up are ordered). `opener` opens a folder (relative
        to `cwd`) beneath the root with no symlink followed: each file is stat-ed by
        name in it, so a folder swapped for a symlink out is never stat-ed through (its
        files are left out). For a kept listing, every file's time is looked up and the
        order kept: later calls take the first `count` matches of it. `stop` (asked
        with the clock; a build's) ends the look-ups as the deadline does, and then
        nothing is ordered (no file answered): the times read so far are kept either
        way, and the next look reads only the rest."""
        watcher, era = self._settled()
        base = os.fsencode(cwd)
        with self._lock:
            heard, cleared = self._events, self._cleared
            tree = self._tree(base) if era is not None else None
            listing = self._listings.get(base)
            if listing is None or listing.names is not names or listing.era != era:
                listing = None
            order, changed = None, set[bytes]()
            if listing is not None and listing.order is not None and tree is not None:
                order, changed, listing.changed = listing.order, listing.changed, set()
                known = tree.times
                if not changed:
                    self.hits += len(order)
                    return kept.first(order, known.__getitem__, count, match), False
        if order is not None and listing is not None and tree is not None:
            # Files written since the order was made: their times only, and each moved
            # to its place.
            fresh, folders, late = look_up(watcher, base, changed, deadline, opener, stop)
            with self._lock:
                if late or len(fresh) < len(changed) or self._events != heard:
                    listing.order = None  # the full way below; `changed` was taken
                else:
                    self._keep(tree, fresh, folders)
                    order = kept.reorder(order, changed, tree.times)
                    if self._cleared == cleared:  # else those times are no longer held
                        listing.order = order
                    self.hits += len(order) - len(changed)
                    return kept.first(order, tree.times.__getitem__, count, match), False
        if listing is None and match is not None:
            names = list(filter(match, names))
        known = tree.times if tree is not None else {}
        got = list(map(known.get, names))  # in C: 100,000s of names, most of them known
        missing: list[bytes] = []
        if None in got:  # identity first: a quick scan when every name is known
            # In the listing's order: ripgrep printed a folder's files together.
            missing = list(compress(names, map(operator.is_, got, repeat(None))))
        self.hits += len(names) - len(missing)
        times = known
        late = False
        if missing:
            fresh, folders, late = look_up(watcher, base, missing, deadline, opener, stop)
            stopped = late and stop is not None  # a build's: nothing to order
            times = known if stopped else {**known, **fresh}  # before `fresh` may be kept
            with self._lock:  # those of folders the watcher hears, even of a look cut short
                if tree is not None and self._events == heard:
                    self._keep(tree, fresh, folders)
            if stopped:
                return [], True
            if len(fresh) < len(missing):  # gone since ripgrep listed them, or out of time
                names = [name for name in names if name in times]
            got = list(map(times.__getitem__, names))
        if listing is not None:
            if times is known:  # the kept dict, which the watcher's thread changes
                times = dict(zip(names, cast(list[int], got), strict=True))
            order = kept.order_of(names, times)
            with self._lock:
                unchanged = self._events == heard and self._cleared == cleared
                if len(names) == len(listing.names) and unchanged and not late:
                    listing.order, listing.changed = order, set()
            return kept.first(order, times.__getitem__, count, match), late
        return newest_of(cast(list[int], got), names, count), late  # no None is left

    def forget(self, path: str, moved_to: str | None, is_dir: bool, kind: str = "") -> None:
        """An event named `path` (and `moved_to`): what the cache holds of them goes."""
        with self._lock:
            self._events += 1
            for changed in (path, moved_to):
                if changed is None:
                    continue
                encoded = os.fsencode(changed)
                for base, listing in list(self._listings.items()):
                    if kept.touches(base, encoded, kind, is_dir):
                        listing.dropped = True
                        del self._listings[base]
                    elif listing.order is not None and encoded.startswith(base + b"/"):
                        self._changed(listing, base, encoded[len(base) + 1 :])
                for base, tree in self._trees.items():
                    if not encoded.startswith(base + b"/"):
                        continue
                    relative = encoded[len(base) + 1 :]
                    tree.times.pop(relative, None)
                    if is_dir:
                        prefix = relative + b"/"
                        for folder in [
                            f for f in tree.folders if f == relative or f.startswith(prefix)
                        ]:
                            tree.drop_folder(folder)

    def _changed(self, listing: Listing, base: bytes, name: bytes) -> None:
        """`name`'s time changed: moved in the listing's order on next use (a listed
        file has its time kept until its event, as the order needs; caller holds the
        lock)."""
        tree = self._trees.get(base)
        if name in listing.changed or (tree is not None and name in tree.times):
            listing.changed.add(name)
            if len(listing.changed) > kept.MAX_CHANGED:
                listing.order = None

    def _settled(self) -> tuple[Heard | None, object | None]:
        """The watcher now and its era, once it has told every change made before this
        call (era None: nothing kept may be used). The cache starts again when the
        watcher or its era is not the one it was filled under."""
        watcher = self._watcher()
        era = None
        if watcher is not None:
            ends = time.monotonic() + SETTLE_S
            while not watcher.quiet():
                if time.monotonic() > ends:
                    break
                time.sleep(0.001)
            else:
                era = watcher.era()
        with self._lock:
            if watcher is not self._heard_by:
                self._heard_by = watcher
                if watcher is not None:
                    watcher.listen(self._forget_for(watcher))
            if era is not None and era != self._era:
                self._clear_trees()
                self._listings.clear()
                self._era = era
        return watcher, era

    def _forget_for(self, watcher: Heard) -> Callable[[str, str | None, bool, str], None]:
        def forget(path: str, moved_to: str | None, is_dir: bool, kind: str) -> None:
            if self._heard_by is watcher:  # a former watcher's events mean nothing now
                self.forget(path, moved_to, is_dir, kind)

        return forget

    def _tree(self, base: bytes) -> _Tree:
        """The cache of the times under `base` (caller holds the lock)."""
        tree = self._trees.get(base)
        if tree is None:
            self._bound_trees()
            tree = self._trees[base] = _Tree()
        return tree

    def _bound_trees(self) -> None:
        """Start the times again once they pass MAX_BYTES (caller holds the lock)."""
        if sum(t.cost for t in self._trees.values()) > MAX_BYTES:
            self._clear_trees()

    def _clear_trees(self) -> None:
        self._trees.clear()
        self._cleared += 1  # an order made from the times before is not kept
        for listing in self._listings.values():
            listing.order = None  # its times are gone

    def _keep(self, tree: _Tree, fresh: dict[bytes, int], folders: Folders) -> None:
        """`_keep`, then the times start again if they pass MAX_BYTES (lock held)."""
        _keep(tree, fresh, folders)
        self._bound_trees()

    def _listing_bytes(self) -> int:
        return sum(listing.cost for listing in self._listings.values())

    def held(self) -> tuple[int, int]:
        """The bytes held, as MAX_BYTES counts them: (listings, times)."""
        with self._lock:
            return self._listing_bytes(), sum(t.cost for t in self._trees.values())


def _keep(tree: _Tree, fresh: dict[bytes, int], folders: Folders) -> None:
    """Add the `fresh` times of the folders heard to `tree` (caller holds the lock)."""
    if not tree.times and all(heard for heard, _ in folders.values()):
        # Nothing kept and every folder heard (a build's first look, 100,000s of
        # times): `fresh` is kept as it is, not copied a name at a time.
        tree.times = fresh
        for folder, (_, names) in folders.items():
            tree.folders.setdefault(folder, []).extend(filter(fresh.__contains__, names))
        tree.cost += sum(map(len, fresh)) + _TIME_COST * len(fresh)
        return
    for folder, (heard, names) in folders.items():
        if not heard:
            continue
        entry = tree.folders.setdefault(folder, [])
        for name in names:
            mtime = fresh.get(name)
            if mtime is not None:
                if name not in tree.times:
                    entry.append(name)
                    tree.cost += len(name) + _TIME_COST
                tree.times[name] = mtime


def _listing_cost(names: list[bytes]) -> int:
    return sum(map(len, names)) + _NAME_COST * len(names)
