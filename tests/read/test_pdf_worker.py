"""PDFs are read and drawn in a worker process with CPU, memory and time limits
(readers/worker.py): hostile pages end in a named error while the server goes on
serving, a killed or crashed worker is replaced, cancel kills the render, and
concurrent renders are all drawn right.

The hostile PDFs are written here as raw PDF bytes:
- a *bomb* page, whose content stream is 1 GiB of zlib-compressed zeros in about 1 MB
  (pdfium inflates a page's content whole before drawing it);
- a *slow* page, a function-based shading whose PostScript function runs four thousand
  operators per pixel: minutes of CPU in a few kilobytes of memory.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import signal
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import warm_server
from document_samples import numbered_pdf, pdf_of
from lsprotocol import types
from PIL import Image
from pygls.exceptions import JsonRpcRequestCancelled

from conftest import Session
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import ReadParams, unstructure
from readkeeper.read.readers import worker
from readkeeper.settings import Settings

# --- hostile PDFs, as raw bytes ---------------------------------------------------------


def zeros_flate(size: int) -> bytes:
    """A zlib stream of `size` zero bytes (a multiple of 1 MiB), made without compressing
    them: after a full flush, every further MiB of zeros compresses to the same bytes."""
    chunk = bytes(1 << 20)
    compressor = zlib.compressobj(9)
    first = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    count = size >> 20
    adler32 = (size % 65521) << 16 | 1  # of `size` zeros
    # An empty final block (fixed Huffman), then the checksum.
    return first + again * (count - 1) + b"\x03\x00" + adler32.to_bytes(4, "big")


def stream(entries: bytes, body: bytes) -> bytes:
    return b"<< %s /Length %d >>\nstream\n%s\nendstream" % (entries, len(body), body)


def raw_pdf(pages: list[str]) -> bytes:
    """A PDF of letter-size pages, each "text", "bomb", "slow" (see the module doc) or
    "slow text" (a slow page with a line of text)."""
    objects: list[bytes] = [b"", b""]  # catalog and page tree, filled in below

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    kids = []
    for number, kind in enumerate(pages, 1):
        resources = b"/Font << /F1 %d 0 R >>" % font
        if kind == "text":
            content = add(stream(b"", b"BT /F1 24 Tf 72 700 Td (Page %d) Tj ET" % number))
        elif kind == "bomb":
            content = add(stream(b"/Filter /FlateDecode", zeros_flate(1 << 30)))
        else:
            program = b"{ " + b"2 copy add pop " * 4000 + b"pop pop 0.5 0.5 0.5 }"
            function = add(
                stream(b"/FunctionType 4 /Domain [0 1 0 1] /Range [0 1 0 1 0 1]", program)
            )
            shading = add(
                b"<< /ShadingType 1 /ColorSpace /DeviceRGB /Domain [0 1 0 1] "
                b"/Matrix [612 0 0 792 0 0] /Function %d 0 R >>" % function
            )
            resources += b" /Shading << /Sh1 %d 0 R >>" % shading
            words = b" BT /F1 24 Tf 72 700 Td (Slow page) Tj ET" if kind == "slow text" else b""
            content = add(stream(b"", b"/Sh1 sh" + words))
        kids.append(
            add(
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                b"/Resources << %s >> /Contents %d 0 R >>" % (resources, content)
            )
        )
    objects[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
    refs = b" ".join(b"%d 0 R" % kid for kid in kids)
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (refs, len(kids))
    return pdf_of(objects)


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return raw_pdf(["bomb"])


@pytest.fixture(scope="module")
def slow() -> bytes:
    return raw_pdf(["slow"])


# --- processes ------------------------------------------------------------------------


def _stat_fields(pid: int) -> list[str]:
    # The fields after "(comm)", which may itself hold spaces and parentheses.
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def cpu_seconds(pid: int) -> float:
    fields = _stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def alive(pid: int) -> bool:
    """Running, and not yet a zombie waiting to be reaped."""
    try:
        return _stat_fields(pid)[0] != "Z"
    except (OSError, IndexError):
        return False


def worker_pids(parent: int) -> list[int]:
    """The PDF workers `parent` has started that are still running."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            is_child = int(_stat_fields(int(entry))[1]) == parent
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        if is_child and b"worker.py" in command and alive(int(entry)):
            found.append(int(entry))
    return found


def wait_for(check: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"gave up waiting for {what}")


async def eventually(check: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        await asyncio.sleep(0.02)
    raise AssertionError(f"gave up waiting for {what}")


def busy_worker(parent: int) -> int | None:
    """A worker of `parent` that has been drawing for a while (past its start-up)."""
    for pid in worker_pids(parent):
        try:
            if cpu_seconds(pid) > 1.0:
                return pid
        except (OSError, IndexError):
            continue
    return None


# --- the worker, in this process ------------------------------------------------------


@pytest.fixture
def pool() -> Iterator[worker.Pool]:
    """A pool of one worker, of this test's own."""
    own = worker.Pool(size=1)
    yield own
    own.close()


def draw(job: worker.Lease, pages: list[list[Any]]) -> list[tuple[int, bytes]]:
    drawn: list[tuple[int, bytes]] = []
    job.call(
        "render",
        {"pages": pages, "stop_after": 10.0},
        on_item=lambda item, blobs: drawn.append((item["number"], blobs[0])),
    )
    return drawn


def test_the_worker_counts_measures_reads_and_draws(pool: worker.Pool) -> None:
    with pool.lease() as job:
        assert job.call("open", data=numbered_pdf(3)) == {"page_count": 3}
        assert job.call("sizes", {"pages": [1, 3]}) == {"sizes": [[612.0, 792.0]] * 2}
        texts: list[dict[str, Any]] = []
        job.call(
            "text",
            {"pages": [2, 3], "stop_after": 10.0},
            on_item=lambda item, blobs: texts.append(item),
        )
        assert [t["number"] for t in texts] == [2, 3]
        assert "Page 2 line 0:" in texts[0]["text"]
        drawn = draw(job, [[1, 0.5, 306, 396], [3, 0.5, 200, 259]])
    assert [number for number, _ in drawn] == [1, 3]
    sizes = [Image.open(io.BytesIO(png)).size for _, png in drawn]
    assert sizes == [(306, 396), (200, 259)]


def test_a_warm_worker_serves_the_next_read(pool: worker.Pool) -> None:
    with pool.lease() as job:
        job.call("open", data=numbered_pdf(1))
        first = job.pid
    with pool.lease() as job:
        assert job.call("open", data=numbered_pdf(2)) == {"page_count": 2}
        assert job.pid == first


def test_a_worker_of_a_large_parent_is_still_reused() -> None:
    # Linux keeps a process's peak memory across exec: a worker started by a server
    # that had grown past the retirement size must not count that as its own.
    ballast = bytearray(worker.RETIRE_RSS + (64 << 20))
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    own = worker.Pool(size=1)
    try:
        with own.lease() as job:
            job.call("open", data=numbered_pdf(1))
            first = job.pid
        with own.lease() as job:
            job.call("open", data=numbered_pdf(2))
            assert job.pid == first
    finally:
        own.close()
        del ballast


def test_a_decompression_bomb_hits_the_memory_limit(pool: worker.Pool, bomb: bytes) -> None:
    with pool.lease() as job:
        assert job.call("open", data=bomb) == {"page_count": 1}
        with pytest.raises(worker.Failure) as caught:
            draw(job, [[1, 1.0, 612, 792]])
        pid = job.pid
    assert caught.value.kind == "too_large"
    assert "memory limit" in caught.value.reason
    assert not alive(pid)
    with pool.lease() as job:  # a new worker takes its place
        assert job.call("open", data=numbered_pdf(1)) == {"page_count": 1}
        assert job.pid != pid


def test_a_bomb_is_too_large_though_the_parent_is_the_larger(
    pool: worker.Pool, bomb: bytes
) -> None:
    # A dead worker's ru_maxrss also counts its parent's peak (it survives exec): with a
    # parent larger than the bomb's growth, only the worker's own VmHWM, taken while it
    # works, tells the memory limit from a crash.
    held = bytearray(900 << 20)
    for page in range(0, len(held), 4096):
        held[page] = 1
    try:
        with pool.lease() as job:
            assert job.call("open", data=bomb) == {"page_count": 1}
            with pytest.raises(worker.Failure) as caught:
                draw(job, [[1, 1.0, 612, 792]])
        assert (caught.value.kind, "memory limit" in caught.value.reason) == ("too_large", True)
    finally:
        del held


def test_python_running_out_of_memory_is_too_large(
    pool: worker.Pool, bomb: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pypdf inflates up to 75 MB of the bomb for its text: under a lowered limit, that
    is a MemoryError in the worker, answered as `too_large`, and the worker leaves."""
    with pool.lease() as job:
        job.call("open", data=numbered_pdf(1))
        job.call("text", {"pages": [1], "stop_after": 10.0})
        mapped = next(
            int(line.split()[1]) * 1024
            for line in Path(f"/proc/{job.pid}/status").read_text().splitlines()
            if line.startswith("VmSize:")
        )
    monkeypatch.setattr(worker, "MEMORY_BASE", mapped + (40 << 20))
    with pool.lease() as job:
        job.call("open", data=bomb)
        with pytest.raises(worker.Failure) as caught:
            job.call("text", {"pages": [1], "stop_after": 10.0})
    assert caught.value.kind == "too_large"
    assert "MB memory limit" in caught.value.reason
    wait_for(lambda: not alive(job.pid), "the worker to leave")


def test_the_cpu_limit(pool: worker.Pool, slow: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "CPU_SECONDS", 1)
    with pool.lease() as job:
        job.call("open", data=slow)
        with pytest.raises(worker.Failure) as caught:
            draw(job, [[1, 1.0, 612, 792]])
    assert caught.value.kind == "too_large"
    assert "1-second CPU limit" in caught.value.reason


def test_the_time_limit(pool: worker.Pool, slow: bytes) -> None:
    with pool.lease() as job:
        job.call("open", data=slow)
        job.deadline = time.monotonic() + 1.0  # as if the lease had run for 19 s
        with pytest.raises(worker.Failure) as caught:
            draw(job, [[1, 1.0, 612, 792]])
    assert caught.value.kind == "too_large"
    assert "time limit" in caught.value.reason
    assert not alive(job.pid)


def kill_mid_job(pool: worker.Pool, slow: bytes, how: signal.Signals) -> worker.Failure:
    """Send `how` to the worker while it draws the slow page; the failure it gives."""
    failures: list[BaseException] = []
    with pool.lease() as job:
        job.call("open", data=slow)
        started = cpu_seconds(job.pid)

        def run() -> None:
            try:
                draw(job, [[1, 1.0, 612, 792]])
            except BaseException as exc:
                failures.append(exc)

        thread = threading.Thread(target=run)
        thread.start()
        wait_for(lambda: cpu_seconds(job.pid) > started + 0.5, "the worker to be drawing")
        os.kill(job.pid, how)
        thread.join()
    (failure,) = failures
    assert isinstance(failure, worker.Failure)
    return failure


def test_a_worker_killed_from_outside_is_internal(pool: worker.Pool, slow: bytes) -> None:
    failure = kill_mid_job(pool, slow, signal.SIGKILL)
    assert failure.kind == "internal"
    assert "SIGKILL" in failure.reason
    with pool.lease() as job:
        assert job.call("open", data=numbered_pdf(1)) == {"page_count": 1}


def test_a_crashed_worker_is_corrupt(pool: worker.Pool, slow: bytes) -> None:
    failure = kill_mid_job(pool, slow, signal.SIGSEGV)
    assert failure.kind == "corrupt"
    assert "SIGSEGV" in failure.reason


def test_cancel_kills_the_worker(pool: worker.Pool, slow: bytes) -> None:
    cancel = threading.Event()
    outcome: list[BaseException] = []
    pids: list[int] = []

    def render() -> None:
        with pool.lease() as job:
            pids.append(job.pid)
            job.call("open", data=slow)
            draw(job, [[1, 1.0, 612, 792]])

    def run() -> None:
        try:
            worker.cancellable(cancel, render)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    wait_for(lambda: pids and cpu_seconds(pids[0]) > 1.0, "the worker to be drawing")
    cancel.set()
    thread.join()
    assert [type(exc) for exc in outcome] == [worker.Cancelled]
    assert not alive(pids[0])


def test_reads_wait_for_a_free_worker(pool: worker.Pool) -> None:
    data = numbered_pdf(4)
    results: dict[int, list[int]] = {}

    def render(index: int) -> None:
        with pool.lease() as job:
            job.call("open", data=data)
            results[index] = [n for n, _ in draw(job, [[n, 0.3, 184, 238] for n in (1, 2, 3)])]

    threads = [threading.Thread(target=render, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {i: [1, 2, 3] for i in range(4)}
    assert len(pool.pids()) == 1


# --- through the core -----------------------------------------------------------------


def test_a_bomb_after_good_pages_ends_the_render_there(core: Readkeeper, workspace: Path) -> None:
    (workspace / "mixed.pdf").write_bytes(raw_pdf(["text", "bomb", "text", "text"]))
    file = unstructure(core.read(ReadParams(file_path="mixed.pdf", pages="1-4", render=True)))[
        "file"
    ]
    assert file["page_numbers"] == [1]
    assert file["partial"] is True
    assert file["next_pages"] == "3-4"
    assert "Page 2 was skipped" in file["note"]
    assert "memory limit" in file["note"]
    assert 'Continue with pages="3-4".' in file["note"]  # drawn, as the call
    # Its text is read: pypdf's own cap on decompression covers that page.
    text = unstructure(core.read(ReadParams(file_path="mixed.pdf", pages="1-4")))["file"]
    assert "Page 3" in text["content"]


def test_a_bomb_on_the_first_page_is_too_large(core: Readkeeper, workspace: Path) -> None:
    (workspace / "bomb.pdf").write_bytes(raw_pdf(["bomb", "text"]))
    with pytest.raises(ReadkeeperError) as caught:
        core.read(ReadParams(file_path="bomb.pdf", pages="1-2", render=True))
    error = caught.value
    assert error.kind == "too_large"
    assert error.data["page"] == 1
    # Its text is over pypdf's cap too: the refusal names no read of it.
    assert "no read shows page 1" in error.message
    assert 'the pages after it: pages="2".' in error.message


def test_pages_are_written_beneath_the_folder_not_through_symlinks(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "book.pdf").write_bytes(numbered_pdf(2))
    first = unstructure(core.read(ReadParams(file_path="book.pdf", pages="1", render=True)))
    page = Path(first["file"]["pages"][0])
    victim = workspace / "victim.txt"
    victim.write_text("untouched\n")
    page.unlink()
    page.symlink_to(victim)
    again = unstructure(
        core.read(ReadParams(file_path="book.pdf", pages="1", render=True, force=True))
    )
    assert again["file"]["pages"] == [str(page)]
    assert victim.read_text() == "untouched\n"
    assert not page.is_symlink()
    assert Image.open(page).format == "PNG"


# --- through the server ---------------------------------------------------------------


def server_pid(lsp: Session) -> int:
    return warm_server.real_pid(lsp.client._server.pid)  # type: ignore[union-attr]


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


async def test_a_bomb_is_too_large_and_other_reads_go_on(
    lsp: Session, workspace: Path, bomb: bytes
) -> None:
    (workspace / "bomb.pdf").write_bytes(bomb)
    (workspace / "notes.txt").write_text("still here\n")
    answered: list[str] = []

    async def render() -> Any:
        try:
            return await lsp.read_error("bomb.pdf", pages="1", render="true")
        finally:
            answered.append("render")

    drawing = asyncio.create_task(render())
    await eventually(lambda: worker_pids(server_pid(lsp)), "a PDF worker")
    text = await lsp.read("notes.txt")
    answered.append("text")
    error = await drawing
    assert answered == ["text", "render"]
    assert text["file"]["content"] == "     1\tstill here"
    assert error.data["kind"] == "too_large"
    assert "memory limit" in error.data["reason"]
    assert "no read shows page 1" in error.message  # its text is over pypdf's cap too
    assert peak_rss_mb(server_pid(lsp)) < 400  # the server never held the inflated page
    # The next PDF read gets a new worker.
    (workspace / "book.pdf").write_bytes(numbered_pdf(2))
    assert (await lsp.read("book.pdf", pages="2", render="true"))["file"]["count"] == 1


async def test_eight_concurrent_renders_are_all_right(lsp: Session, workspace: Path) -> None:
    (workspace / "book.pdf").write_bytes(numbered_pdf(12))
    asks = [
        ("a", "1-6"),
        ("a", "1-6"),  # the same pages of the same session: the same files, drawn twice
        ("b", "4-9"),
        ("b", "4-9"),
        ("c", "7-12"),
        ("d", "1-12"),
        ("e", "2"),
        ("f", "10-12"),
    ]

    async def render(session: str, pages: str) -> tuple[list[int], list[str]]:
        """The pages read, and their files: a read that stopped starting pages after
        pdf_reading.MAX_SECONDS (eight renders on a loaded machine may take longer) is
        continued where it says, as an agent would; any other partial read is not."""
        numbers: list[int] = []
        files: list[str] = []
        while True:
            result = await lsp.read(
                "book.pdf", pages=pages, render="true", session=session, force="true"
            )
            assert result["type"] == "parts"
            file = result["file"]
            assert file["count"] == len(file["page_numbers"]) == len(file["pages"]) > 0
            assert file["page_count"] == 12
            numbers += file["page_numbers"]
            files += file["pages"]
            if file["partial"] is False:
                return numbers, files
            assert "rendering stopped after" in file["note"], file
            pages = file["next_pages"]

    results = await asyncio.gather(*(render(session, pages) for session, pages in asks))
    settings = Settings()
    digests: dict[int, set[str]] = {}
    for (_, pages), (numbers, files) in zip(asks, results, strict=True):
        first, _, last = pages.partition("-")
        expected = list(range(int(first), int(last or first) + 1))
        assert numbers == expected
        for number, page in zip(expected, files, strict=True):
            assert page.endswith(f"page-{number:04d}.png")
            with Image.open(page) as picture:
                width, height = picture.size
                assert picture.format == "PNG"
            assert max(width, height) <= settings.image_max_edge
            assert width * height / 750 <= settings.image_max_tokens
            assert abs(width / height - 612 / 792) < 0.01
            digests.setdefault(number, set()).add(
                hashlib.sha256(Path(page).read_bytes()).hexdigest()
            )
    # Each page looks the same whichever read drew it, and no two pages look alike.
    assert all(len(found) == 1 for found in digests.values())
    assert len({next(iter(found)) for found in digests.values()}) == 12


async def test_a_killed_worker_gives_a_named_error_and_the_next_render_works(
    lsp: Session, workspace: Path, slow: bytes
) -> None:
    (workspace / "slow.pdf").write_bytes(slow)
    (workspace / "book.pdf").write_bytes(numbered_pdf(3))
    drawing = asyncio.create_task(lsp.read_error("slow.pdf", pages="1", render="true"))
    pid = await eventually(lambda: busy_worker(server_pid(lsp)), "a worker drawing")
    os.kill(pid, signal.SIGKILL)
    error = await drawing
    assert error.data["kind"] == "internal"
    assert "SIGKILL" in error.data["reason"]
    assert "Try the same read again" in error.message
    parts = (await lsp.read("book.pdf", pages="1-3", render="true"))["file"]
    assert parts["page_numbers"] == [1, 2, 3]


async def test_cancel_kills_the_render(lsp: Session, workspace: Path, slow: bytes) -> None:
    (workspace / "slow.pdf").write_bytes(slow)
    protocol = lsp.client.protocol
    pending = protocol.send_request_async(
        "readkeeper/read",
        {"file_path": "slow.pdf", "pages": "1", "render": True},
        msg_id="slow-render",
    )
    pid = await eventually(lambda: busy_worker(server_pid(lsp)), "a worker drawing")
    protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="slow-render"))
    with pytest.raises(JsonRpcRequestCancelled) as cancelled:
        await pending
    assert cancelled.value.data["kind"] == "cancelled"
    await eventually(lambda: not alive(pid), "the worker to be killed")
    (workspace / "notes.txt").write_text("after\n")
    assert (await lsp.read("notes.txt"))["type"] == "text"


# --- no refusal sends the agent to a read that fails ----------------------------------


def test_a_page_no_way_reads_is_told_so_whichever_way_came_first(
    core: Readkeeper, workspace: Path
) -> None:
    # The bomb page: its text is over pypdf's cap, its drawing over the memory limit.
    (workspace / "text_first.pdf").write_bytes(raw_pdf(["bomb", "text"]))
    text = unstructure(core.read(ReadParams(file_path="text_first.pdf", pages="1")))["file"]
    # Its drawing was asked first, and fails: the note names no read (attack round 22).
    assert "no read shows it" in text["content"]
    assert "render=true" not in text["content"]
    with pytest.raises(ReadkeeperError) as caught:
        core.read(ReadParams(file_path="text_first.pdf", pages="1-2", render=True))
    drawn = caught.value
    assert drawn.kind == "too_large"
    assert "no read shows page 1" in drawn.message
    assert "Read its text instead" not in drawn.message
    assert 'the pages after it: pages="2".' in drawn.message  # the pages after it still read
    assert drawn.data["text_reason"]
    # Drawn first: the refusal does not send the agent to its text either.
    (workspace / "drawn_first.pdf").write_bytes(raw_pdf(["bomb"]))
    with pytest.raises(ReadkeeperError) as caught:
        core.read(ReadParams(file_path="drawn_first.pdf", pages="1", render=True))
    assert "no read shows page 1" in caught.value.message
    assert "Read its text instead" not in caught.value.message


def test_a_page_whose_text_reads_is_sent_to_its_text(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A page too much to draw (the slow shading) whose text reads: the refusal says so.
    monkeypatch.setattr(worker, "CPU_SECONDS", 1)  # the shading runs for minutes
    (workspace / "slow.pdf").write_bytes(raw_pdf(["slow text"]))
    with pytest.raises(ReadkeeperError) as caught:
        core.read(ReadParams(file_path="slow.pdf", pages="1", render=True))
    assert caught.value.kind == "too_large"
    assert 'Read its text instead: pages="1", render=false.' in caught.value.message


def wide_page_tree(entries: int) -> bytes:
    """An intact PDF whose one page tree node lists the same page `entries` times."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b"3 0 R " * entries, entries),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
    ]
    return pdf_of(objects)


def test_a_page_tree_over_the_reader_s_limit_is_too_large_never_corrupt(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "huge.pdf").write_bytes(wide_page_tree(100_001))
    for pages in ("1-3", "5,5,5", None):
        with pytest.raises(ReadkeeperError) as caught:
            core.read(ReadParams(file_path="huge.pdf", pages=pages))
        assert caught.value.kind == "too_large", (pages, caught.value.message)
        assert "intact copy" not in caught.value.message
        assert "nothing says it is damaged" in caught.value.message
