"""The read path of the plain-Python core: lines, caps, encodings, read-state, refusals."""

from __future__ import annotations

import codecs
import os
import socket
import time
from pathlib import Path

import pytest

from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import ForgetParams, ReadParams, unstructure


def read(core: Readkeeper, path: str | Path, **params: object) -> dict[str, object]:
    return unstructure(core.read(ReadParams(file_path=str(path), **params)))  # type: ignore[arg-type]


def text_file(core: Readkeeper, path: str | Path, **params: object) -> dict[str, object]:
    result = read(core, path, **params)
    assert result["type"] == "text", result
    file = result["file"]
    assert isinstance(file, dict)
    return file


def refused(core: Readkeeper, path: str | Path, **params: object) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        core.read(ReadParams(file_path=str(path), **params))  # type: ignore[arg-type]
    return caught.value


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
    assert "offset=2001" in str(file["note"])


def test_offset_zero_is_the_first_line_and_past_the_end_is_refused(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "n.txt").write_text("a\nb\n")
    assert text_file(core, "n.txt", offset=0)["start_line"] == 1
    error = refused(core, "n.txt", offset=9)
    assert error.kind == "bad_params"
    assert error.data["field"] == "offset"
    assert "offset=1" in error.message


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


@pytest.mark.parametrize(
    ("codec", "bom", "label"),
    [
        ("utf-8", codecs.BOM_UTF8, "utf-8-bom"),
        ("utf-16-le", codecs.BOM_UTF16_LE, "utf-16-le-bom"),
        ("utf-16-be", codecs.BOM_UTF16_BE, "utf-16-be-bom"),
        ("utf-32-le", codecs.BOM_UTF32_LE, "utf-32-le-bom"),
    ],
)
def test_unicode_files_with_a_bom(
    core: Readkeeper, workspace: Path, codec: str, bom: bytes, label: str
) -> None:
    (workspace / "u.txt").write_bytes(bom + "héllo\r\nwörld ✓\r\n".encode(codec))
    file = text_file(core, "u.txt")
    assert file["content"] == "     1\théllo\n     2\twörld ✓"
    assert file["encoding"] == label
    assert file["line_ending"] == "crlf"


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
    # The continuation the note suggests works as given.
    limit = str(file["note"]).split("limit=")[1].rstrip(".")
    follow = text_file(core, "log.txt", offset=next_offset, limit=int(limit))
    assert follow["start_line"] == next_offset


def test_ranged_read_over_the_cap_is_refused_with_a_limit_that_fits(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_tokens": 2000})
    (workspace / "log.txt").write_text(
        "".join(f"{i:05d} {os.urandom(12).hex()} event\n" for i in range(1000))
    )
    error = refused(core, "log.txt", offset=100, limit=900)
    assert error.kind == "token_limit"
    largest = error.data["largest_limit"]
    assert 0 < largest < 900
    assert f"offset=100, limit={largest}" in error.message
    assert "limit=900" not in error.message  # never the call that just failed
    fits = text_file(core, "log.txt", offset=100, limit=largest)
    assert fits["num_lines"] == largest


def test_small_results_are_not_counted_exactly(core: Readkeeper, workspace: Path) -> None:
    (workspace / "s.txt").write_text("short line\n" * 10)
    text_file(core, "s.txt")
    # The encoding is loaded only when a result might come near the cap.
    assert core.tokens._encoding is None


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
    assert "offset=1, limit=" in error.message


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


def test_a_huge_single_line_is_skimmed_not_held(core: Readkeeper, workspace: Path) -> None:
    big = workspace / "one-line.json"
    with open(big, "w") as f:
        f.write("[" + "1," * 3_000_000 + "1]\nsecond line\n")
    file = text_file(core, big, offset=1, limit=2)
    first, second = str(file["content"]).split("\n")
    assert first.endswith(f"[line cut: {6_000_003 - 2000} more characters]")
    assert second == "     2\tsecond line"


# --- what is not a regular file -------------------------------------------------------------


def test_directory(core: Readkeeper, workspace: Path) -> None:
    (workspace / "src").mkdir()
    error = refused(core, "src")
    assert error.kind == "is_directory"
    assert "ls " in error.message


def test_fifo_with_no_writer_does_not_block(core: Readkeeper, workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    started = time.monotonic()
    error = refused(core, "pipe")
    assert error.kind == "unsupported"
    assert "FIFO" in error.message
    assert time.monotonic() - started < 5  # a hang would never get here at all


def test_unix_socket(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        error = refused(core, path)
    assert error.kind == "unsupported"
    assert "socket" in error.message


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
    assert error.data["real_path"] == str(secret)
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


def test_partial_views_never_stub(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"default_limit": 5})
    (workspace / "n.txt").write_text("x\n" * 10)
    assert text_file(core, "n.txt")["partial"] is True
    assert read(core, "n.txt")["type"] == "text"


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
    for params in ({"pages": "1-2"}, {"render": True}):
        error = refused(core, "notes.txt", **params)
        assert error.kind == "bad_params"
        assert "offset and limit" in error.message
