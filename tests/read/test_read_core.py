"""The read path of the plain-Python core: lines, caps, encodings, read-state, refusals."""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import socket
import time
from pathlib import Path

import pytest

from helpers import max_tokens_for, read, refused, text_file
from readkeeper.core import Buffer, Readkeeper
from readkeeper.errors import ReadkeeperError, shown_name
from readkeeper.protocol import EditParams, ForgetParams, ReadParams, StatsParams, WriteParams
from readkeeper.read.stub_rule import STUB_TOKENS
from readkeeper.read.tokens import estimate_tokens

# --- lines and ranges ---------------------------------------------------------------------


def test_offset_and_limit_select_lines(core: Readkeeper, workspace: Path) -> None:
    (workspace / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    file = text_file(core, "n.txt", offset=10, limit=3)
    assert file["content"] == "    10\tline 10\n    11\tline 11\n    12\tline 12"
    assert (file["start_line"], file["num_lines"], file["total_lines"]) == (10, 3, 100)
    assert file["partial"] is False
    assert file["next_offset"] == 13


def test_whole_read_stops_at_default_limit_and_says_where_to_go_on(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "n.txt").write_text("x\n" * 2500)
    file = text_file(core, "n.txt")
    assert file["num_lines"] == 2000
    assert file["partial"] is True
    assert file["next_offset"] == 2001
    assert file["note"] == (
        "Showing lines 1-2000 of 2500 (a read returns at most 2000 lines unless it asks "
        "for more). Continue with offset=2001."
    )


def test_offset_zero_and_past_the_end_are_refused(core: Readkeeper, workspace: Path) -> None:
    (workspace / "n.txt").write_text("a\nb\n")
    zero = refused(core, "n.txt", offset=0)
    assert (zero.kind, zero.data["field"]) == ("bad_params", "offset")
    assert zero.message.startswith("offset must be 1 or more (the first line is 1), got 0. ")
    assert zero.message.endswith("From the top: offset=1.")  # the same read from line 1
    error = refused(core, "n.txt", offset=9)
    assert error.kind == "bad_params"
    assert error.data["field"] == "offset"
    assert error.message.endswith("To see its end: offset=1.")  # the same read, from there
    (workspace / "one.txt").write_text("a\n")
    assert refused(core, "one.txt", offset=2).kind == "bad_params"


def test_past_the_end_advises_the_offset_that_shows_the_last_page(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"default_limit": 5})
    (workspace / "n.txt").write_text("".join(f"{i}\n" for i in range(1, 11)))
    error = refused(core, "n.txt", offset=20)
    assert error.message.endswith("which has 10 lines. To see its end: offset=6.")
    assert text_file(core, "n.txt", offset=6)["num_lines"] == 5  # lines 6-10: the end
    # The agent's own limit is kept: the way on is the same read from another offset
    # (round 28: a call naming the offset alone dropped it, and was refused token_limit).
    error = refused(core, "n.txt", offset=20, limit=3)
    assert error.message.endswith("To see its end: offset=8.")
    assert text_file(core, "n.txt", offset=8, limit=3)["num_lines"] == 3


@pytest.mark.parametrize("count", [600, 3000])  # read whole, and streamed (over 256 KB)
def test_past_the_end_of_long_lines_names_a_read_within_the_cap(
    core: Readkeeper, workspace: Path, count: int
) -> None:
    # Hundreds of lines of 400 characters are over 25,000 tokens: "To see its end" named
    # them all, refused token_limit (round 33). The way on is the last lines that fit.
    lines = [f"{i} " + " ".join(f"w{i}x{j}" for j in range(60)) for i in range(1, count + 1)]
    (workspace / "long.txt").write_text("\n".join(lines) + "\n")
    error = refused(core, "long.txt", offset=5000)
    end = int(error.message.rsplit("offset=", 1)[1].rstrip("."))
    shown = text_file(core, "long.txt", offset=end)
    assert shown["start_line"] + shown["num_lines"] - 1 == count, shown["num_lines"]
    assert shown["content"].endswith(lines[-1])
    # Not many fewer than fit (test_longest_tail.py checks the most exactly).
    assert refused(core, "long.txt", offset=end - 40, limit=count + 41 - end).kind == "token_limit"


@pytest.mark.parametrize("line_format", ["cat-n", "anchors"])
def test_past_the_end_names_a_read_of_the_end_in_either_line_format(
    core: Readkeeper, workspace: Path, line_format: str
) -> None:
    # CRLF lines of runs of x: the last 2,000 are over the cap, and a tail that just fit
    # as `cat -n` was over it with anchors (round 33: it stopped 15 lines short).
    lines = [f"crlf {i} " + "x" * (i % 61) for i in range(1, 30001)]
    (workspace / "mid.txt").write_bytes(("\r\n".join(lines) + "\r\n").encode())
    error = refused(core, "mid.txt", offset=99999, line_format=line_format)
    end = int(error.message.rsplit("offset=", 1)[1].rstrip("."))
    shown = text_file(core, "mid.txt", offset=end, line_format=line_format)
    assert shown["start_line"] + shown["num_lines"] - 1 == 30000, shown.get("note")
    assert not shown.get("partial"), shown.get("note")


@pytest.mark.parametrize("offset", [None, 3])
def test_a_first_line_alone_over_the_cap_is_refused_not_shown_as_nothing(
    workspace: Path, offset: int | None
) -> None:
    # A whole read, or one from an offset, whose first line alone was over the cap
    # answered 0 lines ("lines 3-2") and named the same offset again (round 34).
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_tokens": 300})
    (workspace / "wide.txt").write_text(
        "".join(" ".join(f"w{i}x{j}" for j in range(300)) + "\n" for i in range(9))
    )
    error = refused(core, "wide.txt", offset=offset)
    assert error.kind == "token_limit"
    assert f"Line {offset or 1} alone is over the cap" in error.message, error.message


def test_empty_file_has_no_lines(core: Readkeeper, workspace: Path) -> None:
    (workspace / "empty.txt").write_bytes(b"")
    file = text_file(core, "empty.txt")
    assert (file["content"], file["num_lines"], file["total_lines"]) == ("", 0, 0)
    assert file["note"] == "The file is empty."


def test_long_lines_are_cut_with_a_marker(core: Readkeeper, workspace: Path) -> None:
    (workspace / "min.js").write_text("a" * 5000 + "\nshort\n")
    file = text_file(core, "min.js")
    first, second = str(file["content"]).split("\n")
    assert first == "     1\t" + "a" * 2000 + " … [line cut: 3000 more characters]"
    assert second == "     2\tshort"
    assert file["truncated_lines"] == 1


# --- encodings and line endings -------------------------------------------------------------


def test_crlf_file_shows_clean_lines_and_says_crlf(core: Readkeeper, workspace: Path) -> None:
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    file = text_file(core, "w.txt")
    assert file["content"] == "     1\tone\n     2\ttwo"
    assert file["line_ending"] == "crlf"


def test_mixed_line_endings_are_reported(core: Readkeeper, workspace: Path) -> None:
    (workspace / "m.txt").write_bytes(b"one\r\ntwo\nthree\n")
    assert text_file(core, "m.txt")["line_ending"] == "mixed"


BOMS = [
    ("utf-8", codecs.BOM_UTF8, "utf-8-bom"),
    ("utf-16-le", codecs.BOM_UTF16_LE, "utf-16-le-bom"),
    ("utf-16-be", codecs.BOM_UTF16_BE, "utf-16-be-bom"),
    ("utf-32-le", codecs.BOM_UTF32_LE, "utf-32-le-bom"),
]


@pytest.mark.parametrize(("codec", "bom", "label"), BOMS)
def test_unicode_files_with_a_bom(
    core: Readkeeper, workspace: Path, codec: str, bom: bytes, label: str
) -> None:
    (workspace / "u.txt").write_bytes(bom + "héllo\r\nwörld ✓\r\n".encode(codec))
    file = text_file(core, "u.txt")
    assert file["content"] == "     1\théllo\n     2\twörld ✓"
    assert file["encoding"] == label
    assert file["line_ending"] == "crlf"


@pytest.mark.parametrize(("codec", "bom", "label"), BOMS)
def test_unicode_files_with_a_bom_over_the_size_limit_read_in_ranges(
    workspace: Path, codec: str, bom: bytes, label: str
) -> None:
    # Streamed: the byte-order mark is not a character of the first line.
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_size_bytes": 20})
    (workspace / "u.txt").write_bytes(bom + "héllo\r\nwörld ✓\r\nend\r\n".encode(codec))
    file = text_file(core, "u.txt", offset=1, limit=2)
    assert file["content"] == "     1\théllo\n     2\twörld ✓"
    assert file["encoding"] == label
    assert text_file(core, "u.txt", offset=2, limit=1)["content"] == "     2\twörld ✓"


def test_legacy_encoding_is_decoded_and_named(core: Readkeeper, workspace: Path) -> None:
    text = "Le café était très animé ce soir-là, déjà complet à huit heures.\n" * 4
    (workspace / "latin.txt").write_bytes(text.encode("latin-1"))
    file = text_file(core, "latin.txt")
    assert "café était très animé" in str(file["content"])
    assert "\ufffd" not in str(file["content"])
    assert file["encoding"] != "utf-8"


def test_nul_bytes_mean_binary(core: Readkeeper, workspace: Path) -> None:
    (workspace / "blob.bin").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4)
    error = refused(core, "blob.bin")
    assert error.kind == "binary"
    assert "NUL" in error.message


def test_undecodable_bytes_mean_binary_not_replacement_characters(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "noise.dat").write_bytes(bytes([0x81, 0x8D, 0x8F, 0x90, 0x9D, 0x01, 0x02]) * 300)
    assert refused(core, "noise.dat").kind == "binary"


# --- token budget -------------------------------------------------------------------------


def test_whole_read_over_the_token_cap_returns_the_longest_prefix_that_fits(
    workspace: Path,
) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_tokens": 2000})
    (workspace / "log.txt").write_text(
        "".join(f"{i:05d} {os.urandom(12).hex()} event\n" for i in range(1000))
    )
    file = text_file(core, "log.txt")
    assert file["partial"] is True
    assert isinstance(file["tokens"], int)
    assert file["tokens"] <= 2000
    assert core.tokens.count(str(file["content"])) <= 2000
    next_offset = file["next_offset"]
    assert next_offset == int(file["num_lines"]) + 1  # type: ignore[call-overload]
    assert f"offset={next_offset}" in str(file["note"])
    assert "tokens, over the 2,000-token cap)" in str(file["note"])
    # The continuation the note suggests works as given: the offset alone, cut at the
    # cap in its turn (never refused), naming the next.
    assert str(file["note"]).endswith(f"Continue with offset={next_offset}.")
    follow = text_file(core, "log.txt", offset=next_offset)
    assert follow["start_line"] == next_offset
    assert 0 < int(follow["tokens"]) <= 2000  # type: ignore[call-overload]
    assert str(follow["note"]).endswith(f"Continue with offset={follow['next_offset']}.")


def test_the_continuation_a_cut_read_suggests_fits_when_the_lines_after_cost_more(
    workspace: Path,
) -> None:
    # Cheap lines first, dear ones after: "as many lines again" would be refused; the
    # offset alone is cut at the cap.
    cheap = "ok\n" * 600
    dear = "".join(hashlib.sha256(str(i).encode()).hexdigest() + "\n" for i in range(600))
    (workspace / "log.txt").write_text(cheap + dear)
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_tokens": 2000})
    core.tokens.warm_up()
    file = text_file(core, "log.txt")
    assert file["partial"] is True
    follow = text_file(core, "log.txt", offset=file["next_offset"])
    assert follow["start_line"] == file["next_offset"]
    assert 0 < int(follow["tokens"]) <= 2000  # type: ignore[call-overload]
    assert follow["partial"] is True


def test_a_whole_read_of_exactly_the_token_cap_is_read_whole(workspace: Path) -> None:
    # Its lines and what is sent with them (its header: read/room.py) come to the cap.
    (workspace / "log.txt").write_text("".join(f"request {i} ok\n" for i in range(1, 200)))
    first = Readkeeper(roots=[str(workspace)])
    tokens = first.tokens.count(str(text_file(first, "log.txt")["content"]))  # exact
    cap = max_tokens_for(tokens, workspace / "log.txt", rest=False)
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_tokens": cap})
    file = text_file(core, "log.txt")
    assert (file["num_lines"], file["tokens"]) == (199, tokens)
    assert not file.get("partial")
    assert "next_offset" not in file  # nothing after the last line
    assert "note" not in file
    under = Readkeeper(roots=[str(workspace)], client_settings={"max_tokens": cap - 1})
    assert text_file(under, "log.txt")["partial"] is True


def test_ranged_read_over_the_cap_is_refused_with_a_limit_that_fits(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_tokens": 2000})
    (workspace / "log.txt").write_text(
        "".join(f"{i:05d} {os.urandom(12).hex()} event\n" for i in range(1000))
    )
    error = refused(core, "log.txt", offset=100, limit=900)
    assert error.kind == "token_limit"
    largest = error.data["largest_limit"]
    assert 0 < largest < 900
    assert f"offset=100, limit={largest}." in error.message
    assert "limit=900" not in error.message  # never the call that just failed
    fits = text_file(core, "log.txt", offset=100, limit=largest)
    assert fits["num_lines"] == largest


def test_small_results_are_counted_exactly(core: Readkeeper, workspace: Path) -> None:
    # Far under the cap too: the bytes/4 estimate is 10-18% under the count on real
    # code, and an agent budgets with this field (issue 16).
    (workspace / "s.txt").write_text("short line\n" * 10)
    file = text_file(core, "s.txt")
    assert file["tokens"] == core.tokens.count(str(file["content"]))
    assert file["tokens"] != estimate_tokens(str(file["content"]))


def test_results_near_the_cap_are_counted_exactly(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_tokens": 2000})
    # About 1,100 estimated tokens: over a quarter of the cap, so counted exactly.
    (workspace / "m.txt").write_text("".join(f"entry {i} ok\n" for i in range(300)))
    file = text_file(core, "m.txt")
    content = str(file["content"])
    assert estimate_tokens(content) >= 2000 // 4
    assert file["tokens"] == core.tokens.count(content)
    assert file["tokens"] != estimate_tokens(content)


# --- size limits and huge files -------------------------------------------------------------


def test_sparse_gigabyte_file_is_refused_fast_with_a_range_to_try(
    core: Readkeeper, workspace: Path
) -> None:
    huge = workspace / "huge.log"
    with open(huge, "wb") as f:
        f.truncate(1 << 30)
    error = refused(core, huge)
    assert error.kind == "too_large"
    assert error.data["size"] == 1 << 30
    assert "1073741824 bytes" in error.message
    assert "(offset=1, limit=" in error.message


def test_ranged_read_of_a_file_over_the_size_limit_streams_just_that_range(
    core: Readkeeper, workspace: Path
) -> None:
    big = workspace / "big.log"
    with open(big, "w") as f:
        for i in range(1, 200_001):
            f.write(f"request {i} ok\n")
    assert big.stat().st_size > core.settings.max_size_bytes
    file = text_file(core, big, offset=150_000, limit=2)
    assert file["content"] == "150000\trequest 150000 ok\n150001\trequest 150001 ok"
    assert file["next_offset"] == 150_002
    assert file["total_lines"] is None  # stopped before the end: unknown, not guessed
    last = text_file(core, big, offset=199_999, limit=10)
    assert last["num_lines"] == 2
    assert last["total_lines"] == 200_000
    assert "next_offset" not in last


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs Linux's /proc/self/io")
def test_a_streamed_range_stops_reading_at_its_last_line(core: Readkeeper, workspace: Path) -> None:
    big = workspace / "big.log"
    with open(big, "w") as f:
        f.writelines(f"request {i} ok\n" for i in range(1, 1_000_001))  # 19 MB

    def bytes_read() -> int:  # by this process, through any descriptor
        with open("/proc/self/io") as io:
            return int(next(line for line in io if line.startswith("rchar:")).split()[1])

    (workspace / "small.txt").write_text("warm up\n")
    text_file(core, "small.txt")  # the tokenizer's files are read once, before
    before = bytes_read()
    file = text_file(core, big, offset=10, limit=2)
    assert file["content"] == "    10\trequest 10 ok\n    11\trequest 11 ok"
    assert bytes_read() - before < 4 << 20  # its buffers' worth, not the whole file


def test_a_huge_single_line_is_skimmed_not_held(core: Readkeeper, workspace: Path) -> None:
    big = workspace / "one-line.json"
    with open(big, "w") as f:
        f.write("[" + "1," * 3_000_000 + "1]\nsecond line\n")
    file = text_file(core, big, offset=1, limit=2)
    first, second = str(file["content"]).split("\n")
    assert first.endswith(f"[line cut: {6_000_003 - 2000} more characters]")
    assert second == "     2\tsecond line"
    assert file["truncated_lines"] == 1


def test_a_streamed_range_is_whole_and_counts_a_cut_without_the_cr(workspace: Path) -> None:
    core = Readkeeper(
        roots=[str(workspace)], client_settings={"max_size_bytes": 100, "max_line_chars": 10}
    )
    big = workspace / "crlf.log"
    big.write_bytes(
        b"a" * 11
        + b"\r\n"
        + b"short\r\n"
        + b"b" * 12
        + b"\r\n"
        + b"c" * 20
        + b"\r\n"
        # A line whose CR ends one chunk of what is skimmed, and its LF starts the next.
        + b"d" * (12 + 65535)
        + b"\r\n"
        + b"x\r\n" * 50
    )
    file = text_file(core, big, offset=1, limit=2)
    # One character over the cap: the CR before the LF is not a character of the line.
    assert file["content"] == "     1\taaaaaaaaaa … [line cut: 1 more character]\n     2\tshort"
    assert file["truncated_lines"] == 1
    assert not file.get("partial")  # the agent got every line it asked for
    assert file["next_offset"] == 3
    # Nor when the CR is past the characters a streamed line keeps (the cap and two).
    file = text_file(core, big, offset=3, limit=2)
    assert file["content"] == (
        "     3\tbbbbbbbbbb … [line cut: 2 more characters]\n"
        "     4\tcccccccccc … [line cut: 10 more characters]"
    )
    file = text_file(core, big, offset=5, limit=1)
    assert file["content"] == f"     5\tdddddddddd … [line cut: {2 + 65535} more characters]"
    error = refused(core, big, offset=1_000, limit=2)
    assert error.kind == "bad_params"
    assert error.message.endswith("which has 55 lines. To see its end: offset=54.")


def test_a_streamed_range_past_the_end_advises_the_last_page(workspace: Path) -> None:
    core = Readkeeper(
        roots=[str(workspace)], client_settings={"max_size_bytes": 100, "default_limit": 5}
    )
    big = workspace / "big.log"
    big.write_text("".join(f"line {i:02d}\n" for i in range(1, 53)))  # 52 lines, 416 bytes
    error = refused(core, big, offset=60, limit=2)
    assert error.message.endswith("which has 52 lines. To see its end: offset=51.")


def test_a_streamed_range_of_exactly_the_token_cap_is_read(workspace: Path) -> None:
    big = workspace / "big.log"
    big.write_text("".join(f"request {i} ok\n" for i in range(1, 200)))
    settings = {"max_size_bytes": 100}
    first = Readkeeper(roots=[str(workspace)], client_settings=settings)
    tokens = first.tokens.count(str(text_file(first, big, limit=30)["content"]))  # exact
    # Its total unknown, a streamed range names the rest: its way on's room is kept too.
    cap = max_tokens_for(tokens, big, rest=True, limit=30)
    core = Readkeeper(roots=[str(workspace)], client_settings={**settings, "max_tokens": cap})
    file = text_file(core, big, limit=30)
    assert (file["num_lines"], file["tokens"]) == (30, tokens)
    over = Readkeeper(
        roots=[str(workspace)],
        client_settings={**settings, "max_tokens": max_tokens_for(tokens - 1, big, True, limit=30)},
    )
    error = refused(over, big, limit=30)
    assert error.kind == "token_limit"
    assert error.message.startswith(f"Lines 1-30 of {big} come to ")


def test_a_streamed_range_notes_only_the_bytes_it_could_not_decode(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_size_bytes": 100})
    big = workspace / "big.log"
    # Past the 64 KiB the encoding is guessed from, two bytes that are not UTF-8.
    big.write_bytes(b"fine\n" * 20_000 + "café \xff\xfe\n".encode("latin-1") + b"end\n")
    clean = text_file(core, big, offset=1, limit=1)
    assert clean["content"] == "     1\tfine"
    assert "note" not in clean
    assert "truncated_lines" not in clean  # no line was cut
    bad = text_file(core, big, offset=20_001, limit=1)
    assert bad["content"] == " 20001\tcaf\ufffd \ufffd\ufffd"
    assert bad["note"] == "3 bytes in these lines are not valid utf-8 and are shown as U+FFFD."


def test_a_streamed_range_whose_sample_ends_inside_a_character_is_still_utf8(
    workspace: Path,
) -> None:
    # The encoding is guessed from the first 64 KiB, which can end in the middle of a
    # character: that cut is the sample's, not the file's.
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_size_bytes": 100})
    big = workspace / "big.log"
    big.write_bytes(b"a" * 65_535 + "é\ncafé\n".encode() + b"more\n" * 50)
    file = text_file(core, big, offset=2, limit=1)
    assert (file["encoding"], file["content"]) == ("utf-8", "     2\tcafé")


def test_a_streamed_range_of_a_binary_file_is_refused_as_binary(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_size_bytes": 100})
    (workspace / "blob.bin").write_bytes(bytes(range(256)) * 4)
    error = refused(core, "blob.bin", offset=1, limit=5)
    assert error.kind == "binary"


def test_a_streamed_range_ending_in_a_long_line_without_a_newline_ends(workspace: Path) -> None:
    core = Readkeeper(
        roots=[str(workspace)], client_settings={"max_size_bytes": 100, "max_line_chars": 10}
    )
    big = workspace / "tail.log"
    # A line that fills what a streamed read keeps of a line (the cap and two) with its
    # LF, then a cut last line with no LF.
    big.write_bytes(b"x\n" * 60 + b"y" * 11 + b"\n" + b"z" * 30)
    file = text_file(core, big, offset=60, limit=5)
    assert file["content"] == (
        "    60\tx\n"
        "    61\tyyyyyyyyyy … [line cut: 1 more character]\n"
        "    62\tzzzzzzzzzz … [line cut: 20 more characters]"
    )
    assert "next_offset" not in file  # the end of the file


def test_a_read_with_no_cut_line_reports_none(core: Readkeeper, workspace: Path) -> None:
    (workspace / "a.txt").write_text("short\nlines\n")
    assert text_file(core, "a.txt").get("truncated_lines") is None


def test_a_line_of_exactly_the_line_cap_is_not_cut(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_line_chars": 10})
    (workspace / "a.txt").write_text("a" * 10 + "\n" + "b" * 11 + "\n")
    file = text_file(core, "a.txt")
    assert file["content"] == (
        "     1\taaaaaaaaaa\n     2\tbbbbbbbbbb … [line cut: 1 more character]"
    )
    assert file["truncated_lines"] == 1


# --- what is not a regular file -------------------------------------------------------------


def test_directory(core: Readkeeper, workspace: Path) -> None:
    (workspace / "src").mkdir()
    error = refused(core, "src")
    assert error.kind == "is_directory"
    assert "readkeeper/list" in error.message


def test_the_root_itself_is_a_directory_to_read_edit_and_write(
    core: Readkeeper, workspace: Path
) -> None:
    # The root is located apart from the paths beneath it (no folder, no name): each
    # operation on it still opens it beneath its own descriptor and says what it is.
    for call in (
        lambda: core.read(ReadParams(file_path=str(workspace))),
        lambda: core.edit(EditParams(str(workspace), "a", "b")),
        lambda: core.write(WriteParams(str(workspace), "x")),
    ):
        with pytest.raises(ReadkeeperError) as caught:
            call()
        assert caught.value.kind == "is_directory"


def test_fifo_with_no_writer_does_not_block(core: Readkeeper, workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    error = refused(core, "pipe")  # a hang fails the test by its timeout
    assert error.kind == "unsupported"
    assert "FIFO" in error.message


def test_unix_socket(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        error = refused(core, path)
    assert error.kind == "unsupported"
    assert "socket" in error.message


def test_a_name_too_long_for_any_file_is_bad_params_naming_the_limit(
    core: Readkeeper, workspace: Path
) -> None:
    # By its text, as every tool judges it (files/reach.py too_long): no file is there.
    error = refused(core, "a" * 300 + ".txt")
    assert error.kind == "bad_params"
    # The name itself is shown cut in its middle, as every name too long to show whole.
    assert error.message.startswith(
        f"{shown_name(workspace / ('a' * 300 + '.txt'))} is longer than any file's path can "
        "be: each "
        "name is at most 255 bytes, and the whole path at most 4,095"
    )


def test_device_is_refused_before_reading(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"allowed_paths": ["/dev"]})
    for device in ("/dev/zero", "/dev/urandom"):
        error = refused(core, device)
        assert error.kind == "unsupported"
        assert "character device" in error.message


# --- paths --------------------------------------------------------------------------------


def test_missing_file_suggests_near_names_and_names_the_root(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "inventory.py").write_text("x = 1\n")
    error = refused(core, "src/inventroy.py")
    assert error.kind == "not_found"
    assert error.data["suggestions"][0] == str(workspace / "src" / "inventory.py")
    assert str(workspace) in error.message


def test_missing_file_in_the_wrong_folder_finds_it_elsewhere(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "pkg" / "deep").mkdir(parents=True)
    (workspace / "pkg" / "deep" / "settings.toml").write_text("a = 1\n")
    error = refused(core, "settings.toml")
    assert str(workspace / "pkg" / "deep" / "settings.toml") in error.data["suggestions"]


def test_macos_screenshot_name_with_narrow_no_break_space(
    core: Readkeeper, workspace: Path
) -> None:
    real = workspace / "Screenshot 2026-11-30 at 10.21.33\u202fPM.txt"
    real.write_text("found\n")
    file = text_file(core, "Screenshot 2026-11-30 at 10.21.33 PM.txt")
    assert file["file_path"] == str(real)


def test_symlink_escaping_the_workspace_is_refused(
    core: Readkeeper, workspace: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("token=hunter2\n")
    (workspace / "link.txt").symlink_to(secret)
    error = refused(core, "link.txt")
    assert error.kind == "outside_workspace"
    assert error.data["link_target"] == str(secret)  # the link's own text, nothing resolved
    assert "hunter2" not in error.message


def test_symlink_inside_the_workspace_reads_the_target(core: Readkeeper, workspace: Path) -> None:
    (workspace / "real.txt").write_text("target\n")
    (workspace / "alias.txt").symlink_to(workspace / "real.txt")
    assert text_file(core, "alias.txt")["file_path"] == str(workspace / "real.txt")


def test_allowed_paths_open_a_folder_outside_the_roots(workspace: Path, tmp_path: Path) -> None:
    other = tmp_path / "shared-docs"
    other.mkdir()
    (other / "guide.md").write_text("# Guide\n")
    core = Readkeeper(roots=[str(workspace)], client_settings={"allowed_paths": [str(other)]})
    assert text_file(core, other / "guide.md")["content"] == "     1\t# Guide"


def test_session_grant_allows_a_file_outside_for_that_session_only(
    core: Readkeeper, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "notes.txt"
    outside.write_text("n\n")
    core.workspace.grant("agent-1", str(outside))
    assert text_file(core, outside, session="agent-1")["num_lines"] == 1
    assert refused(core, outside, session="agent-2").kind == "outside_workspace"


# --- read-state: stubs ----------------------------------------------------------------------


def test_stub_rules(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("one\ntwo\nthree\n")
    assert read(core, path)["type"] == "text"
    assert read(core, path)["type"] == "file_unchanged"
    # another range is another view
    assert read(core, path, offset=2, limit=1)["type"] == "text"
    assert read(core, path, offset=2, limit=1)["type"] == "file_unchanged"
    # another session has seen nothing
    assert read(core, path, session="other")["type"] == "text"
    # force bypasses the stub
    assert read(core, path, force=True)["type"] == "text"


def test_touch_and_identical_rewrite_still_stub(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("same\n")
    read(core, path)
    future = time.time() + 100
    os.utime(path, (future, future))
    assert read(core, path)["type"] == "file_unchanged"
    path.write_text("same\n")
    assert read(core, path)["type"] == "file_unchanged"


def test_changed_content_is_never_a_stub_even_with_the_same_size_and_mtime(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.txt"
    path.write_text("aaaa\n")
    read(core, path)
    stat = path.stat()
    path.write_text("bbbb\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # a 2-second-mtime filesystem
    result = read(core, path)
    assert result["type"] == "text"
    assert "bbbb" in str(result["file"]["content"])  # type: ignore[index]


def test_forget_drops_the_read_state(core: Readkeeper, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\n")
    (workspace / "b.txt").write_text("b\n")
    read(core, "a.txt")
    read(core, "b.txt")
    assert core.forget(ForgetParams(paths=["a.txt"]))["forgotten"] == 1
    assert read(core, "a.txt")["type"] == "text"
    assert read(core, "b.txt")["type"] == "file_unchanged"
    assert core.forget(ForgetParams())["forgotten"] == 2
    assert read(core, "b.txt")["type"] == "text"


def test_ranged_view_of_a_huge_file_stubs_until_the_range_changes(
    core: Readkeeper, workspace: Path
) -> None:
    big = workspace / "big.log"
    big.write_text("".join(f"entry {i}\n" for i in range(60_000)))
    assert read(core, big, offset=10, limit=5)["type"] == "text"
    assert read(core, big, offset=10, limit=5)["type"] == "file_unchanged"
    with open(big, "r+") as f:  # a change outside the range seen
        f.seek(len("entry 0\n") * 3)
        f.write("ENTRY 3\n")
    assert read(core, big, offset=10, limit=5)["type"] == "file_unchanged"
    text = big.read_text().replace("entry 11\n", "entry XX\n")
    big.write_text(text)
    assert read(core, big, offset=10, limit=5)["type"] == "text"


@pytest.mark.parametrize(
    ("codec", "text"),
    [
        ("latin-1", "naïve café\n"),
        ("latin-1", "Größe\n"),
        ("cp1252", 'x = "é"  # one accented letter\n'),
        ("cp1251", "Привет, как дела?\n"),
        ("cp1253", "Καλημέρα κόσμε\n"),
        ("shift_jis", "これは日本語です\n"),
    ],
)
def test_short_legacy_files_decode_to_the_right_letters(
    core: Readkeeper, workspace: Path, codec: str, text: str
) -> None:
    (workspace / "short.txt").write_bytes(text.encode(codec))
    assert text_file(core, "short.txt")["content"] == f"     1\t{text.rstrip()}"


def test_pdf_only_params_on_a_text_file_are_bad_params(core: Readkeeper, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("a\nb\n")
    for field, params in (("pages", {"pages": "1-2"}), ("render", {"render": True})):
        error = refused(core, "notes.txt", **params)
        assert error.kind == "bad_params"
        assert error.data["field"] == field
        assert error.message.startswith(f"{field} applies to PDFs")
        assert error.message.endswith('.txt", "offset": 1, "limit": 200}.'), error.message


def test_a_file_of_exactly_the_size_limit_is_read_whole(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_size_bytes": 100})
    lines = "".join(f"line {i:03d}\n" for i in range(10))  # 9 bytes a line: 90
    (workspace / "exact.txt").write_text(lines + "x" * 10)  # 100 bytes, to the last one
    file = text_file(core, "exact.txt")
    assert file["num_lines"] == 11
    assert str(file["content"]).endswith("    11\txxxxxxxxxx")
    (workspace / "over.txt").write_text(lines + "x" * 11)  # 101 bytes
    assert refused(core, "over.txt").kind == "too_large"


def test_an_image_is_read_by_its_reader_and_stubbed(core: Readkeeper, workspace: Path) -> None:
    from PIL import Image

    Image.new("RGB", (4, 3), (200, 30, 30)).save(workspace / "dot.png")
    result = read(core, "dot.png")
    assert result["type"] == "image"
    assert result["file"]["dimensions"]["original_width"] == 4  # type: ignore[index]
    assert read(core, "dot.png")["type"] == "file_unchanged"


def test_stats_count_reads_and_what_stubs_saved(core: Readkeeper, workspace: Path) -> None:
    (workspace / "long.txt").write_text("".join(f"line number {i}\n" for i in range(200)))
    (workspace / "tiny.txt").write_text("x\n")
    first = text_file(core, "long.txt")
    stats = core.stats_for(StatsParams(""))["session"]
    assert (stats["reads"], stats["dedup_hits"]) == (1, 0)
    assert stats["tokens_returned"] == first["tokens"]
    assert read(core, "long.txt")["type"] == "file_unchanged"
    stats = core.stats_for(StatsParams(""))["session"]
    assert (stats["reads"], stats["dedup_hits"]) == (2, 1)
    # What the stub saved: the content's tokens, less what the stub itself costs.
    assert stats["tokens_saved_by_stubs"] == int(str(first["tokens"])) - STUB_TOKENS
    text_file(core, "tiny.txt")
    read(core, "tiny.txt")  # a stub bigger than the file saves nothing, never less
    stats = core.stats_for(StatsParams(""))["session"]
    assert stats["tokens_saved_by_stubs"] == int(str(first["tokens"])) - STUB_TOKENS
    # Nothing was cut by a budget so far, a ranged read of a huge file cuts nothing either.
    with open(workspace / "huge.log", "w") as f:
        f.writelines(f"entry {i}\n" for i in range(40_000))
    text_file(core, "huge.log", offset=5, limit=3)
    stats = core.stats_for(StatsParams(""))["session"]
    assert (stats["reads"], stats["tokens_saved_by_budgets"]) == (5, 0)
    # A whole read cut at the line default kept the rest from the agent.
    (workspace / "n.txt").write_text("x\n" * 2500)
    assert text_file(core, "n.txt")["num_lines"] == 2000
    stats = core.stats_for(StatsParams(""))["session"]
    assert stats["tokens_saved_by_budgets"] == estimate_tokens("\n".join(["x"] * 500))


def test_stats_count_what_an_outline_sent_and_kept_back_and_what_its_stub_saved(
    workspace: Path,
) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"outline_over_tokens": 50})
    core.tokens.warm_up()
    source = "".join(f"def function_{i}(value):\n    return value + {i}\n\n\n" for i in range(40))
    (workspace / "mod.py").write_text(source)
    first = read(core, "mod.py")
    assert first["type"] == "outline"
    tokens = first["file"]["tokens"]
    stats = core.stats_for(StatsParams(""))["session"]
    assert stats["tokens_returned"] == tokens
    # What the outline kept from the agent: the file's lines, less the outline.
    assert stats["tokens_saved_by_budgets"] == first["file"]["file_tokens"] - tokens > 0
    assert read(core, "mod.py")["type"] == "file_unchanged"
    saved = core.stats_for(StatsParams(""))["session"]["tokens_saved_by_stubs"]
    assert saved == tokens - STUB_TOKENS > 0


def test_an_outline_that_costs_more_than_the_lines_counts_nothing_kept_back(
    workspace: Path,
) -> None:
    # With a threshold this low, the outline and its note cost more than the two short
    # functions' lines: the agent was kept from nothing, so nothing is counted as saved.
    core = Readkeeper(roots=[str(workspace)], client_settings={"outline_over_tokens": 10})
    core.tokens.warm_up()
    (workspace / "mod.py").write_text("def a():\n    return 1\n\n\ndef b():\n    return 2\n")
    file = read(core, "mod.py")["file"]
    assert file["tokens"] > file["file_tokens"]
    assert core.stats_for(StatsParams(""))["session"]["tokens_saved_by_budgets"] == 0


def test_a_file_named_with_a_trailing_slash_is_not_found(core: Readkeeper, workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\n")
    with pytest.raises(ReadkeeperError) as caught:
        core.read(ReadParams(file_path="a.txt/"))
    assert caught.value.kind == "not_found"
    assert caught.value.data["suggestions"] == [str(workspace / "a.txt")]


NOTEBOOK = json.dumps(
    {
        "cells": [
            {
                "cell_type": "code",
                "id": "c1",
                "source": "print(1)",
                "metadata": {},
                "outputs": [],
                "execution_count": None,
            }
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
)


def test_documents_over_the_document_limit_are_refused(workspace: Path) -> None:
    (workspace / "nb.ipynb").write_text(NOTEBOOK)
    size = len(NOTEBOOK.encode())
    fits = Readkeeper(roots=[str(workspace)], client_settings={"max_document_bytes": size})
    assert read(fits, "nb.ipynb")["type"] == "notebook"
    over = Readkeeper(roots=[str(workspace)], client_settings={"max_document_bytes": size - 1})
    error = refused(over, "nb.ipynb")
    assert error.kind == "too_large"


class OneBuffer:
    """An editor with one open document."""

    def __init__(self, path: Path, text: str, version: int) -> None:
        self.path, self.buffer = str(path), Buffer(text, version)

    def get(self, real_path: str) -> Buffer | None:
        return self.buffer if real_path == self.path else None


def test_an_unsaved_notebook_is_read_from_the_editor_and_stubbed(workspace: Path) -> None:
    path = workspace / "nb.ipynb"
    path.write_text(NOTEBOOK)
    unsaved = NOTEBOOK.replace("print(1)", "print(2)")
    core = Readkeeper(roots=[str(workspace)], buffers=OneBuffer(path, unsaved, 3))
    result = read(core, path)
    file = result["file"]
    assert result["type"] == "notebook"
    assert (file["unsaved"], file["buffer_version"]) == (True, 3)
    assert "print(2)" in json.dumps(file)
    assert "print(1)" not in json.dumps(file)
    assert read(core, path)["type"] == "file_unchanged"
    # Open but clean: the disk is read, nothing is flagged.
    clean = Readkeeper(roots=[str(workspace)], buffers=OneBuffer(path, NOTEBOOK, 4))
    assert "unsaved" not in read(clean, path)["file"]


def test_compact_line_numbers_drop_the_padding_and_count_exactly(workspace: Path) -> None:
    (workspace / "a.py").write_text("".join(f"x{i} = {i}\n" for i in range(1, 13)))
    padded = Readkeeper(roots=[str(workspace)])
    compact = Readkeeper(roots=[str(workspace)], client_settings={"line_numbers": "compact"})
    compact.tokens.warm_up()  # counted, not bounded: test_token_bounds.py
    # The padded read first: a view kept for it must not answer the compact one.
    assert str(text_file(padded, "a.py")["content"]).startswith("     1\tx1 = 1\n")
    file = text_file(compact, "a.py")
    content = str(file["content"])
    assert content.split("\n")[0] == "1\tx1 = 1"
    assert content.split("\n")[-1] == "12\tx12 = 12"
    assert file["tokens"] == compact.tokens.count(content)
    assert file["tokens"] < text_file(padded, "a.py", force=True)["tokens"]  # type: ignore[operator]


def test_compact_line_numbers_in_a_streamed_range_and_under_the_cap(workspace: Path) -> None:
    big = workspace / "big.log"
    big.write_text("".join(f"request {i} ok\n" for i in range(1, 3001)))
    core = Readkeeper(
        roots=[str(workspace)],
        client_settings={"line_numbers": "compact", "max_size_bytes": 100, "max_tokens": 500},
    )
    file = text_file(core, big, offset=998, limit=3)
    assert file["content"] == "998\trequest 998 ok\n999\trequest 999 ok\n1000\trequest 1000 ok"
    error = refused(core, big, offset=1, limit=2000)
    fits = error.data["largest_limit"]
    assert isinstance(fits, int)
    assert fits > 0
    assert text_file(core, big, offset=1, limit=fits)["tokens"] <= 500  # type: ignore[operator]
    assert refused(core, big, offset=1, limit=fits + 1).kind == "token_limit"
