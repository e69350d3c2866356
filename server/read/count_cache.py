"""Token counts kept by content: the block sums of numbered lines (tokens.py
`NumberedLines`), in memory and in the user's cache folder (files/user_cache.py), so a
forced read of a text counted before, by this server or an earlier one, skips the count.

The key names everything a block sum depends on: the SHA-256 of the lines themselves
(not the file's name, size or mtime: a file swapped under the same mtime is another
key), the first line's number and the number width (the numbers are counted with
the lines), the token table (its encoding's name, the digests of its data files and
tiktoken's version: `token_table.table_key`) and readkeeper's version. An entry holds
the running sums at block boundaries as far as they were counted, and the line-by-line
sums of the blocks a cut fell in; a read that needs more counts on from there.

An entry is checked against the lines before it is used: the sums start at zero, and
each block's and each line's share lies between one token a line and the UTF-8 bytes
of its numbered text (no byte-level BPE gives more tokens than bytes); an entry that
is not is ignored and made anew, so it can cost a recount, never a count no text could
have. Texts of one block or less are never cached: counting them costs less than the
look-up.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import pairwise

from .. import __version__
from ..files import user_cache
from ..files.user_cache import UserCache
from . import bpe_count, token_table

CACHE_KIND = "counts"
_FORMAT = 1
MEMORY_ENTRIES = 256


@dataclass
class Facts:
    """What was counted of one text: `blocks[i]`, the tokens of the lines before block
    i (each with its newline); `within[b]`, the running sums of block b's lines."""

    blocks: list[int]
    within: dict[int, list[int]] = field(default_factory=dict)

    def copy(self) -> Facts:
        return Facts(list(self.blocks), {b: list(s) for b, s in self.within.items()})


@dataclass
class Counters:
    """Look-ups and hits, by tier (`stats`)."""

    lookups: int = 0
    memory_hits: int = 0
    disk_hits: int = 0
    rejected: int = 0  # entries found but not trusted


STATS = Counters()
_MEMORY: OrderedDict[str, Facts] = OrderedDict()
_LOCK = threading.Lock()


def _table(encoding_name: str) -> str:
    """What the counts depend on in the token table and its counter."""
    return _table_of(encoding_name, bpe_count.available(encoding_name))


@cache
def _table_of(encoding_name: str, fast: bool) -> str:
    """`_table`, hashed once per process and counter (`fast`: rs-bpe's)."""
    key = token_table.table_key(encoding_name)
    if key is None:
        import tiktoken

        key = f"{encoding_name}|tiktoken {getattr(tiktoken, '__version__', '?')}"
    return key


def key(encoding_name: str, lines: Sequence[str], start: int, width: int) -> str:
    """Everything the block sums of `lines` numbered from `start` depend on."""
    digest = hashlib.sha256("\n".join(lines).encode("utf-8", "surrogatepass")).hexdigest()
    table = _table(encoding_name)
    return (
        f"v{_FORMAT}|readkeeper {__version__}|{table}|width {width}|start {start}|"
        f"lines {len(lines)}|{digest}"
    )


def get(
    entry_key: str,
    lines: Sequence[str],
    start: int,
    width: int,
    block_lines: int,
    cache: UserCache | None = None,
) -> Facts | None:
    """The facts kept for `entry_key`, checked against `lines`, or None."""
    with _LOCK:
        STATS.lookups += 1
        kept = _MEMORY.get(entry_key)
        if kept is not None:
            _MEMORY.move_to_end(entry_key)
            STATS.memory_hits += 1
            return kept.copy()
    payload = (cache if cache is not None else user_cache.shared()).get(CACHE_KIND, entry_key)
    if payload is None:
        return None
    found = parse(payload, lines, start, width, block_lines)
    with _LOCK:
        if found is None:
            STATS.rejected += 1
            return None
        STATS.disk_hits += 1
        _remember(entry_key, found)
    return found.copy()


def put(entry_key: str, facts: Facts, cache: UserCache | None = None) -> None:
    """Keep `facts` for `entry_key`: in memory now, on disk from the user cache's writer
    thread (`UserCache.put_later`), off the read that counted."""
    with _LOCK:
        _remember(entry_key, facts.copy())
    folder = cache if cache is not None else user_cache.shared()
    folder.put_later(CACHE_KIND, entry_key, dump(facts))


def flush() -> None:
    """Wait for the writes queued so far (tests, and a server closing)."""
    user_cache.flush()


def _remember(entry_key: str, facts: Facts) -> None:
    _MEMORY[entry_key] = facts
    _MEMORY.move_to_end(entry_key)
    while len(_MEMORY) > MEMORY_ENTRIES:
        _MEMORY.popitem(last=False)


def hit_counts() -> dict[str, dict[str, int]]:
    """Look-ups of the counts of this process, and those answered, from memory or disk
    (an entry rejected is no hit), beside the user cache's counts of every kind."""
    found = user_cache.hit_counts()
    with _LOCK:
        hits = STATS.memory_hits + STATS.disk_hits
        found[CACHE_KIND] = {"lookups": STATS.lookups, "hits": hits}
    return found


def clear_memory() -> None:
    """Forget the facts held in memory, once those queued are on disk (which stay)."""
    flush()
    with _LOCK:
        _MEMORY.clear()


def dump(facts: Facts) -> bytes:
    within = {str(b): sums for b, sums in sorted(facts.within.items())}
    return json.dumps({"blocks": facts.blocks, "within": within}).encode("ascii")


def parse(
    payload: bytes, lines: Sequence[str], start: int, width: int, block_lines: int
) -> Facts | None:
    """The facts of an entry when they are counts `lines` could have, else None."""
    try:
        data = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or set(data) != {"blocks", "within"}:
        return None
    blocks, within = data["blocks"], data["within"]
    if not isinstance(blocks, list) or not isinstance(within, dict):
        return None
    before = max(0, len(lines) - 1)  # the lines counted with their newline
    all_blocks = -(-before // block_lines)
    if not blocks or blocks[0] != 0 or len(blocks) > all_blocks + 1:
        return None
    if not all(type(v) is int for v in blocks):
        return None

    def bounds(first: int, end: int) -> tuple[int, int]:
        """The fewest and most tokens lines first..end-1 can come to, numbered: one a
        line, and the UTF-8 bytes of their text, numbers, tabs and newlines."""
        text = "".join(lines[first:end]).encode("utf-8", "surrogatepass")
        number = max(width, len(str(start + end - 1)))
        return end - first, len(text) + (end - first) * (number + 2)

    for block, (low, high) in enumerate(pairwise(blocks)):
        first = block * block_lines
        fewest, most = bounds(first, min(first + block_lines, before))
        if not fewest <= high - low <= most:
            return None
    sums_of: dict[int, list[int]] = {}
    for name, sums in within.items():
        if not (isinstance(name, str) and name.isdigit() and isinstance(sums, list)):
            return None
        block = int(name)
        first = block * block_lines
        end = min(first + block_lines, before)
        if block >= all_blocks or len(sums) != end - first + 1 or sums[:1] != [0]:
            return None
        if not all(type(v) is int for v in sums):
            return None
        for i, (low, high) in enumerate(pairwise(sums)):
            fewest, most = bounds(first + i, first + i + 1)
            if not fewest <= high - low <= most:
                return None
        if block + 1 < len(blocks) and sums[-1] != blocks[block + 1] - blocks[block]:
            return None
        sums_of[block] = sums
    return Facts(blocks, sums_of)


__all__ = [
    "CACHE_KIND",
    "STATS",
    "Facts",
    "clear_memory",
    "dump",
    "flush",
    "get",
    "hit_counts",
    "key",
    "parse",
    "put",
]
