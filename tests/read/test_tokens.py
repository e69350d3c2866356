"""Token counting (tokens.py): the cheap estimate (for sizing work, never sent), and the
cache that spares a re-read the exact count."""

from __future__ import annotations

import socket

import pytest

from readkeeper.read.tokens import TokenCounter, estimate_tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("abcdefgh", 2), ("é" * 4, 2), ("日本語", 3)],
)
def test_the_estimate_is_utf8_bytes_over_four_rounded_up(text: str, tokens: int) -> None:
    assert estimate_tokens(text) == tokens == -(-len(text.encode()) // 4)


def test_the_counter_has_no_estimating_count() -> None:
    # Issue 34: a result's `tokens` is counted, never bytes/4 (test_exact_kinds.py);
    # the estimate is only for sizing work before anything is sent.
    assert not hasattr(TokenCounter(), "measure")


def test_line_counts_add_up_to_the_joined_text_and_its_final_newline() -> None:
    counter = TokenCounter()
    lines = ["alpha", "beta", "gamma delta"]
    counts = counter.count_lines(lines)
    assert counts == [counter.count(line) + 1 for line in lines]
    assert sum(counts) == counter.count("\n".join(lines)) + 1


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """A tripwire on every name lookup and connection: what was tried is recorded and
    refused (here no network answers anyway; on a user's machine one would)."""
    tried: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        tried.append(args)
        raise OSError("readkeeper must not use the network")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    return tried


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "gpt2", "r50k_base"])
def test_a_public_encoding_s_name_counts_with_the_bundled_table_never_downloading(
    no_network: list[object], name: str
) -> None:
    """tiktoken fetches a public encoding's table from the internet: only the tables
    installed for offline use are ever loaded."""
    assert TokenCounter(name).count("hello world") == TokenCounter().count("hello world")
    assert no_network == []


def test_an_unknown_encoding_falls_back_to_the_bundled_table() -> None:
    # Never a download, never a crash: the offline cl100k table counts instead.
    assert TokenCounter("no-such-encoding").count("hello world") == TokenCounter().count(
        "hello world"
    )
