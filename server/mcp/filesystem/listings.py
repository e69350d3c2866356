"""The drop-in's folder tools: list_directory (and with sizes), directory_tree and
search_files, served by readkeeper's `list` and `glob` (so the same ignore rules,
symlinks never entered, and caps), shown as the reference server shows them.

Bounds: a listing holds at most `list`'s page (1000 entries), a tree at most
`TREE_DEPTH` levels and that many entries, a search `glob`'s page (1000 paths); each
cut says so after the listing, and how to see the rest. Whatever else the core said
of the answer (a folder left out of the search and why, a walk stopped early) is said
there too: a listing never looks whole when it is not.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from typing import Any

from pathspec import GitIgnoreSpec

from ... import quoting
from ...errors import ReadkeeperError
from ...files.globcost import refuse_costly
from ...files.ignore import SPEC_ERRORS
from .args import Content, Served, string, text_block
from .words import for_filesystem

TREE_DEPTH = 6
# Matching excludePatterns stops here (each match is cheap, globcost.py; a thousand
# long paths are not): the entries matched so far are shown, the cut said.
EXCLUDE_DEADLINE_S = 5.0


def _excluded(args: dict[str, Any]) -> Callable[[str], bool]:
    """Whether a path relative to the folder asked is left out by `excludePatterns`
    (gitignore's syntax: a bare name at any depth, a folder with all it holds)."""
    patterns = args.get("excludePatterns") or []
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        raise ReadkeeperError(
            "bad_params",
            "excludePatterns must be a list of glob patterns.",
            field="excludePatterns",
        )
    if not patterns:
        return lambda relative: False
    for pattern in patterns:
        refuse_costly(pattern, "excludePatterns")
    try:
        spec = GitIgnoreSpec.from_lines(patterns)
    except SPEC_ERRORS as exc:
        raise ReadkeeperError(
            "bad_params", f"An excludePattern is not a valid glob: {exc}.", field="excludePatterns"
        ) from None
    return lambda relative: bool(spec.match_file(relative))


# An entry's kind (the core's, from lstat, as `list` and `stat` give it) as every
# drop-in tool names it: [DIR]/[FILE] and "directory"/"file" are the reference
# server's words; a symlink (never entered) and anything else (a FIFO, a socket, a
# device: no read opens one) are named as what they are, never passed off as a file.
_KINDS = {
    "dir": ("[DIR]", "directory"),
    "file": ("[FILE]", "file"),
    "symlink": ("[LINK]", "symlink"),
}
_OTHER = ("[OTHER]", "other")


def mark(kind: str) -> str:
    """The listing's mark for an entry of `kind`: [DIR], [FILE], [LINK] or [OTHER]."""
    return _KINDS.get(kind, _OTHER)[0]


def kind_word(kind: str) -> str:
    """The tree's and get_file_info's word for `kind`: directory, file, symlink, other."""
    return _KINDS.get(kind, _OTHER)[1]


# The core's sentence for the next page names an offset the drop-in's tools do not
# take: the drop-in says the cut in its own words instead. Every other sentence of the
# core's note is carried as written.
_PAGING = re.compile(r"Showing [^;.]*; the rest: \w+ with offset=\d+[^.]*\.\s*")
_NOTHING = frozenset({"No files match.", "No matches."})  # the listing says it already


def _notes(result: dict[str, Any], cut: str, *more: str) -> str:
    """What follows a listing: `cut` (if any) when the core had more to show, `more`,
    then the rest of the core's note, as one parenthesised line."""
    notes = [cut] if cut and result.get("next") else []
    notes.extend(more)
    said = _PAGING.sub("", str(result.get("note") or "")).strip()
    if said and said not in _NOTHING:
        notes.append(for_filesystem(said))
    return "\n(readkeeper: " + "; ".join(notes) + ")" if notes else ""


def list_directory(served: Served, args: dict[str, Any]) -> list[Content]:
    """list_directory: `[DIR] name` or `[FILE] name` per entry."""
    result = served.ask("list", path=string(args, "path"), depth=1)
    lines = [f"{mark(e['kind'])} {quoting.name(e['name'])}" for e in result.get("entries", [])]
    cut = _notes(result, "the first 1000 entries; find the others with search_files")
    return [text_block("\n".join(lines) + cut)]


def _size(size: int) -> str:
    units = ["B", "KB", "MB", "GB", "TB"]
    if size == 0:
        return "0 B"
    step = 0
    value = float(size)
    while value >= 1024 and step < len(units) - 1:
        value /= 1024
        step += 1
    return f"{size} B" if step == 0 else f"{value:.2f} {units[step]}"


def list_with_sizes(served: Served, args: dict[str, Any]) -> list[Content]:
    """list_directory_with_sizes: entries with sizes, by name or largest first, and the
    totals."""
    sort_by = args.get("sortBy") or "name"
    if sort_by not in ("name", "size"):
        raise ReadkeeperError("bad_params", 'sortBy must be "name" or "size".', field="sortBy")
    result = served.ask("list", path=string(args, "path"), depth=1)
    entries = list(result.get("entries", []))
    if sort_by == "size":
        entries.sort(key=lambda e: -int(e.get("size", 0)))
    lines = []
    for e in entries:
        # Only a regular file has a size the core gives (a link's would be its target's).
        size = _size(int(e["size"])).rjust(10) if e["kind"] == "file" else ""
        lines.append(f"{mark(e['kind'])} {quoting.name(e['name']).ljust(30)} {size}".rstrip())
    files = [e for e in entries if e["kind"] == "file"]
    folders = sum(e["kind"] == "dir" for e in entries)
    others = len(entries) - len(files) - folders
    total = f"Total: {len(files)} files, {folders} directories"
    lines += [
        "",
        total + (f", {others} other entries" if others else ""),
        f"Combined size: {_size(sum(int(e.get('size', 0)) for e in files))}",
    ]
    cut = _notes(result, "the first 1000 entries only; the totals count those")
    return [text_block("\n".join(lines) + cut)]


def directory_tree(served: Served, args: dict[str, Any]) -> list[Content]:
    """directory_tree: compact JSON of `{name, type, children}`, to `TREE_DEPTH`."""
    excluded = _excluded(args)
    result = served.ask("list", path=string(args, "path"), depth=TREE_DEPTH)
    top: list[dict[str, Any]] = []
    folders: dict[str, list[dict[str, Any]]] = {"": top}
    deepest = late = False
    until = time.monotonic() + EXCLUDE_DEADLINE_S
    for e in result.get("entries", []):
        if time.monotonic() > until:
            late = True
            break
        name = e["name"]
        parent, _, leaf = name.rpartition("/")
        is_dir = e["kind"] == "dir"
        if excluded(name + "/" if is_dir else name) or parent not in folders:
            continue  # excluded, or inside an excluded folder
        node: dict[str, Any] = {"name": leaf, "type": kind_word(e["kind"])}
        if e["kind"] == "dir":
            node["children"] = folders[name] = []
            if name.count("/") == TREE_DEPTH - 1:
                node["more"] = True  # entries below the depth shown
                deepest = True
        folders[parent].append(node)
    text = json.dumps(top, ensure_ascii=False, separators=(",", ":"))
    more = []
    if late:
        more.append("cut: matching excludePatterns ran out of time; ask for a subfolder")
    if deepest:
        more.append(
            f'"more": true marks a folder deeper than {TREE_DEPTH} levels; ask for its tree'
        )
    cut = "cut at 1000 entries; ask for a subfolder's tree to see the rest"
    return [text_block(text + _notes(result, "" if late else cut, *more))]


def search_files(served: Served, args: dict[str, Any]) -> list[Content]:
    """search_files: full paths of the files matching the glob, newest first."""
    path = string(args, "path")
    excluded = _excluded(args)
    result = served.ask("glob", pattern=string(args, "pattern"), path=path)
    found = list(result.get("paths", []))
    late = False
    if args.get("excludePatterns"):
        where = served.ask("stat", path=path).get("path", path)  # the real folder searched
        found, late = _kept(found, lambda p: not excluded(os.path.relpath(p, where)))
    text = "\n".join(quoting.name(p) for p in found) if found else "No matches found"
    cut = "the 1000 newest matches; narrow the pattern or path for the others"
    if late:
        late_cut = "cut: matching excludePatterns ran out of time; narrow the path"
        return [text_block(text + _notes(result, "", late_cut))]
    return [text_block(text + _notes(result, cut))]


def _kept(paths: list[str], keep: Callable[[str], bool]) -> tuple[list[str], bool]:
    """The paths `keep` keeps, as many as are matched by `EXCLUDE_DEADLINE_S`, and
    whether the time ran out first."""
    until = time.monotonic() + EXCLUDE_DEADLINE_S
    kept: list[str] = []
    for path in paths:
        if time.monotonic() > until:
            return kept, True
        if keep(path):
            kept.append(path)
    return kept, False


HANDLERS: dict[str, Callable[[Served, dict[str, Any]], list[Content]]] = {
    "list_directory": list_directory,
    "list_directory_with_sizes": list_with_sizes,
    "directory_tree": directory_tree,
    "search_files": search_files,
}
