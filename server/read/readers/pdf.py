"""PDFs: page text within the token cap, or pages rendered to PNG for reading as images.

Three tiers, as the agent tools that handle PDFs best do:
- a small PDF (at most `pdf_whole_max_pages` pages and `pdf_whole_max_bytes` bytes) is
  read whole: the text of every page, plus the PDF itself as `base64` when the
  `pdf_inline` setting is on (for models that read PDFs natively);
- a larger one needs `pages` ("3", "1-5", "2,4-6", "7-"), at most `pdf_max_pages` per
  read, each page's text in its own block headed by its number;
- with `render`, the pages are drawn to PNG files sized to the image budget (a `parts`
  result), for scanned pages, slides and drawings.

pypdf reads the structure and the text (and decrypts PDFs whose user password is
empty); pypdfium2 renders, and extracts the text of pages too large for pypdf. Neither
runs in the server: a read leases a worker process (worker.py) that does, under CPU,
memory and time limits, and this module keeps the policy (which pages, what the agent
is told). A read stops starting new pages after `_MAX_SECONDS`; a page that hits a
limit or crashes the worker ends the read there, with what came before it and a note,
or, when it was the first, with an error (`too_large`, `corrupt`) that names the page
and the read to try next. Rendered pages are written into the session's output folder
through its open descriptor, never by a path a symlink could redirect.
"""

from __future__ import annotations

import base64
import contextlib
import math
import os
import re
import stat
from collections.abc import Callable
from typing import Any

import attrs

from ...errors import ReadkeeperError
from ...protocol import PartsFile, PartsResult, PdfFile, PdfResult
from ...settings import Settings
from ..tokens import TokenCounter, estimate_tokens
from . import worker
from .image import PIXELS_PER_TOKEN, budget_size, tokens_for

# A read stops starting new pages after this long (the page in flight is bounded by the
# worker's limits).
_MAX_SECONDS = 10.0
# Rendering never goes past this many pixels per PDF point (300 dpi).
_MAX_RENDER_SCALE = 300 / 72
_NOTE_ALLOWANCE = 64
_RANGE_RE = re.compile(r"(\d+)(?:(-)(\d*))?")
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

Ranges = list[tuple[int, int | None]]  # (first, last); last None means "to the end"


def parse_pages(spec: str) -> Ranges:
    """'3', '1-5', '2,4-6', '7-' as 1-based inclusive ranges; `bad_params` otherwise."""
    ranges: Ranges = []
    for part in spec.replace(" ", "").split(","):
        match = _RANGE_RE.fullmatch(part)
        if match is None:
            raise _bad_pages(spec, f"{part!r} is not a page or a range")
        first = int(match[1])
        last = None if match[2] and not match[3] else int(match[3] or first)
        if first < 1 or (last is not None and last < first):
            raise _bad_pages(spec, f"{part!r} is not a range of pages counted from 1")
        ranges.append((first, last))
    return ranges


def canonical_pages(spec: str | None) -> str:
    """A normal form of `spec`, for telling whether two reads asked for the same pages."""
    if spec is None:
        return ""
    return ",".join(
        f"{a}" if a == b else f"{a}-{'' if b is None else b}" for a, b in parse_pages(spec)
    )


def compress(pages: list[int]) -> str:
    """[1, 2, 3, 5] as '1-3,5' ('' for no pages)."""
    parts: list[str] = []
    if not pages:
        return ""
    start = prev = pages[0]
    for page in [*pages[1:], None]:
        if page is not None and page == prev + 1:
            prev = page
            continue
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
        if page is not None:
            start = prev = page
    return ",".join(parts)


def read_pdf(
    data: bytes,
    path: str,
    pages: str | None,
    render: bool,
    output_dir: Callable[[], str],
    content_digest: str,
    settings: Settings,
    counter: TokenCounter,
) -> PdfResult | PartsResult:
    """The `pdf` (text) or `parts` (rendered pages) result for a PDF's bytes."""
    ranges = parse_pages(pages) if pages is not None else None
    try:
        with worker.lease() as job:
            page_count = _page_count(job, data, path)
            if ranges is None:
                if (
                    page_count > settings.pdf_whole_max_pages
                    or len(data) > settings.pdf_whole_max_bytes
                ):
                    raise _pages_required(path, page_count, len(data), render, settings)
                wanted = list(range(1, page_count + 1))
            else:
                wanted = _expand(ranges, page_count, path, settings.pdf_max_pages)
            chosen = wanted[: settings.pdf_max_pages]
            rest = wanted[settings.pdf_max_pages :]
            reading = _Reading(job, path, len(data), chosen, rest, page_count, render, settings)
            if render:
                return _render(reading, output_dir, content_digest)
            return _text(reading, data, ranges is None, counter)
    except worker.Failure as failure:  # no worker could start (the rest is handled inside)
        raise _failed(path, failure) from None


@attrs.frozen
class _Reading:
    """One read's worker and the pages it asked for: `chosen` now, `rest` later."""

    job: worker.Lease
    path: str
    size: int
    chosen: list[int]
    rest: list[int]
    page_count: int
    render: bool
    settings: Settings

    def after(self, number: int) -> list[int]:
        """The pages asked for after `number`, for the next read."""
        return self.chosen[self.chosen.index(number) + 1 :] + self.rest

    def failed(self, failure: worker.Failure, number: int) -> ReadkeeperError:
        """The error for a read whose first page failed: what to try next."""
        return _page_failed(failure, number, self)

    def skipped(self, failure: worker.Failure, number: int) -> str:
        """The note for a page that failed after others were read."""
        if failure.kind == "internal":
            again = f'pages="{number}"' + (", render=true" if self.render else "")
            return f"Page {number} was skipped: {_why(failure, self.render)}; try {again} again."
        other = (
            f'read its text instead with pages="{number}" (without render)'
            if self.render
            else f'draw it instead with pages="{number}", render=true'
        )
        return f"Page {number} was skipped: {_why(failure, self.render)}; {other}."


# --- text -----------------------------------------------------------------------------


def _text(reading: _Reading, data: bytes, whole: bool, counter: TokenCounter) -> PdfResult:
    settings, path, chosen = reading.settings, reading.path, reading.chosen
    texts: list[tuple[int, str, str | None]] = []

    def take(item: worker.Item, blobs: list[bytes]) -> None:
        texts.append((int(item["number"]), str(item["text"]), item["problem"]))

    notes: list[str] = []
    skipped: int | None = None
    try:
        args = {"pages": chosen, "stop_after": _MAX_SECONDS}
        if reading.job.call("text", args, on_item=take)["stopped"]:
            notes.append(f"Stopped after {_MAX_SECONDS:.0f} s of text extraction.")
    except worker.Failure as failure:
        skipped = failure.page or chosen[len(texts)]
        if not texts:
            raise reading.failed(failure, skipped) from None
        notes.append(reading.skipped(failure, skipped))
    blocks: list[str] = []
    done: list[int] = []
    textless: list[int] = []
    for number, text, problem in texts:
        if problem is None and not text.strip():
            textless.append(number)
            problem = "no text layer on this page (scanned or drawn)"
        if problem is not None:
            text = f'[{problem}: read it as an image with pages="{number}", render=true]'
        blocks.append(f"--- page {number} ---\n{text.strip()}")
        done.append(number)
    if textless and textless == done and skipped is None:
        blank = compress(textless)
        raise ReadkeeperError(
            "unsupported",
            f"{path}: page{'s' if len(textless) > 1 else ''} {blank} "
            f"{'have' if len(textless) > 1 else 'has'} no text layer (scanned or drawn). "
            f'Read {"them" if len(textless) > 1 else "it"} as images: pages="{blank}", '
            "render=true.",
            file_path=path,
            reason="no_text_layer",
            pages=blank,
            page_count=reading.page_count,
        )

    cap = settings.max_tokens - _NOTE_ALLOWANCE
    content = "\n\n".join(blocks)
    tokens = counter.measure(content, settings.max_tokens)
    if tokens > cap:
        blocks, tokens = _fit_blocks(blocks, cap, counter)
        content = "\n\n".join(blocks)
        notes.append(f"The pages asked for are over the {settings.max_tokens:,}-token cap.")
    shown = done[: len(blocks)]
    cut_short = len(blocks) > 0 and blocks[-1].endswith(_CUT_MARK)
    unread = [p for p in chosen if p not in done and p != skipped]
    left = [p for p in done if p not in shown] + unread + reading.rest
    if cut_short:
        left = [shown[-1], *left]
    partial = bool(left) or skipped is not None
    if reading.rest and len(notes) == 0:
        notes.append(f"A read returns at most {settings.pdf_max_pages} pages.")
    next_pages = compress(left[: settings.pdf_max_pages]) if left else None
    note = None
    if partial:
        note = (
            f"Showing page{'s' if len(shown) > 1 else ''} {compress(shown)} of "
            f"{reading.page_count}. " + " ".join(notes)
        )
        if next_pages:
            note += f' Continue with pages="{next_pages}".'
    elif textless:
        note = f"Pages without a text layer: {compress(textless)} (read them with render=true)."
    inline = whole and not partial and settings.pdf_inline
    return PdfResult(
        PdfFile(
            file_path=path,
            content=content,
            page_count=reading.page_count,
            shown_pages=compress(shown),
            tokens=tokens,
            original_size=reading.size,
            partial=partial,
            next_pages=next_pages,
            note=note,
            base64=base64.b64encode(data).decode("ascii") if inline else None,
            media_type="application/pdf" if inline else None,
        )
    )


_CUT_MARK = "[page cut here: over the token cap]"


def _fit_blocks(blocks: list[str], cap: int, counter: TokenCounter) -> tuple[list[str], int]:
    """The longest prefix of `blocks` within `cap` tokens; a first block alone over the
    cap is cut (and marked) rather than dropped, so a read always makes progress."""
    kept: list[str] = []
    used = 0
    for block in blocks:
        cost = counter.count(block) + 1
        if used + cost > cap:
            break
        kept.append(block)
        used += cost
    if kept:
        return kept, counter.count("\n\n".join(kept))
    block = blocks[0]
    keep = len(block)
    while keep > 0:
        keep = int(keep * 0.9)
        candidate = block[:keep] + "\n" + _CUT_MARK
        tokens = counter.count(candidate)
        if tokens <= cap:
            return [candidate], tokens
    return [_CUT_MARK], counter.count(_CUT_MARK)


# --- rendering ------------------------------------------------------------------------


def _render(reading: _Reading, output_dir: Callable[[], str], content_digest: str) -> PartsResult:
    settings, path, chosen = reading.settings, reading.path, reading.chosen
    try:
        sizes = reading.job.call("sizes", {"pages": chosen})["sizes"]
    except worker.Failure as failure:
        raise _failed(path, failure) from None
    # Each page's scale and final size are decided here, so the worker only draws.
    plan: dict[int, tuple[float, int, int]] = {}
    for number, (width_pt, height_pt) in zip(chosen, sizes, strict=True):
        scale = _render_scale(width_pt, height_pt, settings)
        drawn = max(1, math.ceil(width_pt * scale)), max(1, math.ceil(height_pt * scale))
        plan[number] = (scale, *budget_size(*drawn, settings))

    stem = re.sub(r"[^\w.-]+", "_", os.path.splitext(os.path.basename(path))[0])[:40]
    notes: list[str] = []
    skipped: int | None = None
    stopped = False
    # Named by content: the same pages of the same PDF are drawn once per session.
    have: set[int] = set()
    try:
        with _PageFolder(output_dir(), f"{stem}-{content_digest[:12]}") as folder:
            have.update(n for n in chosen if folder.has(_page_name(n)))
            missing = [n for n in chosen if n not in have]

            def take(item: worker.Item, blobs: list[bytes]) -> None:
                number = int(item["number"])
                folder.write(_page_name(number), blobs[0])
                have.add(number)

            if missing:
                drawing = [[n, *plan[n]] for n in missing]
                try:
                    args = {"pages": drawing, "stop_after": _MAX_SECONDS}
                    stopped = reading.job.call("render", args, on_item=take)["stopped"]
                except worker.Failure as failure:
                    skipped = failure.page or next(n for n in missing if n not in have)
                    if not any(n in have for n in chosen[: chosen.index(skipped)]):
                        raise reading.failed(failure, skipped) from None
                    notes.append(reading.skipped(failure, skipped))
    except OSError as exc:
        raise ReadkeeperError(
            "internal",
            f"{path}: the rendered pages could not be written to readkeeper's output folder "
            f"({exc.strerror or exc}). Try the read again; if it fails again, read the pages "
            "as text (without render).",
            file_path=path,
            reason=str(exc),
        ) from None
    shown: list[int] = []
    for number in chosen:
        if number not in have:
            break
        shown.append(number)
    unread = [p for p in chosen[len(shown) :] if p != skipped]
    left = unread + reading.rest
    next_pages = compress(left[: settings.pdf_max_pages]) if left else None
    image_tokens = sum(tokens_for(*plan[n][1:]) for n in shown)
    note = (
        "Read each page file with readkeeper/read to see it "
        f"(about {image_tokens // max(1, len(shown)):,} tokens a page)."
    )
    if skipped is not None:
        more = f' Continue with pages="{next_pages}", render=true.' if next_pages else ""
        note = (
            f"Rendered page{'s' if len(shown) > 1 else ''} {compress(shown)} of "
            f"{reading.page_count}. {' '.join(notes)}{more} {note}"
        )
    elif left:
        why = (
            f"rendering stopped after {_MAX_SECONDS:.0f} s"
            if stopped
            else f"a read renders at most {settings.pdf_max_pages} pages"
        )
        note = (
            f"Rendered pages {compress(shown)} of {reading.page_count} ({why}); continue with "
            f'pages="{next_pages}", render=true. {note}'
        )
    file = PartsFile(
        file_path=path,
        count=len(shown),
        output_dir=folder.path,
        pages=[os.path.join(folder.path, _page_name(n)) for n in shown],
        page_numbers=shown,
        page_count=reading.page_count,
        tokens=0,
        image_tokens=image_tokens,
        original_size=reading.size,
        partial=bool(left) or skipped is not None,
        next_pages=next_pages,
        note=note,
    )
    # The result is paths and numbers: its cost is its own size.
    return PartsResult(attrs.evolve(file, tokens=estimate_tokens(repr(file))))


def _page_name(number: int) -> str:
    return f"page-{number:04d}.png"


class _PageFolder:
    """A folder of rendered pages, opened once: every file in it is checked and written
    relative to its descriptor with O_NOFOLLOW, so a symlink planted in it, or in place
    of it, redirects nothing."""

    def __init__(self, parent: str, name: str) -> None:
        parent_fd = os.open(parent, _DIRECTORY_FLAGS)
        try:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o700, dir_fd=parent_fd)
            self.fd = os.open(name, _DIRECTORY_FLAGS, dir_fd=parent_fd)
        finally:
            os.close(parent_fd)
        self.path = os.path.join(parent, name)

    def __enter__(self) -> _PageFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)

    def has(self, name: str) -> bool:
        try:
            info = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        return stat.S_ISREG(info.st_mode)

    def write(self, name: str, data: bytes) -> None:
        """`name` with `data`, whole or not at all (two reads may draw the same page)."""
        temp = f".{name}.{os.urandom(6).hex()}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temp, flags, 0o600, dir_fd=self.fd)
        try:
            with open(fd, "wb") as out:
                out.write(data)
            os.replace(temp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=self.fd)
            raise


def _render_scale(width_pt: float, height_pt: float, settings: Settings) -> float:
    """Pixels per point so the page fits the image budget (and is no sharper than 300 dpi)."""
    width_pt, height_pt = max(width_pt, 1.0), max(height_pt, 1.0)
    return min(
        _MAX_RENDER_SCALE,
        settings.image_max_edge / max(width_pt, height_pt),
        math.sqrt(settings.image_max_tokens * PIXELS_PER_TOKEN / (width_pt * height_pt)),
    )


# --- opening --------------------------------------------------------------------------


def _page_count(job: worker.Lease, data: bytes, path: str) -> int:
    """The page count, from the worker that opened the PDF (the first job of a read)."""
    try:
        return int(job.call("open", data=data)["page_count"])
    except worker.Failure as failure:
        raise _failed(path, failure) from None


def _expand(ranges: Ranges, page_count: int, path: str, max_pages: int) -> list[int]:
    wanted: dict[int, None] = {}
    for first, last in ranges:
        if first > page_count:
            cap = f" (a read returns at most {max_pages} pages)" if page_count > max_pages else ""
            raise ReadkeeperError(
                "bad_params",
                f"Page {first} is past the end of {path}, which has {page_count} "
                f'page{"s" if page_count > 1 else ""}. Ask for pages="1-'
                f'{min(page_count, max_pages)}"{cap} or fewer.',
                field="pages",
                page_count=page_count,
            )
        for number in range(first, min(last or page_count, page_count) + 1):
            wanted[number] = None
    return list(wanted)


def _pages_required(
    path: str, page_count: int, size: int, render: bool, settings: Settings
) -> ReadkeeperError:
    first = f"1-{min(page_count, settings.pdf_max_pages)}"  # all that one read returns
    why = (
        f"{page_count} pages"
        if page_count > settings.pdf_whole_max_pages
        else f"{page_count} pages but {size:,} bytes"
    )
    extra = ", render=true" if render else ""
    return ReadkeeperError(
        "pages_required",
        f"{path} has {why}, too much to read whole. Read it in parts, at most "
        f'{settings.pdf_max_pages} pages at a time: start with pages="{first}"{extra}.',
        file_path=path,
        page_count=page_count,
        suggested_pages=first,
        max_pages=settings.pdf_max_pages,
    )


def _bad_pages(spec: str, why: str) -> ReadkeeperError:
    return ReadkeeperError(
        "bad_params",
        f'pages={spec!r} cannot be read: {why}. Use a page ("3"), a range ("1-5"), '
        'ranges ("2,4-6") or a range to the end ("7-").',
        field="pages",
    )


# --- failures -------------------------------------------------------------------------


def _why(failure: worker.Failure, render: bool) -> str:
    """What went wrong on a page, for a note."""
    doing = "drawing it" if render else "reading its text"
    if failure.kind == "too_large":
        return f"{doing} went over {failure.reason}"
    if failure.kind == "corrupt":
        return f"{doing} failed ({failure.reason}): the file is likely damaged there"
    return f"the PDF worker stopped ({failure.reason})"


def _failed(path: str, failure: worker.Failure) -> ReadkeeperError:
    """The error for a PDF that could not be opened at all."""
    if failure.kind == "encrypted":
        return ReadkeeperError(
            "encrypted",
            f"{path} is encrypted and needs a password to open. Ask the user for a copy "
            "without a password (e.g. `qpdf --decrypt --password=... in.pdf out.pdf`).",
            file_path=path,
        )
    if failure.kind == "corrupt":
        return _corrupt(path, failure.reason)
    if failure.kind == "too_large":
        return ReadkeeperError(
            "too_large",
            f"{path} could not be opened within the limits of PDF reading: it went over "
            f"{failure.reason}. It is built to exhaust memory or time, or is far too "
            "complex. Ask the user for a simpler copy (e.g. printed to PDF again).",
            file_path=path,
            reason=failure.reason,
        )
    return ReadkeeperError(
        "internal",
        f"{path}: the PDF worker stopped while opening it ({failure.reason}). Try the "
        "same read again.",
        file_path=path,
        reason=failure.reason,
    )


def _page_failed(failure: worker.Failure, number: int, reading: _Reading) -> ReadkeeperError:
    """The error for a read whose first page could not be read or drawn."""
    path, render = reading.path, reading.render
    if failure.kind == "encrypted":
        return _failed(path, failure)
    after = reading.after(number)
    rest = compress(after[: reading.settings.pdf_max_pages])
    skip = f' Go on with the pages after it: pages="{rest}"' + (", render=true." if render else ".")
    if not rest:
        skip = ""
    data: dict[str, Any] = {
        "file_path": path,
        "page": number,
        "reason": failure.reason,
        "page_count": reading.page_count,
    }
    if failure.kind == "internal":
        return ReadkeeperError(
            "internal",
            f"{path}: the PDF worker stopped while on page {number} ({failure.reason}). Try "
            "the same read again.",
            **data,
        )
    other = (
        f'Read its text instead: pages="{number}" without render.'
        if render
        else f'Draw it instead: pages="{number}", render=true.'
    )
    if failure.kind == "too_large":
        message = (
            f"{path}: page {number} is too much to {'draw' if render else 'read as text'}: "
            f"it went over {failure.reason}, so it is built to exhaust memory or time (a "
            f"decompression bomb, say) or is far too complex. {other}{skip}"
        )
    else:
        message = (
            f"{path}: page {number} could not be {'drawn' if render else 'read'} "
            f"({failure.reason}): the file is likely damaged there. {other}{skip} Or ask the "
            "user for an intact copy (or repair it: `qpdf in.pdf out.pdf`)."
        )
    return ReadkeeperError(failure.kind, message, **data)


def _corrupt(path: str, detail: str) -> ReadkeeperError:
    return ReadkeeperError(
        "corrupt",
        f"{path} is not a readable PDF ({detail}). It may be truncated or damaged: ask the "
        "user for an intact copy, or repair it (e.g. `qpdf in.pdf out.pdf`) and read that.",
        file_path=path,
        detail=detail,
    )
