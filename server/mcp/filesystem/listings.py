"""The drop-in's folder tools: list_directory (and with sizes), directory_tree and
search_files, served by readkeeper's `list` and `glob` (so the same ignore rules,
symlinks never entered, and caps), shown as the reference server shows them.

Bounds: a listing holds at most `list`'s page (1000 entries), a tree at most
`TREE_DEPTH` levels and that many entries, a search `glob`'s page (1000 paths), each
fewer when the token cap cuts first; `excludePatterns` are applied by the core's walk,
before any cap counts an entry. Each cut says, by one rule (`_cut`), how many entries
it shows, which cap cut them, and how to see the rest. Whatever else the core said
of the answer (a folder left out of the search and why, a walk stopped early) is said
there too: a listing never looks whole when it is not.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ... import quoting
from ...errors import ReadkeeperError
from ...protocol.convert import as_sent
from ...search.exclude import Exclude
from ...search.listing import MAX_ENTRIES, MAX_PATHS, cut_note
from ...search.priced import CHARS_CAP, TOKEN_CAP
from .args import Content, Served, refused, string, text_block
from .words import for_filesystem

TREE_DEPTH = 6


def _exclude(args: dict[str, Any]) -> list[str] | None:
    """`excludePatterns`, checked here so that a bad one is named by the drop-in's word;
    the core applies them while it walks (search/exclude.py), before any cap."""
    patterns = args.get("excludePatterns") or []
    if not isinstance(patterns, list):
        raise ReadkeeperError(
            "bad_params",
            f"excludePatterns must be a list of glob patterns, got {as_sent(patterns)}.",
            field="excludePatterns",
        )
    for index, pattern in enumerate(patterns):  # a bad entry is named, as the core names it
        if not isinstance(pattern, str):
            field = f"excludePatterns[{index}]"
            raise ReadkeeperError(
                "bad_params",
                f"{field} must be a glob pattern (a string), got {as_sent(pattern)}.",
                field=field,
            )
    Exclude(patterns, "excludePatterns")
    return patterns or None


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
# core's note is carried as written. (Its way on is a run, `the rest: offset=753`.)
_PAGING = re.compile(r"Showing [^;.]*; the rest: [a-z_]+=\d+, or [^.]*\.\s*")
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


def _cut(result: dict[str, Any], shown: int, noun: str, rest: str, cap: int = MAX_ENTRIES) -> str:
    """The one cut note of every listing: what was shown and which cap cut it (the
    core's rule, listing.cut_note: its page's characters when the core's note says so),
    then how to see the rest (`rest`)."""
    size = CHARS_CAP if CHARS_CAP in str(result.get("note") or "") else TOKEN_CAP
    return f"{cut_note(0, shown, cap, noun, size)}; {rest}"


def _nothing(result: dict[str, Any], words: str) -> str:
    """A listing with nothing to show: `words` only when the search was whole; one that
    stopped early, or left a folder out (the core's note names it, without marking the
    answer partial), found nothing in what it searched, which the words say."""
    said = str(result.get("note") or "")
    if result.get("partial") or (said and said not in _NOTHING):
        return f"{words} in what was searched; the search was not whole (see the note)"
    return words


def list_directory(served: Served, args: dict[str, Any]) -> list[Content]:
    """list_directory: `[DIR] name` or `[FILE] name` per entry."""
    result = served.ask("list", path=string(args, "path"), depth=1)
    lines = [f"{mark(e['kind'])} {quoting.name(e['name'])}" for e in result.get("entries", [])]
    rest = "find the others with search_files and a narrower pattern"
    cut = _notes(result, _cut(result, len(lines), "entry", rest))
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
    sort_by = args.get("sortBy")
    if sort_by is None:
        sort_by = "name"
    if sort_by not in ("name", "size") or not isinstance(sort_by, str):
        raise refused("sortBy", 'expected "name" or "size"', sort_by)
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
    # Totals count the entries shown, and say so when the listing was cut.
    of = f" of the {len(entries)} entries shown" if result.get("next") else ""
    total = f"Total{of}: {len(files)} files, {folders} directories"
    lines += [
        "",
        total + (f", {others} other entries" if others else ""),
        f"Combined size{of}: {_size(sum(int(e.get('size', 0)) for e in files))}",
    ]
    rest = "find the others with search_files and a narrower pattern"
    cut = _notes(result, _cut(result, len(entries), "entry", rest))
    return [text_block("\n".join(lines) + cut)]


def directory_tree(served: Served, args: dict[str, Any]) -> list[Content]:
    """directory_tree: compact JSON of `{name, type, children}`, to `TREE_DEPTH`."""
    path, exclude = string(args, "path"), _exclude(args)
    result = served.ask("list", path=path, depth=TREE_DEPTH, exclude=exclude)
    top: list[dict[str, Any]] = []
    folders: dict[str, list[dict[str, Any]]] = {"": top}
    deepest = False
    shown = 0
    for e in result.get("entries", []):
        name = e["name"]
        parent, _, leaf = name.rpartition("/")
        if parent not in folders:
            continue  # the core lists a folder before what it holds: never reached
        node: dict[str, Any] = {"name": leaf, "type": kind_word(e["kind"])}
        if e["kind"] == "dir":
            node["children"] = folders[name] = []
            if name.count("/") == TREE_DEPTH - 1:
                node["more"] = True  # entries below the depth shown
                deepest = True
        folders[parent].append(node)
        shown += 1
    # Names by the naming rule (quoting.json_text): json.dumps leaves a name's bidirectional
    # overrides, zero-width characters and line separators raw inside its strings.
    text = quoting.json_text(top, separators=(",", ":"))
    more = []
    if deepest:
        more.append(
            f'"more": true marks a folder deeper than {TREE_DEPTH} levels; ask for its tree'
        )
    cut = _cut(result, shown, "entry", "ask for a subfolder's tree to see the rest")
    return [text_block(text + _notes(result, cut, *more))]


def search_files(served: Served, args: dict[str, Any]) -> list[Content]:
    """search_files: full paths of the files matching the glob, newest first."""
    path, exclude = string(args, "path"), _exclude(args)
    result = served.ask("glob", pattern=string(args, "pattern"), path=path, exclude=exclude)
    found = list(result.get("paths", []))
    text = (
        "\n".join(quoting.name(p) for p in found) if found else _nothing(result, "No matches found")
    )
    rest = "narrow the pattern or path for the others"
    cut = _cut(result, len(found), "newest match", rest, MAX_PATHS)
    return [text_block(text + _notes(result, cut))]


HANDLERS: dict[str, Callable[[Served, dict[str, Any]], list[Content]]] = {
    "list_directory": list_directory,
    "list_directory_with_sizes": list_with_sizes,
    "directory_tree": directory_tree,
    "search_files": search_files,
}
