"""What the fast read paths must keep exactly as before (issue 16): ranged reads of large
files that skip to their first line by counting newline bytes show the same lines as
reading from line 1; kept views never answer for other content, settings or paths; and
the `tokens` of every text read is the exact count of its content."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest

from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import ReadParams, unstructure
from readkeeper.read.readers.text_stream import _newline_is_one_byte

LARGE = 262_144  # the default max_size_bytes: larger files are read by ranges, streamed


def text_file(core: Readkeeper, path: Path, **params: object) -> dict[str, object]:
    result = unstructure(core.read(ReadParams(file_path=str(path), **params)))  # type: ignore[arg-type]
    assert result["type"] == "text", result
    file = result["file"]
    assert isinstance(file, dict)
    return file


def expected(lines: list[str], offset: int, limit: int) -> str:
    chosen = lines[offset - 1 : offset - 1 + limit]
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(chosen, offset))


def large_lines(count: int) -> list[str]:
    # Lines of varied lengths, with non-ASCII characters and an empty line now and then.
    return [
        "" if i % 97 == 0 else f"line {i} é€ {'x' * (i % 60)} ünïcode {i * 7919 % 1000}"
        for i in range(1, count + 1)
    ]


@pytest.mark.parametrize(
    ("encoding", "bom", "newline", "final_newline"),
    [
        ("utf-8", b"", "\n", True),
        ("utf-8", codecs.BOM_UTF8, "\n", True),
        ("utf-8", b"", "\r\n", False),
        ("cp1252", b"", "\n", False),
        ("utf-16-le", codecs.BOM_UTF16_LE, "\n", True),  # newlines are two bytes: read through
    ],
)
def test_a_ranged_read_of_a_large_file_shows_the_lines_from_line_one(
    core: Readkeeper, workspace: Path, encoding: str, bom: bytes, newline: str, final_newline: bool
) -> None:
    lines = large_lines(7000)
    if encoding == "cp1252":
        lines = [line.replace("€", "e") for line in lines]
    text = newline.join(lines) + (newline if final_newline else "")
    path = workspace / "big.log"
    path.write_bytes(bom + text.encode(encoding))
    assert path.stat().st_size > LARGE
    for offset, limit in ((1, 50), (2, 3), (1234, 100), (6901, 100), (6990, 100), (7000, 5)):
        file = text_file(core, path, offset=offset, limit=limit, force=True)
        assert file["content"] == expected(lines, offset, limit), (offset, limit)
        at_end = offset + limit > len(lines)
        assert file.get("total_lines") == (len(lines) if at_end else None)
        assert file.get("next_offset") == (None if at_end else offset + limit)


def test_an_offset_past_the_end_of_a_large_file_says_how_many_lines_it_has(
    core: Readkeeper, workspace: Path
) -> None:
    for final_newline in (True, False):
        lines = large_lines(6000)
        path = workspace / f"big-{final_newline}.log"
        path.write_text("\n".join(lines) + ("\n" if final_newline else ""))
        assert path.stat().st_size > LARGE
        last = text_file(core, path, offset=6000, limit=10)
        assert last["content"] == expected(lines, 6000, 10)
        with pytest.raises(ReadkeeperError) as caught:
            core.read(ReadParams(file_path=str(path), offset=6002, limit=10))
        assert caught.value.kind == "bad_params"
        assert caught.value.data["total_lines"] == 6000


def test_long_lines_of_a_large_file_are_cut_the_same_after_a_skip(
    core: Readkeeper, workspace: Path
) -> None:
    lines = [f"{i} " + "y" * (3000 if i % 3 == 0 else 10) for i in range(1, 300)]
    path = workspace / "wide.log"
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size > LARGE
    file = text_file(core, path, offset=150, limit=6)
    shown = str(file["content"]).split("\n")
    assert len(shown) == 6
    assert shown[0] == f"   150\t150 {'y' * 1996} … [line cut: 1004 more characters]"
    assert shown[1] == f"   151\t151 {'y' * 10}"


def test_a_kept_view_answers_only_the_same_content_settings_and_path(workspace: Path) -> None:
    body = "".join(f"value_{i} = {i}  # {'z' * 40}\n" for i in range(400))
    first, second = workspace / "a.py", workspace / "b.py"
    first.write_text(body)
    second.write_text(body)
    core = Readkeeper(roots=[str(workspace)])
    narrow = Readkeeper(roots=[str(workspace)], client_settings={"max_line_chars": 20})
    a = text_file(core, first, force=True)
    assert text_file(core, first, force=True) == a
    b = text_file(core, second, force=True)
    assert b["file_path"] == str(second)
    assert b["content"] == a["content"]
    cut = text_file(narrow, first, force=True)
    assert cut["truncated_lines"] == 400
    assert cut["content"] != a["content"]
    # Another content of the same size and time: the view is kept by content, not stat.
    seen = first.stat()
    first.write_text(body.replace("value_7 ", "VALUE_7 "))
    os.utime(first, ns=(seen.st_atime_ns, seen.st_mtime_ns))
    assert first.stat().st_size == seen.st_size
    changed = text_file(core, first, force=True)
    assert "VALUE_7" in str(changed["content"])


@pytest.mark.parametrize(
    ("name", "skips"),
    [
        ("utf-8", True),
        ("cp1252", True),
        ("koi8_r", True),
        ("iso8859-5", True),
        ("utf-16-le", False),  # a newline is two bytes
        ("cp037", False),  # EBCDIC: the byte 0x0A is not a newline
        ("utf-7", False),  # shift states: a byte's meaning depends on what came before
        ("hz", False),
        ("iso2022_jp", False),
        ("shift_jis", False),  # 0x0A alone is a newline, but other bytes pair up
    ],
)
def test_lines_are_skipped_by_counting_newline_bytes_only_where_that_is_exact(
    name: str, skips: bool
) -> None:
    assert _newline_is_one_byte(name) is skips


@pytest.mark.parametrize("lines", [1, 10, 400, 2500])
def test_the_tokens_of_a_text_read_are_the_exact_count_of_its_content(
    core: Readkeeper, workspace: Path, lines: int
) -> None:
    path = workspace / f"f{lines}.txt"  # text, never an outline
    path.write_text("".join(f"def f_{i}(x):  return x ** {i}  # ok\n" for i in range(lines)))
    file = text_file(core, path)
    assert file["tokens"] == core.tokens.count(str(file["content"]))


@pytest.mark.parametrize("bom", [b"", codecs.BOM_UTF8])
def test_the_line_ending_of_a_large_file_is_judged_from_its_first_byte_after_the_bom(
    core: Readkeeper, workspace: Path, bom: bytes
) -> None:
    # Only the first line ends in CRLF: a streamed read still says the endings are mixed
    # (an edit then keeps each line's own ending), as a whole read of a small file would.
    lines = large_lines(7000)
    path = workspace / "big.log"
    path.write_bytes(bom + b"a\r\n" + "\n".join(lines).encode())
    assert path.stat().st_size > LARGE
    file = text_file(core, path, offset=1, limit=5)
    assert file["line_ending"] == "mixed"
    assert file["content"] == expected(["a", *lines], 1, 5)
