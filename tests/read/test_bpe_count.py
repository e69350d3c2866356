"""rs-bpe counts what tiktoken counts (read/bpe_count.py, issue 34): on over a thousand
real files, on generated texts of every kind of character cl100k's split pattern treats
apart, on long runs of one character and on lone surrogates; the server counts with it
and says so, and counts with tiktoken when told to, the same tokens either way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from raw_lsp import RawServer

from helpers import stdlib_text_files, tiktoken_count, wait_until
from readkeeper.read import bpe_count, token_table
from readkeeper.read.numbering import numbered
from readkeeper.read.tokens import DEFAULT_ENCODING, TokenCounter

COUNT = bpe_count.counter(DEFAULT_ENCODING)


def rs_count(text: str) -> int:
    assert COUNT is not None, "rs-bpe is a dependency on this platform"
    return COUNT(text)


def test_counts_are_tiktokens_on_over_a_thousand_real_files() -> None:
    files = stdlib_text_files()
    assert len(files) > 1000
    for path in files:
        text = path.read_bytes().decode("utf-8", "surrogateescape")[: 1 << 13]
        assert rs_count(text) == tiktoken_count(text), path


# Pieces the split pattern cuts apart or joins: contractions in both cases, letters of
# every case and script, marks, digits of other scripts, every kind of space and line
# break, punctuation runs, emoji with modifiers and joiners, a lone surrogate.
PIECES = st.sampled_from(
    [
        *"aZ9 \t\n\r\x0b\x0c\x85'\".,;:(){}[]_-+=*/\\#@!?<>|~`^%$&",
        *["'s", "'S", "'ll", "'LL", "'re", "'ve", "'m", "'d", "'t", "ŉ", "ǅ", "İ", "ß", "ς"],
        *["é", "e\u0301", "中文", "日本語", "한국어", "١٢٣", "²", "Ⅻ", "ﬁ", "\u200b", "\u00a0"],
        *["\u3000", "\u2028", "\u2029", "😀", "👍🏽", "👨\u200d👩\u200d👧", "\U000e0001"],
        *["\udcff", "\ud83d", "\ud83d\ude00", "    ", "\n\n", "\r\n", "0000", "12345"],
    ]
)


@settings(max_examples=2000, deadline=None)
@given(st.lists(PIECES, max_size=60).map("".join))
def test_generated_texts_count_alike(text: str) -> None:
    assert rs_count(text) == tiktoken_count(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_text_counts_alike(text: str) -> None:
    assert rs_count(text) == tiktoken_count(text)


@pytest.mark.parametrize("run", [" ", "a", "1", "\n", "😀", "中", "ab ", "\t\n", "\udcff"])
def test_long_runs_of_one_character_count_alike(run: str) -> None:
    text = run * (60_000 // len(run))
    assert rs_count(text) == tiktoken_count(text)


def test_lone_surrogates_count_as_tiktoken_counts_them() -> None:
    # Bytes that were not UTF-8, as readkeeper decodes them; a pair stands for one
    # character, as tiktoken counts it.
    for text in ("a\udcff b", "\udcc3\udca9t\udce9", "x\ud83d\ude00y", "\ud83d", "ok\udcff\n"):
        assert rs_count(text) == tiktoken_count(text), ascii(text)


def test_told_to_tiktoken_counts_and_the_counts_are_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fast = TokenCounter(keep_counts=False)
    monkeypatch.setenv(bpe_count.ENVIRONMENT, "tiktoken")
    assert bpe_count.counter(DEFAULT_ENCODING) is None
    slow = TokenCounter(keep_counts=False)
    lines = [line for path in stdlib_text_files()[:40:4] for line in path.read_text().split("\n")]
    assert slow.numbered(lines, 1).tokens() == tiktoken_count("\n".join(numbered(lines, 1)))
    assert slow.counter_name.startswith("tiktoken ")
    monkeypatch.delenv(bpe_count.ENVIRONMENT)
    assert fast.numbered(lines, 1).tokens() == slow.numbered(lines, 1).tokens()
    assert fast.counter_name == f"rs-bpe {bpe_count.version()}"
    # Each counter keeps its own table: neither answers for the other.
    assert token_table.shared(DEFAULT_ENCODING).encoding is None


def test_a_table_rs_bpe_does_not_hold_is_counted_by_tiktoken() -> None:
    assert bpe_count.counter("o200k_base_offline") is None
    assert not bpe_count.available("gpt2")


def loaded(stats: dict[str, Any]) -> dict[str, Any] | None:
    return stats if stats["token_table"] == "loaded" else None


@pytest.mark.parametrize("told", [None, "tiktoken"])
def test_the_server_counts_with_rs_bpe_and_says_so(workspace: Path, told: str | None) -> None:
    text = "".join(f"value_{i} = {i}  # ligne {i} 段階 😀\n" for i in range(300))
    (workspace / "a.py").write_text(text)
    env = {bpe_count.ENVIRONMENT: told} if told else {}
    server = RawServer(env=env)
    try:
        server.initialize(workspace)
        params = {"file_path": str(workspace / "a.py"), "force": True}
        file = server.request(2, "readkeeper/read", params)["result"]["file"]
        # tiktoken's table may still load (the read was counted by its index).
        asked = iter(range(3, 10**6))
        stats = wait_until(
            lambda: loaded(server.request(next(asked), "readkeeper/stats", {})["result"]),
            "the token table to load",
        )
    finally:
        server.close()
    assert file["tokens"] == tiktoken_count(file["content"])
    expected = "tiktoken " if told else f"rs-bpe {bpe_count.version()}"
    assert stats["token_counter"].startswith(expected)


def test_a_count_that_never_waited_for_tiktoken_s_table_is_exact_with_rs_bpe() -> None:
    # Change notices count with `count_now`: before the table loads it answered the
    # bytes when no index was there; rs-bpe has none, and loads in 30 ms.
    text = "def f(x):\n    return x * 2  # 段階\n" * 20
    counter = TokenCounter(keep_counts=False)
    assert not counter.loaded
    assert counter.count_now(text) == tiktoken_count(text) < len(text.encode())
