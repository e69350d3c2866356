"""The token table, loaded from a copy of its ranks in the user's cache when one is there.

tiktoken builds an encoding from its `.tiktoken` file: 100,256 lines of base64 decoded
into a dict of bytes to rank, about half of the table's load (the other half is the
native `CoreBPE` built from that dict, which no cache can save). The ranks are kept in
readkeeper's cache folder (`files/user_cache.py`) in a plain binary form: the length of
each token in one byte, in rank order, then the tokens' bytes one after the other. A
second load reads them back with a few slices instead of 100,256 base64 decodes.

The entry's key names everything the table depends on: the encoding's name, the SHA-256
of the `.tiktoken` file and of the module that defines the encoding (its split pattern
and special tokens), tiktoken's version and readkeeper's. An entry made for anything
else is never read, and one whose bytes do not parse into exactly the table the key
promises (as many distinct tokens as ranks, lengths adding up) is ignored and made
anew: a cache entry can cost a rebuild, never a wrong count. Encodings that are not
defined by a data file of `tiktoken_ext` are loaded by tiktoken as before, uncached.

A load also has the table's index kept beside its ranks when no valid one is there
(token_index.py `keep`): the editor's server counts with it before its table loads.

All of this is tiktoken's path: a table rs-bpe holds is counted by rs-bpe, whose table is
built into its library (bpe_count.py), and loads without tiktoken, its cache or index.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable
from itertools import accumulate, pairwise
from typing import Any

from .. import __version__
from ..files import user_cache
from ..files.user_cache import UserCache
from ..setting_values import data_files, offline_names
from . import bpe_count, token_index

log = logging.getLogger("readkeeper")

CACHE_KIND = "token-table"
_FORMAT = 1


class Loaded:
    """A table's exact counter (`count`: the tokens of a text, as tiktoken's
    `encode_ordinary` makes them), its tiktoken encoding when tiktoken counts, and where
    the encoding's ranks came from."""

    def __init__(
        self,
        encoding: Any,
        from_cache: bool,
        cached: bool,
        count: Callable[[str], int] | None = None,
        counter: str = "",
    ) -> None:
        self.encoding = encoding
        self.from_cache = from_cache  # read from the cache
        self.cached = cached  # written to the cache by this load
        self.counter = counter  # what counts: "rs-bpe <version>" or "tiktoken <version>"
        if count is None:
            encode = encoding.encode_ordinary

            def count(text: str) -> int:
                return len(encode(text))

            from tiktoken import __version__ as tiktoken_version

            self.counter = f"tiktoken {tiktoken_version}"
        self.count: Callable[[str], int] = count


def load(name: str, cache: UserCache | None = None) -> Loaded:
    """The tiktoken encoding `name`, its ranks from `cache` when a valid entry is there
    (and written there when not). Raises ValueError for a name that is not a table
    installed for offline use (tiktoken would download a public one's at run time)."""
    fast = bpe_count.counter(name)
    if fast is not None:
        return Loaded(None, False, False, fast, f"rs-bpe {bpe_count.version()}")
    import tiktoken  # deferred: its import alone takes about 90 ms

    if data_files(name) is None:
        raise ValueError(f"{name!r} is not {offline_names()}")
    cache = cache if cache is not None else user_cache.shared()
    key = table_key(name)
    if key is None:
        return Loaded(tiktoken.get_encoding(name), False, False)
    payload = cache.get(CACHE_KIND, key)
    if payload is not None:
        parsed = parse_payload(payload)
        if parsed is not None:
            pat_str, special_tokens, ranks = parsed
            encoding = tiktoken.Encoding(
                name, pat_str=pat_str, mergeable_ranks=ranks, special_tokens=special_tokens
            )
            token_index.keep(name, encoding, cache)
            return Loaded(encoding, True, False)
        log.warning("Ignoring readkeeper's cached token table: it does not parse")
    encoding = tiktoken.get_encoding(name)
    made = make_payload(encoding._pat_str, encoding._special_tokens, encoding._mergeable_ranks)
    cached = made is not None and cache.put(CACHE_KIND, key, made)
    token_index.keep(name, encoding, cache)
    return Loaded(encoding, False, cached)


# One table per encoding (and counter: rs-bpe's or tiktoken's) per process, whichever
# counter asks first (or `preload`).
_SHARED: dict[tuple[str, bool], Loaded] = {}
_SHARED_LOCK = threading.Lock()
_PRELOADED: set[str] = set()  # the names `preload` was asked for


def shared(name: str) -> Loaded:
    """The process's table of encoding `name`, loaded (`load`) on first need: a caller
    that comes while another loads it waits for that load."""
    which = (name, bpe_count.available(name))
    found = _SHARED.get(which)
    if found is not None:
        return found
    with _SHARED_LOCK:
        found = _SHARED.get(which)
        if found is None:
            found = _SHARED[which] = load(name)
        return found


def preload(name: str) -> None:
    """Load the process's table of `name` on a daemon thread, ahead of need (once); a
    failure is logged, and the first count tries again."""
    if name in _PRELOADED:
        return
    _PRELOADED.add(name)

    def run() -> None:
        try:
            shared(name)
        except Exception:
            log.exception("Loading the token table (%s) failed", name)

    threading.Thread(target=run, name="readkeeper-token-table", daemon=True).start()


# Keys of the installed tables by name: hashing the data files once per process (about
# 2 MB) serves the table's load and every key of the counts kept (count_cache.py).
_KEYS: dict[str, str | None] = {}


def table_key(name: str, files: tuple[str, str] | None = None) -> str | None:
    """The cache key of encoding `name`: everything its table depends on (the counter's
    too: counts kept by one are never read by the other)."""
    if files is None and bpe_count.available(name):
        return f"v{_FORMAT}|{name}|rs-bpe {bpe_count.version()}|readkeeper {__version__}"
    if files is None:
        if name not in _KEYS:
            _KEYS[name] = _table_key(name, data_files(name))
        return _KEYS[name]
    return _table_key(name, files)


def _table_key(name: str, files: tuple[str, str] | None) -> str | None:
    import tiktoken

    if files is None:
        return None
    digests = []
    for path in files:
        try:
            with open(path, "rb") as source:
                digests.append(hashlib.sha256(source.read()).hexdigest())
        except OSError:
            return None
    version = getattr(tiktoken, "__version__", "?")
    return f"v{_FORMAT}|{name}|tiktoken {version}|readkeeper {__version__}|{'|'.join(digests)}"


def make_payload(
    pat_str: str, special_tokens: dict[str, int], ranks: dict[bytes, int]
) -> bytes | None:
    """The cached form of a table, or None when it has no such form (ranks that are not
    0..n-1, a token longer than 255 bytes)."""
    tokens = sorted(ranks, key=ranks.__getitem__)
    if [ranks[t] for t in tokens] != list(range(len(tokens))):
        return None
    lengths = [len(t) for t in tokens]
    if any(not 0 < n < 256 for n in lengths):
        return None
    header = {"pat_str": pat_str, "special_tokens": special_tokens, "count": len(tokens)}
    return user_cache.with_header(header, bytes(lengths), *tokens)


def parse_payload(payload: bytes) -> tuple[str, dict[str, int], dict[bytes, int]] | None:
    """The split pattern, special tokens and ranks of a cached table, or None when the
    bytes are not exactly one."""
    framed = user_cache.split_header(payload)
    if framed is None:
        return None
    header, start = framed
    pat_str, special = header.get("pat_str"), header.get("special_tokens")
    count = header.get("count")
    if not (isinstance(pat_str, str) and isinstance(special, dict) and type(count) is int):
        return None
    if count <= 0:
        return None
    if not all(isinstance(k, str) and type(v) is int and v >= count for k, v in special.items()):
        return None
    lengths = payload[start : start + count]
    blob = payload[start + count :]
    if len(lengths) != count or 0 in lengths or sum(lengths) != len(blob):
        return None
    offsets = list(accumulate(lengths, initial=0))
    tokens = [blob[a:b] for a, b in pairwise(offsets)]
    ranks = dict(zip(tokens, range(count), strict=True))
    if len(ranks) != count:
        return None  # a token twice: not a table tiktoken made
    return pat_str, special, ranks


__all__ = [
    "CACHE_KIND",
    "Loaded",
    "data_files",
    "load",
    "make_payload",
    "parse_payload",
    "preload",
    "shared",
    "table_key",
]
