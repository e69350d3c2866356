"""The line index of large files (line_index.py): counting from a boundary it knows
finds the very line counting from the top finds, a file that changed is counted
afresh, and a file changed too recently is not indexed at all.

The index keeps only files unchanged for a while (`settles_after`), so the tests give
it a clock that says how long ago the file changed, instead of waiting.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from readkeeper.core import Readkeeper
from readkeeper.files.encodings import detect
from readkeeper.files.stamps import SETTLED_NS, settles_after
from readkeeper.protocol import ReadParams, unstructure
from readkeeper.read.readers import text_stream
from readkeeper.read.readers.line_index import KEPT_FILES, KEPT_STARTS, LineIndexes
from readkeeper.read.readers.text_stream import _SEEK_CHUNK, _line_start

UTF8 = detect(b"plain text\n", complete=True)


def long_ago(fd: int) -> int:
    """A clock for which the file changed long ago (settled)."""
    st = os.fstat(fd)
    return max(st.st_mtime_ns, st.st_ctime_ns) + 10 * SETTLED_NS


def mixed_lines(seed: int, count: int) -> bytes:
    """Lines of every length, some far longer than a chunk, and no final newline."""
    rng = random.Random(seed)
    lines = []
    for i in range(count):
        size = rng.choice([0, 1, 5, 40, 200, 3000]) if i % 500 else _SEEK_CHUNK * 2 + 7
        lines.append(f"{i}:" + "é" * (size // 2))
    return "\n".join(lines).encode()


@pytest.fixture
def big(workspace: Path) -> Iterator[tuple[int, int]]:
    """An open large file and its line count."""
    data = mixed_lines(7, 6000)
    path = workspace / "big.log"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    yield fd, data.count(b"\n") + 1
    os.close(fd)


def test_counting_from_the_index_finds_the_lines_counting_from_the_top_finds(
    big: tuple[int, int],
) -> None:
    fd, lines = big
    indexes = LineIndexes(clock=lambda: long_ago(fd))
    offsets = [2, 3, 499, 500, 501, 502, lines - 1, lines, lines + 1, lines + 50]
    offsets += random.Random(3).sample(range(2, lines), 60)
    for order in (offsets, sorted(offsets), sorted(offsets, reverse=True)):
        for offset in order:
            expected = _line_start(fd, offset, UTF8, None)
            assert _line_start(fd, offset, UTF8, indexes.for_file(fd, _SEEK_CHUNK)) == expected, (
                offset
            )
    index = indexes.for_file(fd, _SEEK_CHUNK)
    assert index is not None
    size = os.fstat(fd).st_size
    assert len(index.counts) == size // _SEEK_CHUNK  # every whole chunk was passed once
    assert index.counts == sorted(index.counts)


def test_a_changed_file_is_counted_afresh(workspace: Path) -> None:
    path = workspace / "log.txt"
    path.write_bytes(mixed_lines(1, 3000))
    fd = os.open(path, os.O_RDONLY)
    try:
        clock = [long_ago(fd)]
        indexes = LineIndexes(clock=lambda: clock[0])
        first = indexes.for_file(fd, _SEEK_CHUNK)
        assert first is not None
        _line_start(fd, 2900, UTF8, indexes.for_file(fd, _SEEK_CHUNK))
        assert first.counts
        # The same size, other lines, and (set here, so that it surely differs) mtime.
        before = os.fstat(fd)
        data = mixed_lines(2, 3000)
        data = (data + b"x" * before.st_size)[: before.st_size].replace(b"9", b"\n")
        path.write_bytes(data)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
        clock[0] = long_ago(fd)
        for offset in (2, 700, 2900, data.count(b"\n") + 1):
            assert _line_start(fd, offset, UTF8, indexes.for_file(fd, _SEEK_CHUNK)) == _line_start(
                fd, offset, UTF8, None
            )
        assert indexes.for_file(fd, _SEEK_CHUNK) is not first
    finally:
        os.close(fd)


def test_a_file_changed_lately_is_not_indexed(big: tuple[int, int]) -> None:
    fd, _ = big
    st = os.fstat(fd)
    changed, wait = max(st.st_mtime_ns, st.st_ctime_ns), settles_after(st)
    assert LineIndexes(clock=lambda: changed + wait - 1).for_file(fd, _SEEK_CHUNK) is None
    assert LineIndexes(clock=lambda: changed + wait).for_file(fd, _SEEK_CHUNK) is not None


def test_only_the_files_read_last_are_kept(workspace: Path) -> None:
    fds = []
    try:
        for i in range(KEPT_FILES + 1):
            path = workspace / f"f{i}.log"
            path.write_bytes(b"line\n" * 10)
            fds.append(os.open(path, os.O_RDONLY))
        indexes = LineIndexes(clock=lambda: long_ago(fds[-1]) + SETTLED_NS)
        first = [indexes.for_file(fd, _SEEK_CHUNK) for fd in fds]
        assert indexes.for_file(fds[-1], _SEEK_CHUNK) is first[-1]  # kept
        assert indexes.for_file(fds[1], _SEEK_CHUNK) is first[1]
        assert indexes.for_file(fds[0], _SEEK_CHUNK) is not first[0]  # the oldest, dropped
    finally:
        for fd in fds:
            os.close(fd)


def test_ranged_reads_of_a_large_file_go_through_the_index(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [f"entry {i} " + "-" * (i % 90) for i in range(40_000)]
    path = workspace / "app.log"
    path.write_text("\n".join(lines) + "\n")
    fd = os.open(path, os.O_RDONLY)
    settled = long_ago(fd)
    os.close(fd)
    indexes = LineIndexes(clock=lambda: settled)
    monkeypatch.setattr(text_stream, "INDEXES", indexes)
    for offset in (39_901, 20_000, 39_901, 5, 39_999):
        result = unstructure(
            core.read(ReadParams(file_path=str(path), offset=offset, limit=50, force=True))
        )
        shown = lines[offset - 1 : offset + 49]
        assert result["file"]["content"] == "\n".join(
            f"{n:>6}\t{line}" for n, line in enumerate(shown, offset)
        )
    fd = os.open(path, os.O_RDONLY)
    try:
        index = indexes.for_file(fd, _SEEK_CHUNK)
        assert index is not None
        assert index.counts  # the reads counted into it
    finally:
        os.close(fd)


def test_a_file_that_keeps_changing_holds_one_index_not_one_per_version(workspace: Path) -> None:
    kept = workspace / "kept.log"
    kept.write_bytes(b"line\n" * 10)
    growing = workspace / "growing.log"
    growing.write_bytes(b"")
    kept_fd, growing_fd = os.open(kept, os.O_RDONLY), os.open(growing, os.O_RDONLY)
    try:
        indexes = LineIndexes(clock=lambda: long_ago(growing_fd) + 10 * SETTLED_NS)
        first = indexes.for_file(kept_fd, _SEEK_CHUNK)
        for size in range(1, KEPT_FILES + 2):  # a log growing between its reads
            growing.write_bytes(b"x\n" * size)
            assert indexes.for_file(growing_fd, _SEEK_CHUNK) is not None
        assert indexes.for_file(kept_fd, _SEEK_CHUNK) is first  # not pushed out
    finally:
        os.close(kept_fd)
        os.close(growing_fd)


def test_a_file_that_cannot_be_stat_ed_has_no_index() -> None:
    assert LineIndexes(clock=lambda: 2**62).for_file(-1, _SEEK_CHUNK) is None  # not open


def test_a_line_found_once_is_found_again_without_reading(
    big: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repeated ranged read (a forced re-read of a log's tail, a page read again)
    finds its first line where the last read found it: no byte is read again to count."""
    fd, lines = big
    indexes = LineIndexes(clock=lambda: long_ago(fd))
    index = indexes.for_file(fd, _SEEK_CHUNK)
    assert index is not None
    offsets = [lines - 99, 2, 3000, lines + 5]  # the last one: past the end, not kept
    found = {offset: _line_start(fd, offset, UTF8, index) for offset in offsets}
    assert set(index.starts) == {lines - 100, 1, 2999}
    reads: list[int] = []
    real_pread = os.pread

    def counted_pread(fd: int, size: int, position: int) -> bytes:
        reads.append(position)
        return real_pread(fd, size, position)

    monkeypatch.setattr(os, "pread", counted_pread)
    for offset in offsets[:3]:
        assert _line_start(fd, offset, UTF8, index) == found[offset]
    assert reads == []
    for offset in offsets[:3]:  # counting from the top finds the same
        assert _line_start(fd, offset, UTF8, None) == found[offset]
    assert reads


def test_the_line_starts_kept_are_the_last_found(big: tuple[int, int]) -> None:
    fd, _ = big
    index = LineIndexes(clock=lambda: long_ago(fd)).for_file(fd, _SEEK_CHUNK)
    assert index is not None
    offsets = list(range(2, 2 + KEPT_STARTS + 10))
    for offset in offsets:
        _line_start(fd, offset, UTF8, index)
    assert list(index.starts) == [offset - 1 for offset in offsets[-KEPT_STARTS:]]


def test_a_large_file_is_sniffed_once_and_again_when_it_changes(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The encoding and line ending of a large file are judged from its first bytes
    once per version: a file rewritten with CRLF line endings shows them on its next read."""
    path = workspace / "app.log"
    path.write_bytes(b"".join(b"line %d\n" % i for i in range(60_000)))
    clock = [0]
    monkeypatch.setattr(text_stream, "INDEXES", LineIndexes(clock=lambda: clock[0]))
    sniffs: list[str] = []
    real_sniff = text_stream._sniff

    def counted_sniff(fd: int, path: str) -> tuple[Any, str]:
        sniffs.append(path)
        return real_sniff(fd, path)

    monkeypatch.setattr(text_stream, "_sniff", counted_sniff)

    def read_tail() -> dict[str, Any]:
        fd = os.open(path, os.O_RDONLY)
        clock[0] = long_ago(fd)
        os.close(fd)
        params = ReadParams(file_path=str(path), offset=59_990, limit=5, force=True)
        return unstructure(core.read(params))["file"]

    first, again = read_tail(), read_tail()
    assert first == again
    assert (first["line_ending"], first["encoding"], len(sniffs)) == ("lf", "utf-8", 1)
    path.write_bytes(b"".join(b"line %d\r\n" % i for i in range(60_000)))
    changed = read_tail()
    assert (changed["line_ending"], changed["content"], len(sniffs)) == (
        "crlf",
        first["content"],
        2,
    )


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"a\nbb\nccc", (5, 2)),  # the last line, unterminated
        (b"a\nbb\nccc\n", (9, 3)),  # the end, after the last newline
        (b"x\n" + b"y" * (3 * _SEEK_CHUNK), (2, 1)),  # chunks without a newline after it
        (b"y" * (2 * _SEEK_CHUNK), (0, 0)),  # one line, no newline at all
    ],
)
def test_past_the_last_line_is_where_the_last_line_starts(
    workspace: Path, data: bytes, expected: tuple[int, int]
) -> None:
    """A range that starts past the end finds the last line (its start, and the lines
    before it), counting from the top or from the index, fresh or resumed."""
    path = workspace / "short.log"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        index = LineIndexes(clock=lambda: long_ago(fd)).for_file(fd, _SEEK_CHUNK)
        for _ in range(2):  # the second time from the boundaries the first one passed
            assert _line_start(fd, 50, UTF8, index) == expected
            assert _line_start(fd, 50, UTF8, None) == expected
    finally:
        os.close(fd)
