"""The lines a range needs are split without splitting the rest of the text
(`text.leading_lines`, `text.line_count`), and are exactly the lines `split_lines`
gives: the same views, outlines and digests (issue 34: an outline's first lines no
longer split the whole file, twice)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from readkeeper.read.readers.text import leading_lines, line_count, split_lines

TEXTS = st.text(alphabet=st.sampled_from(["a", "b", "\n", "\r", " ", "\u2028", "é"])) | st.text(
    alphabet=st.sampled_from(["a", "\n", " "])
)


@given(TEXTS, st.integers(min_value=0, max_value=30))
def test_leading_lines_are_the_first_lines_split_lines_gives(text: str, count: int) -> None:
    assert leading_lines(text, count) == split_lines(text)[:count]


@given(TEXTS)
def test_line_count_is_the_number_of_lines_split_lines_gives(text: str) -> None:
    assert line_count(text) == len(split_lines(text))


def test_edges() -> None:
    for text in ("", "\n", "\n\n", "a", "a\n", "a\nb", "a\nb\n", "\r\n"):
        assert line_count(text) == len(split_lines(text))
        for count in range(4):
            assert leading_lines(text, count) == split_lines(text)[:count]
