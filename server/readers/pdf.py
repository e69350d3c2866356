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
empty); pypdfium2 renders, and extracts the text of pages too large for pypdf. Work is
bounded: a page's extractor is chosen by the size of its content stream (pages over
`_MAX_PAGE_CONTENT_BYTES` are not parsed for text), a read stops taking new pages after
`_MAX_SECONDS`, and pypdf's own caps bound decompression. A page cannot be interrupted
once started (Python or C in this thread), hence the bounds on what a page may hold.
"""

from __future__ import annotations

import base64
import io
import logging
import math
import os
import re
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from ..errors import ReadkeeperError
from ..protocol import PartsFile, PartsResult, PdfFile, PdfResult
from ..settings import Settings
from ..tokens import TokenCounter, estimate_tokens
from .image import PIXELS_PER_TOKEN, budget_size, tokens_for

if TYPE_CHECKING:
    from pypdf import PdfReader

# pypdf's text extraction is pure Python and grows faster than the page's content (a
# 1 MB content stream takes seconds); larger pages go to pdfium's (C, linear, about
# 0.4 s a MB here), and pages past the hard cap are not parsed for text at all.
_PYPDF_MAX_CONTENT_BYTES = 256 * 1024
_MAX_PAGE_CONTENT_BYTES = 8 * 1024 * 1024
_MAX_SECONDS = 10.0
# Rendering never goes past this many pixels per PDF point (300 dpi).
_MAX_RENDER_SCALE = 300 / 72
_NOTE_ALLOWANCE = 64
# pdfium is not thread-safe: one rendering at a time in this process.
_PDFIUM_LOCK = threading.Lock()
_RANGE_RE = re.compile(r"(\d+)(?:(-)(\d*))?")

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
    """[1, 2, 3, 5] as '1-3,5'."""
    parts: list[str] = []
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
    reader = _open(data, path)
    page_count = _page_count(reader, path)
    if ranges is None:
        if page_count > settings.pdf_whole_max_pages or len(data) > settings.pdf_whole_max_bytes:
            raise _pages_required(path, page_count, len(data), render, settings)
        wanted = list(range(1, page_count + 1))
    else:
        wanted = _expand(ranges, page_count, path)
    chosen = wanted[: settings.pdf_max_pages]
    rest = wanted[settings.pdf_max_pages :]
    if render:
        return _render(data, path, chosen, rest, page_count, output_dir, content_digest, settings)
    return _text(reader, data, path, chosen, rest, page_count, ranges is None, settings, counter)


# --- text -----------------------------------------------------------------------------


def _text(
    reader: PdfReader,
    data: bytes,
    path: str,
    chosen: list[int],
    rest: list[int],
    page_count: int,
    whole: bool,
    settings: Settings,
    counter: TokenCounter,
) -> PdfResult:
    deadline = time.monotonic() + _MAX_SECONDS
    blocks: list[str] = []
    done: list[int] = []
    textless: list[int] = []
    notes: list[str] = []
    for number in chosen:
        if time.monotonic() > deadline:
            notes.append(f"Stopped after {_MAX_SECONDS:.0f} s of text extraction.")
            break
        text, problem = _page_text(reader, data, number)
        if problem is None and not text.strip():
            textless.append(number)
            problem = "no text layer on this page (scanned or drawn)"
        if problem is not None:
            text = f'[{problem}: read it as an image with pages="{number}", render=true]'
        blocks.append(f"--- page {number} ---\n{text.strip()}")
        done.append(number)
    if textless and textless == done:
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
            page_count=page_count,
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
    left = [p for p in done if p not in shown] + [p for p in chosen if p not in done] + rest
    if cut_short:
        left = [shown[-1], *left]
    partial = bool(left)
    if rest and len(notes) == 0:
        notes.append(f"A read returns at most {settings.pdf_max_pages} pages.")
    next_pages = compress(left[: settings.pdf_max_pages]) if left else None
    note = None
    if partial:
        note = (
            f"Showing page{'s' if len(shown) > 1 else ''} {compress(shown)} of {page_count}. "
            + " ".join(notes)
            + f' Continue with pages="{next_pages}".'
        )
    elif textless:
        note = f"Pages without a text layer: {compress(textless)} (read them with render=true)."
    inline = whole and not partial and settings.pdf_inline
    return PdfResult(
        PdfFile(
            file_path=path,
            content=content,
            page_count=page_count,
            shown_pages=compress(shown) if shown else "",
            tokens=tokens,
            original_size=len(data),
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


def _page_text(reader: PdfReader, data: bytes, number: int) -> tuple[str, str | None]:
    """The text of page `number`, or why there is none to show."""
    try:
        page = reader.pages[number - 1]
        contents = page.get_contents()
        size = len(contents.get_data()) if contents is not None else 0
        if size > _MAX_PAGE_CONTENT_BYTES:
            return "", f"page content too large to extract text from ({size:,} bytes)"
        if size > _PYPDF_MAX_CONTENT_BYTES:
            return _pdfium_text(data, number), None
        return page.extract_text(), None
    except Exception as exc:  # a damaged page spoils that page, not the whole read
        return "", f"text could not be extracted ({_describe(exc)})"


def _pdfium_text(data: bytes, number: int) -> str:
    import pypdfium2 as pdfium

    with _PDFIUM_LOCK:
        document = pdfium.PdfDocument(data)
        try:
            page = document[number - 1]
            try:
                textpage = page.get_textpage()
                try:
                    return str(textpage.get_text_bounded())
                finally:
                    textpage.close()
            finally:
                page.close()
        finally:
            document.close()


# --- rendering ------------------------------------------------------------------------


def _render(
    data: bytes,
    path: str,
    chosen: list[int],
    rest: list[int],
    page_count: int,
    output_dir: Callable[[], str],
    content_digest: str,
    settings: Settings,
) -> PartsResult:
    import pypdfium2 as pdfium

    stem = re.sub(r"[^\w.-]+", "_", os.path.splitext(os.path.basename(path))[0])[:40]
    # Named by content: the same pages of the same PDF are drawn once per session.
    folder = os.path.join(output_dir(), f"{stem}-{content_digest[:12]}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    files: list[str] = []
    image_tokens = 0
    deadline = time.monotonic() + _MAX_SECONDS
    with _PDFIUM_LOCK:
        try:
            document = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            raise _corrupt(path, exc) from None
        try:
            for number in chosen:
                if time.monotonic() > deadline:
                    break
                target = os.path.join(folder, f"page-{number:04d}.png")
                page = document[number - 1]
                try:
                    width_pt, height_pt = page.get_size()
                    scale = _render_scale(width_pt, height_pt, settings)
                    if not os.path.exists(target):
                        bitmap = page.render(scale=scale)
                        try:
                            picture = bitmap.to_pil()
                            size = budget_size(picture.width, picture.height, settings)
                            if size != picture.size:  # rounding in pdfium's favour
                                picture = picture.resize(size)
                            partial_file = f"{target}.{os.getpid()}.{threading.get_ident()}"
                            picture.save(partial_file, "PNG", compress_level=3)
                            os.replace(partial_file, target)  # never a half-written page
                        finally:
                            bitmap.close()
                    width, height = budget_size(
                        max(1, round(width_pt * scale)), max(1, round(height_pt * scale)), settings
                    )
                    image_tokens += tokens_for(width, height)
                finally:
                    page.close()
                files.append(target)
        finally:
            document.close()
    shown = chosen[: len(files)]
    left = chosen[len(files) :] + rest
    next_pages = compress(left[: settings.pdf_max_pages]) if left else None
    note = (
        "Read each page file with readkeeper/read to see it "
        f"(about {image_tokens // max(1, len(files)):,} tokens a page)."
    )
    if left:
        why = (
            f"a read renders at most {settings.pdf_max_pages} pages"
            if len(shown) == len(chosen)
            else f"rendering stopped after {_MAX_SECONDS:.0f} s"
        )
        note = (
            f"Rendered pages {compress(shown)} of {page_count} ({why}); continue with "
            f'pages="{next_pages}", render=true. {note}'
        )
    file = PartsFile(
        file_path=path,
        count=len(files),
        output_dir=folder,
        pages=files,
        page_numbers=shown,
        page_count=page_count,
        tokens=0,
        image_tokens=image_tokens,
        original_size=len(data),
        partial=bool(left),
        next_pages=next_pages,
        note=note,
    )
    # The result is paths and numbers: its cost is its own size.
    return PartsResult(attrs.evolve(file, tokens=estimate_tokens(repr(file))))


def _render_scale(width_pt: float, height_pt: float, settings: Settings) -> float:
    """Pixels per point so the page fits the image budget (and is no sharper than 300 dpi)."""
    width_pt, height_pt = max(width_pt, 1.0), max(height_pt, 1.0)
    return min(
        _MAX_RENDER_SCALE,
        settings.image_max_edge / max(width_pt, height_pt),
        math.sqrt(settings.image_max_tokens * PIXELS_PER_TOKEN / (width_pt * height_pt)),
    )


# --- opening --------------------------------------------------------------------------


def _open(data: bytes, path: str) -> PdfReader:
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError

    # pypdf logs a warning for every flaw it works around: thousands for a hostile file.
    logging.getLogger("pypdf").setLevel(logging.ERROR)

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            # pypdf tries the empty user password itself: most "encrypted" PDFs only
            # restrict printing or copying, and open without one.
            len(reader.pages)  # raises when a password is needed
    except FileNotDecryptedError:
        raise ReadkeeperError(
            "encrypted",
            f"{path} is encrypted and needs a password to open. Ask the user for a copy "
            "without a password (e.g. `qpdf --decrypt --password=... in.pdf out.pdf`).",
            file_path=path,
        ) from None
    except Exception as exc:
        raise _corrupt(path, exc) from None
    return reader


def _page_count(reader: PdfReader, path: str) -> int:
    try:
        count = len(reader.pages)
    except Exception as exc:
        raise _corrupt(path, exc) from None
    if count == 0:
        raise _corrupt(path, ValueError("it has no pages"))
    return count


def _expand(ranges: Ranges, page_count: int, path: str) -> list[int]:
    wanted: dict[int, None] = {}
    for first, last in ranges:
        if first > page_count:
            raise ReadkeeperError(
                "bad_params",
                f"Page {first} is past the end of {path}, which has {page_count} "
                f'page{"s" if page_count > 1 else ""}. Ask for pages="1-{page_count}" '
                "or fewer.",
                field="pages",
                page_count=page_count,
            )
        for number in range(first, min(last or page_count, page_count) + 1):
            wanted[number] = None
    return list(wanted)


def _pages_required(
    path: str, page_count: int, size: int, render: bool, settings: Settings
) -> ReadkeeperError:
    first = f"1-{min(page_count, settings.pdf_whole_max_pages, settings.pdf_max_pages)}"
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


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _corrupt(path: str, exc: Any) -> ReadkeeperError:
    detail = _describe(exc)
    return ReadkeeperError(
        "corrupt",
        f"{path} is not a readable PDF ({detail}). It may be truncated or damaged: ask the "
        "user for an intact copy, or repair it (e.g. `qpdf in.pdf out.pdf`) and read that.",
        file_path=path,
        detail=detail,
    )
