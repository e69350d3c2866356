"""ripgrep's `--json` output as one block per file, put in path order, parsed only as far
as a page needs.

ripgrep's threads finish files in any order, but each file's messages come out together
(`begin`, its matches and context, `end`). So a search's output is cut into blocks by
`begin` lines (one message parsed per file), its matches counted by a byte prefix, and
only the blocks a page shows are parsed whole: a search with a hundred thousand matches
costs little more than one with a hundred.

A search of single lines reads ripgrep's plain output instead (`PLAIN_FLAGS`: a third
the bytes of `--json`, which ripgrep takes longer to write and this process to cut), in
headings: each file's lines as `path NUL number:text` then `number:text` (`-` for
context), the files parted by an empty line. So a file's lines are found by the next
empty line (`list.index`, a C loop) and kept as one slice of the output: only the files
a page shows are ever looked at line by line. It is exact while each file's first line
holds the NUL after its path (without one: a path holding a line break, or ripgrep's
message on a binary file that showed no line) and its last line is not that message
(ripgrep writes it after the file's lines: `_BINARY`), which `--json` leaves out,
showing the lines: `plain_blocks` then answers None, and the search is made again with
`--json`. A line holding the message's words stands for one, and costs that second run.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from . import rg
from .above import Above
from .globs import Glob

_BEGIN = b'{"type":"begin"'
_MATCH = b'{"type":"match"'
_END = b'{"type":"end"'
# ripgrep's plain output: the path (NUL-ended) before each file's first line.
PLAIN_FLAGS = (
    "--line-number",
    "--with-filename",
    "--null",
    "--heading",
    "--color=never",
    "--no-context-separator",
)
# The end of ripgrep's message on a binary file with a match (printer/standard.rs
# `write_binary_message`: "... (found "\0" byte around offset 123)"), the last line of
# that file's output.
_BINARY = b" byte around offset "
_FS_ENCODING, _FS_ERRORS = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()


@dataclass(slots=True)
class Line:
    """A line of a result: a match's (`event` numbers the match it is part of) or
    context's. (Not frozen: a frozen dataclass takes microseconds to make, for each
    line a page shows.)"""

    path: str
    number: int
    text: str
    match: bool
    event: int = 0


@dataclass(slots=True)
class Block:
    """One file's messages."""

    path: str
    raw: list[bytes] = field(default_factory=list)
    matches: int = 0  # match messages (a multiline match is one)
    # raw holds lines of plain output (`number:text`), not `--json` messages.
    plain: bool = False


def blocks(
    root: str,
    cwd: str,
    output: Iterable[bytes],
    matcher: Glob | None,
    above: Above | None = None,
) -> list[Block]:
    """The files' blocks, in path order; paths not beneath `root`, not matching the
    glob, or hidden by the ignore files `above` the folder searched, are left out."""
    inside = rg.Beneath(root, cwd)
    found: list[Block] = []
    current: Block | None = None
    for raw in output:
        if raw.startswith(_BEGIN):
            current = None
            for event in rg.events([raw]):
                data = event.get("data")
                path = data.get("path") if isinstance(data, dict) else None
                printed = rg.text_of(path, "surrogateescape")
                printed = printed.removeprefix("./")
                if matcher is not None and not matcher.matches(printed):
                    continue
                if above is not None and above.hides(printed):
                    continue
                path = inside(printed)
                if path is not None:
                    current = Block(path)
                    found.append(current)
        elif current is not None:
            current.raw.append(raw)
            if raw.startswith(_MATCH):
                current.matches += 1
    found.sort(key=lambda block: block.path)
    return found


def plain_blocks(
    root: str,
    cwd: str,
    output: list[bytes],
    matcher: Glob | None,
    above: Above | None = None,
    *,
    context: bool = True,
) -> list[Block] | None:
    """`blocks` of ripgrep's plain output (PLAIN_FLAGS); None when it is not exact (see
    above): search again with `--json`. `context`: False when the search asked for none
    (every line is then a match)."""
    inside = rg.Beneath(root, cwd)
    found: list[Block] = []
    index, end, start = output.index, len(output), 0
    while start < end:
        try:
            stop = index(b"", start)  # the empty line after this file's
        except ValueError:
            stop = end
        printed, nul, first = output[start].partition(b"\0")
        if not nul or _BINARY in output[stop - 1]:
            return None
        shown = printed.decode(_FS_ENCODING, _FS_ERRORS).removeprefix("./")  # os.fsdecode
        hidden = matcher is not None and not matcher.matches(shown)
        path = None
        if not hidden and not (above is not None and above.hides(shown)):
            path = inside(shown)
        if path is not None:
            raw = output[start:stop]
            raw[0] = first
            if context:
                matches = sum(1 for line in raw if _MATCH_NUMBER.match(line))
            else:
                matches = stop - start
            found.append(Block(path, raw, matches, plain=True))
        start = stop + 1
    found.sort(key=_path)
    return found


def _path(block: Block) -> str:
    return block.path


_MATCH_NUMBER = re.compile(rb"\d+:")
_NUMBER = re.compile(rb"(\d+)([:-])")


def lines(found: list[Block], skip: int) -> Iterator[Line]:
    """The lines of the blocks in order, from after the first `skip` matches (with the
    context before the next match)."""
    event_id = 0
    for block in found:
        if skip >= block.matches:
            skip -= block.matches
            event_id += block.matches
            continue
        parsed = list(_block_lines(block, event_id))
        event_id += block.matches
        if skip:
            first_event = min(line.event for line in parsed if line.match)
            last_skipped = max(
                i for i, line in enumerate(parsed) if line.match and line.event < first_event + skip
            )
            parsed = parsed[last_skipped + 1 :]
            skip = 0
        yield from parsed


def _block_lines(block: Block, event_id: int) -> Iterator[Line]:
    if block.plain:
        yield from _plain_lines(block, event_id)
        return
    seen: set[int] = set()
    for event in rg.events(block.raw):
        kind, data = event.get("type"), event.get("data")
        if kind not in ("match", "context") or not isinstance(data, dict):
            continue
        number = data.get("line_number")
        if not isinstance(number, int):
            continue
        if kind == "match":
            event_id += 1
        text = rg.text_of(data.get("lines"))
        for i, part in enumerate(text.removesuffix("\n").split("\n")):
            if number + i in seen:
                continue
            seen.add(number + i)
            yield Line(block.path, number + i, part.removesuffix("\r"), kind == "match", event_id)


def _plain_lines(block: Block, event_id: int) -> Iterator[Line]:
    """`_block_lines` of plain output: a line each, decoded as `--json`'s text is."""
    for raw in block.raw:
        number = _NUMBER.match(raw)
        if number is None:
            continue
        match = number[2] == b":"
        if match:
            event_id += 1
        text = raw[number.end() :].decode("utf-8", "replace").removesuffix("\r")
        yield Line(block.path, int(number[1]), text, match, event_id)
