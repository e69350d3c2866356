"""The PDF worker process: this file run as a script (`python -P pdf_worker.py`) by the
pool in worker.py, which parses PDFs so the server never does.

It imports nothing of readkeeper (and, with -P, nothing from the working directory):
only the standard library at start, pypdf and pypdfium2 on the first job that needs
them. It reads one job at a time from stdin and answers on stdout, in frames: a JSON
header and raw blobs (the PDF in, text and PNG pages out), each page streamed back as
an item as soon as it is done. Before each job it sets its own limits
(`resource.setrlimit`: CPU seconds and address space, as the parent asks); a job that
hits one, or a library that raises, is answered as a `Failure` the parent turns into
the agent's error, and a worker whose state is then unknown leaves. It exits when
stdin closes or after `IDLE_SECONDS` without a job.

The frames and `Failure` are defined here, where the worker can use them without an
import, and the parent imports them from here.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import math
import os
import resource
import select
import signal
import struct
import sys
import time
from collections.abc import Callable
from typing import Any, Literal

# A worker exits after this long without a job (the pool never hands out one near it).
IDLE_SECONDS = 300.0
# The largest frame either side accepts (a header or a blob): a damaged length field
# must not make the server allocate gigabytes.
MAX_FRAME = 256 << 20

FailureKind = Literal["too_large", "corrupt", "encrypted", "internal"]


class Failure(Exception):
    """A job that did not finish: a limit was hit (`too_large`), the file is damaged or
    crashed the worker (`corrupt`), it needs a password (`encrypted`), or the worker was
    stopped from outside (`internal`). `page` is the page it was on, when it was on one.
    `reason` is readkeeper's words; `words` a library's, apart (they may echo the file's
    bytes): the parent shows them quoted (errors.with_library_words)."""

    def __init__(
        self,
        kind: FailureKind,
        reason: str,
        page: int | None = None,
        words: str | None = None,
    ) -> None:
        super().__init__(f"{kind}: {reason}" + ("" if page is None else f" (page {page})"))
        self.kind: FailureKind = kind
        self.reason = reason
        self.page = page
        self.words = words


# --- frames: a JSON header, then raw blobs --------------------------------------------


def frame(header: dict[str, Any], blobs: list[bytes]) -> list[bytes]:
    """A frame's parts: the header's length, the header (which lists the blobs' sizes),
    then the blobs."""
    head = json.dumps({**header, "blobs": [len(b) for b in blobs]}).encode()
    return [struct.pack(">I", len(head)), head, *blobs]


def parse_header(raw: bytes) -> tuple[dict[str, Any], list[int]]:
    """A frame's header, and the sizes of the blobs that follow it (each within
    `MAX_FRAME`); ValueError for anything else."""
    header = json.loads(raw)
    if not isinstance(header, dict):
        raise ValueError("a frame header that is not an object")
    sizes = header.pop("blobs", [])
    if not isinstance(sizes, list) or not all(
        isinstance(n, int) and 0 <= n <= MAX_FRAME for n in sizes
    ):
        raise ValueError("bad blob sizes in a frame header")
    return header, sizes


# --- the jobs, on one document ---------------------------------------------------------

# pypdf's text extraction is pure Python and grows faster than the page's content (a
# 1 MB content stream takes seconds); larger pages go to pdfium's (C, linear, about
# 0.4 s a MB here), and pages past the hard cap are not parsed for text at all.
_PYPDF_MAX_CONTENT_BYTES = 256 * 1024
_MAX_PAGE_CONTENT_BYTES = 8 * 1024 * 1024
# pypdf finds a page by parsing every page object of the file first (about 0.5-1 ms a
# page: 10-30 s for 20,000 pages on a loaded machine, whichever pages were asked for);
# pdfium finds one without. A document of more pages than this is counted and its
# text extracted by pdfium, so a page range costs what its pages cost.
_PYPDF_MAX_PAGES = 1000
# The most pages read either way: pypdf's own bound on page tree entries, kept for the
# documents pdfium counts.
_MAX_PAGES = 100_000


class _Document:
    """The PDF of the current lease, opened by each library on first need."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._reader: Any = None
        self._pdfium: Any = None
        self._many: bool | None = None

    def many_pages(self) -> int | None:
        """The page count, when pdfium reads over `_PYPDF_MAX_PAGES` pages (pypdf's page
        tree walk would cost more than the pages asked for); else None, and pypdf is used
        as for any document (a file pdfium cannot open is left to pypdf's errors)."""
        if self._many is None:
            try:
                count = len(self.pdfium())
            except Failure:
                count = 0
            self._many = count > _PYPDF_MAX_PAGES
        return len(self.pdfium()) if self._many else None

    def reader(self) -> Any:
        if self._reader is None:
            from pypdf import PdfReader

            # pypdf logs a warning for every flaw it works around: thousands for a
            # hostile file.
            logging.getLogger("pypdf").setLevel(logging.ERROR)
            self._reader = PdfReader(io.BytesIO(self.data), strict=False)
        return self._reader

    def pdfium(self) -> Any:
        if self._pdfium is None:
            import pypdfium2 as pdfium

            try:
                self._pdfium = pdfium.PdfDocument(self.data)
            except pdfium.PdfiumError as exc:
                own, words = _describe(exc)
                raise Failure("corrupt", own, None, words) from None
        return self._pdfium

    def close(self) -> None:
        if self._pdfium is not None:
            self._pdfium.close()


Send = Callable[[dict[str, Any], list[bytes]], None]


def _job_open(doc: _Document, args: dict[str, Any], send: Send) -> dict[str, Any]:
    """The page count, by pypdf, which also decrypts PDFs whose user password is empty."""
    from pypdf.errors import FileNotDecryptedError

    many = doc.many_pages()
    if many is not None and many > _MAX_PAGES:
        limit = f"its page tree has {many:,} pages, over the {_MAX_PAGES:,} read"
        raise Failure("too_large", f"a limit of the PDF reader ({limit})")
    if many is not None:
        return {"page_count": many}
    try:
        count = len(doc.reader().pages)  # raises when a password is needed
    except FileNotDecryptedError:
        raise Failure("encrypted", "a password is needed") from None
    except MemoryError:
        raise
    except Exception as exc:
        if _kind(exc) == "too_large":
            raise Failure(
                "too_large", "a limit of the PDF reader", None, _describe(exc)[1]
            ) from None
        own, words = _describe(exc)
        raise Failure("corrupt", own, None, words) from None
    if count == 0:
        raise Failure("corrupt", "it has no pages")
    return {"page_count": count}


def _job_sizes(doc: _Document, args: dict[str, Any], send: Send) -> dict[str, Any]:
    """Each page's width and height in points, as pdfium draws it (rotation included),
    read from the page tree without parsing the pages' content."""
    pdf = doc.pdfium()
    return {"sizes": [list(pdf.get_page_size(number - 1)) for number in args["pages"]]}


def _job_text(doc: _Document, args: dict[str, Any], send: Send) -> dict[str, Any]:
    """Each page's text, streamed; no new page is started after `stop_after` seconds."""
    start = time.monotonic()
    for index, number in enumerate(args["pages"]):
        if index and time.monotonic() - start > args["stop_after"]:
            return {"stopped": True}
        text, problem, words = _page_text(doc, number)
        item = {"number": number, "text": text, "problem": problem, "words": words}
        send({"item": item}, [])
    return {"stopped": False}


def _page_text(doc: _Document, number: int) -> tuple[str, str | None, str | None]:
    """The text of page `number`, or why there is none to show (readkeeper's words, then
    a library's apart)."""
    try:
        if doc.many_pages() is not None:
            return _pdfium_text(doc, number), None, None
        page = doc.reader().pages[number - 1]
        contents = page.get_contents()
        size = len(contents.get_data()) if contents is not None else 0
        if size > _MAX_PAGE_CONTENT_BYTES:
            return "", f"page content too large to extract text from ({size:,} bytes)", None
        if size > _PYPDF_MAX_CONTENT_BYTES:
            return _pdfium_text(doc, number), None, None
        return str(page.extract_text()), None, None
    except MemoryError:
        raise
    except Exception as exc:  # a damaged page spoils that page, not the whole read
        if _kind(exc) == "too_large":
            # pypdf's words ("Limit reached while decompressing. 334782 bytes
            # remaining.") name its inner workings: readkeeper's own instead.
            return "", "page content decompresses past the limit for extracting text", None
        own, words = _describe(exc)
        return "", "text could not be extracted" + (f" ({own})" if own else ""), words


def _pdfium_text(doc: _Document, number: int) -> str:
    page = doc.pdfium()[number - 1]
    try:
        textpage = page.get_textpage()
        try:
            return str(textpage.get_text_bounded())
        finally:
            textpage.close()
    finally:
        page.close()


def _job_render(doc: _Document, args: dict[str, Any], send: Send) -> dict[str, Any]:
    """Pages drawn by pdfium at `scale`, fitted to exactly `width` x `height`, as PNG,
    streamed; no new page is started after `stop_after` seconds."""
    pdf = doc.pdfium()
    start = time.monotonic()
    for index, (number, scale, width, height) in enumerate(args["pages"]):
        if index and time.monotonic() - start > args["stop_after"]:
            return {"stopped": True}
        try:
            png = _draw(pdf, number, scale, (width, height))
        except MemoryError:
            raise
        except Exception as exc:  # pdfium refused the page: the rest may still draw
            own, words = _describe(exc)
            raise Failure("corrupt", own, number, words) from None
        send({"item": {"number": number, "width": width, "height": height}}, [png])
    return {"stopped": False}


def _draw(pdf: Any, number: int, scale: float, size: tuple[int, int]) -> bytes:
    page = pdf[number - 1]
    try:
        bitmap = page.render(scale=scale)
        try:
            picture = bitmap.to_pil()
            if picture.size != size:  # rounding in pdfium's favour
                picture = picture.resize(size)
            out = io.BytesIO()
            picture.save(out, "PNG", compress_level=3)
            return out.getvalue()
        finally:
            bitmap.close()
    finally:
        page.close()


_JOBS: dict[str, Callable[[_Document, dict[str, Any], Send], dict[str, Any]]] = {
    "open": _job_open,
    "sizes": _job_sizes,
    "text": _job_text,
    "render": _job_render,
}


def _kind(exc: BaseException) -> FailureKind:
    """`too_large` for one of pypdf's own limits (a page tree of over 100,000 entries, a
    stream inflating past its cap: an intact file may be that big), else `corrupt`. A
    loop it detects is raised as a limit too, yet only a damaged file has one."""
    import pypdf.errors

    limit = getattr(pypdf.errors, "LimitReachedError", None)
    if limit is None or not isinstance(exc, limit):
        return "corrupt"
    said = str(exc).lower()
    return "corrupt" if ("cycl" in said or "loop" in said) else "too_large"


# What a library raises from its own checks and slips (an assertion, a missing key, an
# attribute of the wrong object) when a damaged file takes it where it did not expect:
# its words are its inner workings ("mypy", "'/Widths'", "'NullObject' object has no
# attribute 'get'"), never a sentence about the file: the type is named instead. Others
# (pypdf's own errors, a ValueError, an unsupported filter, pdfium's) say what is wrong
# with the file, and the parent shows them as errors.library_detail does.
_INNER = (AssertionError, AttributeError, LookupError, TypeError, NameError)


def _describe(exc: BaseException) -> tuple[str, str | None]:
    """readkeeper's words for `exc`, and the library's apart (None: none shown)."""
    if isinstance(exc, _INNER):
        return f"the PDF reader failed inside: {type(exc).__name__}", None
    return "", str(exc) or type(exc).__name__


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = os.read(fd, min(size - len(chunks), 1 << 20))
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)


def _write_all(fd: int, parts: list[bytes]) -> None:
    for part in parts:
        view = memoryview(part)
        while view:
            view = view[os.write(fd, view) :]


def _peak_rss() -> int:
    """This process's peak resident memory, in bytes. Linux's `ru_maxrss` survives
    `exec`: a worker started by a large parent would report the parent's peak (and be
    retired after every read), so the new image's own high-water mark is read instead."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def _set_limits(limits: dict[str, Any]) -> None:
    """This job's CPU and memory limits. Only the soft limits move (an unprivileged
    process cannot raise a hard limit again), so the next job can have its own."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = math.ceil(usage.ru_utime + usage.ru_stime) + int(limits["cpu"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, resource.RLIM_INFINITY))
    # macOS does not enforce an address-space limit (and may refuse one): there the CPU
    # limit and the parent's deadline remain.
    with contextlib.suppress(OSError, ValueError):
        resource.setrlimit(resource.RLIMIT_AS, (int(limits["memory"]), resource.RLIM_INFINITY))


def _serve() -> None:
    """The worker's loop: one job at a time, until stdin closes or it idles out."""
    # The protocol gets the original stdin/stdout; anything a library prints goes to
    # stderr (the server's log) instead of into a frame.
    requests, replies = os.dup(0), os.dup(1)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when this ends
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a limit hit leaves no core file
    document: _Document | None = None

    def send(header: dict[str, Any], blobs: list[bytes]) -> None:
        _write_all(replies, frame(header, blobs))

    while True:
        ready, _, _ = select.select([requests], [], [], IDLE_SECONDS)
        raw = _read_exactly(requests, 4) if ready else None
        if raw is None:
            return
        head = _read_exactly(requests, struct.unpack(">I", raw)[0])
        if head is None:
            return
        request, sizes = parse_header(head)
        blobs = [_read_exactly(requests, n) for n in sizes]
        if None in blobs:
            return
        _set_limits(request["limits"])
        leave = False
        try:
            if blobs:
                if document is not None:
                    document.close()
                document = _Document(blobs[0] or b"")
            if document is None:
                raise Failure("internal", "no document was sent")
            reply: dict[str, Any] = {"done": _JOBS[request["job"]](document, request["args"], send)}
        except Failure as exc:
            error = {"kind": exc.kind, "reason": exc.reason, "page": exc.page, "words": exc.words}
            reply = {"error": error}
        except MemoryError:
            limit = f"the {request['limits']['memory'] / (1 << 20):,.0f} MB memory limit"
            reply = {"error": {"kind": "too_large", "reason": limit, "page": None}}
            leave = True  # what the libraries hold after a failed allocation is unknown
        except Exception as exc:
            own, words = _describe(exc)
            reply = {"error": {"kind": "internal", "reason": own, "page": None, "words": words}}
            leave = True
        reply["rss"] = _peak_rss()
        send(reply, [])
        if leave:
            return


def _hold(argv: list[str]) -> None:
    """`pdf_worker.py LIFELINE_PATH PARENT_PID`: die with the server (files/lifeline.py,
    loaded by its path), before anything else runs."""
    if len(argv) < 2:
        return
    import importlib.util

    spec = importlib.util.spec_from_file_location("_readkeeper_lifeline", argv[0])
    if spec is not None and spec.loader is not None:
        lifeline = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(lifeline)
        lifeline.hold(int(argv[1]))


if __name__ == "__main__":
    _hold(sys.argv[1:])
    _serve()
