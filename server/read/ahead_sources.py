"""Where reading ahead (ahead.py) finds the files an agent is likely to read next, beside
the editor's open documents and the watcher's changes: the files a git status named,
the modules the last file read imports, and the files beside it.

Each source only names paths. The worker then opens each as a read does (beneath a root,
no symlink followed, no FIFO, within its size), so a name found here that leads
elsewhere is refused there.
"""

from __future__ import annotations

import os
import re

# The first bytes of the last file read looked at for its imports (they are at the top).
IMPORTS_HEAD = 32 * 1024
# At most this many imported files named, and folders looked in, per file read.
IMPORTED_KEPT = 16
_LOOKUPS = 256
# An absolute import is looked for from the file's folder and this many folders above it
# (up to its root): a package's own modules, whatever folder holds the package.
_BASES = 6
# `from .a.b import c, d` (dots, module, names) or `import a.b as e, f` (modules), at the
# start of a line (one in a block too: `try: import x`).
_IMPORT = re.compile(
    rb"^[ \t]*(?:from[ \t]+(\.*)([A-Za-z_][\w.]*)?[ \t]+import[ \t]+\(?([\w, \t]*)"
    rb"|import[ \t]+([\w., \t]+))",
    re.M,
)
_NAME = re.compile(rb"[A-Za-z_]\w*")


def imported(path: str, head: bytes, top: str) -> list[str]:
    """The files beneath `top` that the Python module `path` (its first bytes `head`)
    imports, in the order it imports them: a module (`a/b.py` or `a/b/__init__.py`) and
    a name imported from a package that is a module of its own (`a/b/c.py`). A relative
    import is looked for from its package's folder, an absolute one from the file's own
    folder and the folders above it, up to `top`."""
    folder = os.path.dirname(path)
    bases: list[str] = []
    at = folder
    while _beneath(at, top) and len(bases) < _BASES:
        bases.append(at)
        if at == top:
            break
        at = os.path.dirname(at)
    found: list[str] = []
    looked = [0]

    def add(base: str, parts: list[str]) -> None:
        where = os.path.join(base, *parts)
        for candidate in (where + ".py", os.path.join(where, "__init__.py")):
            if len(found) >= IMPORTED_KEPT or looked[0] >= _LOOKUPS:
                return
            looked[0] += 1
            if candidate not in found and _beneath(candidate, top) and os.path.isfile(candidate):
                found.append(candidate)
                return

    for match in _IMPORT.finditer(head):
        dots, module, names, plain = match.groups()
        if plain is not None:
            for one in plain.split(b","):
                parts = _dotted(one.split(b" as ")[0])
                for base in bases if parts else ():
                    add(base, parts)
            continue
        parts = _dotted(module or b"")
        if dots:
            start = folder
            for _ in range(len(dots) - 1):
                start = os.path.dirname(start)
            starts = [start] if _beneath(start, top) else []
        else:
            starts = bases if parts else []
        for base in starts:
            if parts:
                add(base, parts)
            for name in names.split(b","):
                name = name.split(b" as ")[0].strip()
                if _NAME.fullmatch(name):
                    add(base, [*parts, os.fsdecode(name)])
    return found


def _dotted(module: bytes) -> list[str]:
    """The parts of a dotted module name, or none when it is not one."""
    parts = module.strip().split(b".")
    if not all(_NAME.fullmatch(part) for part in parts):
        return []
    return [os.fsdecode(part) for part in parts]


def _beneath(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


def siblings(last: str, looked_at: int) -> list[str]:
    """The files beside `last`: its extension first, then the others, each newest first
    (regular files only: a symlink is not followed; the folder's first `looked_at`
    entries only)."""
    folder, name = os.path.split(os.path.normpath(last))
    extension = os.path.splitext(name)[1]
    found: list[tuple[bool, float, str]] = []
    try:
        with os.scandir(folder) as entries:
            for count, entry in enumerate(entries):
                if count >= looked_at:
                    break
                if entry.name == name or not entry.is_file(follow_symlinks=False):
                    continue
                mtime = entry.stat(follow_symlinks=False).st_mtime
                other = os.path.splitext(entry.name)[1] != extension
                found.append((other, -mtime, entry.path))
    except OSError:
        return []
    return [path for _, _, path in sorted(found)]


def status_paths(answer: str, root: str, most: int) -> list[str]:
    """The paths of git status's porcelain lines (`XY name`, `R  old -> new`), those
    git quoted left out (a name with a quote, a backslash or a control character)."""
    paths = []
    for line in answer.splitlines()[1:]:
        if len(line) < 4 or line[2] != " " or not set(line[:2]) <= _STATUS_CODES:
            continue
        name = line[3:].rpartition(" -> ")[2]
        if name and not name.startswith('"') and not name.endswith("/"):
            paths.append(os.path.join(root, name))
    return paths[:most]


_STATUS_CODES = set(" MTADRCU?!")


__all__ = ["IMPORTED_KEPT", "IMPORTS_HEAD", "imported", "siblings", "status_paths"]
