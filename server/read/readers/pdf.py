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
memory and time limits, and these modules keep the policy (which pages, what the agent
is told): this one the tiers and the text, pdf_pages.py the page specs, pdf_render.py
the drawing, pdf_reading.py the failures. A read stops starting new pages after
`pdf_reading.MAX_SECONDS`; a page that hits a limit or crashes the worker ends the read
there, with what came before it and a note, or, when it was the first, with an error
(`too_large`, `corrupt`) that names the page and the read to try next.
"""

from __future__ import annotations

import base64
from collections.abc import Callable

from ... import quoting
from ...errors import ReadkeeperError, library_detail, with_library_words
from ...hints import again
from ...protocol import PartsResult, PdfFile, PdfResult
from ...settings import Settings
from ...words import compress
from ..room import NO_ROOM, Room, chars_words, lines_cap
from ..tokens import TokenCounter
from ..within import count_until, count_within
from . import pdf_reading, worker
from .pdf_pages import Ranges, expand, pages_required, parse_pages
from .pdf_reading import Reading, open_failed
from .pdf_render import page_plan, render_pages

# The words of a PDF read's note besides its way on (room.py sets that aside): pages
# stopped, skipped, over the cap, at most N a read, pages without their text; and the
# calls it may name more beside the two for the rest: a cut page's drawing, the pages
# without their text drawn (a read that names no rest names two: those and the pages
# after).
_NOTE_TOKENS = 160
_NOTE_CALLS = 2


def read_pdf(
    data: bytes,
    path: str,
    pages: str | None,
    render: bool,
    output_dir: Callable[[], str],
    content_digest: str,
    settings: Settings,
    counter: TokenCounter,
    room: Room = NO_ROOM,
) -> PdfResult | PartsResult:
    """The `pdf` (text) or `parts` (rendered pages) result for a PDF's bytes; `room`:
    what the read sends besides its pages (read/room.py)."""
    ranges = parse_pages(pages) if pages is not None else None
    kept = room.cut + _NOTE_TOKENS + _NOTE_CALLS * room.call
    try:
        return _read(
            data,
            path,
            ranges,
            render,
            output_dir,
            content_digest,
            settings,
            counter,
            kept,
            room.chars,
        )
    except ReadkeeperError as refused:
        if not (refused.kind in ("too_large", "corrupt") and "page" in refused.data):
            raise
        # The other way is asked before the refusal names it (it says to draw the page
        # or to read its text): when that fails too, the refusal names neither.
        why = _other_fails(data, int(refused.data["page"]), render, settings)
        if why is None:
            raise
        raise pdf_reading.neither_way(refused, why, render) from None


def _other_fails(data: bytes, number: int, render: bool, settings: Settings) -> str | None:
    """Why page `number` does not show the other way (its text when `render`, else its
    drawing), or None when it does."""
    return _text_fails(data, number) if render else _draw_fails(data, number, settings)


def _problem(item: worker.Item) -> str | None:
    """Why a page's text did not come, as the worker said it: readkeeper's words, then
    the library's apart, quoted (errors.with_library_words: they may echo the file)."""
    problem, words = item["problem"], item.get("words")
    if not problem:
        return None
    own = quoting.phrase(library_detail(str(problem), ""))
    return with_library_words(own, words)


def _text_fails(data: bytes, number: int) -> str | None:
    """Why page `number`'s text cannot be read, or None when it can: asked (with a worker
    of its own) before a refusal to draw the page sends the agent to its text."""
    said: list[tuple[str, str | None]] = []

    def take(item: worker.Item, blobs: list[bytes]) -> None:
        said.append((str(item["text"]), _problem(item)))

    try:
        with worker.lease() as job:
            job.call("open", data=data)
            job.call("text", {"pages": [number], "stop_after": 0}, on_item=take)
    except worker.Failure as failure:
        return (
            f"reading it went over {failure.reason}"
            if failure.kind == "too_large"
            else (f"reading it failed: {failure.reason}")
        )
    text, problem = said[0] if said else ("", "no text came back")
    if problem is not None:
        return problem
    return None if text.strip() else "it has no text layer"


def _draw_fails(data: bytes, number: int, settings: Settings) -> str | None:
    """Why page `number` cannot be drawn (as a render would draw it), or None when it can:
    asked (with a worker of its own) before a refusal or note about its text sends the
    agent to draw it."""
    try:
        with worker.lease() as job:
            job.call("open", data=data)
            [(width_pt, height_pt)] = job.call("sizes", {"pages": [number]})["sizes"]
            drawing = [[number, *page_plan(width_pt, height_pt, settings)]]
            job.call("render", {"pages": drawing, "stop_after": 0}, on_item=lambda *_: None)
    except worker.Failure as failure:
        if failure.kind == "too_large":
            return f"drawing it went over {failure.reason}"
        return f"drawing it failed: {failure.reason}"
    return None


def _read(
    data: bytes,
    path: str,
    ranges: Ranges | None,
    render: bool,
    output_dir: Callable[[], str],
    content_digest: str,
    settings: Settings,
    counter: TokenCounter,
    room: int,
    chars: int,
) -> PdfResult | PartsResult:
    try:
        with worker.lease() as job:
            page_count = _page_count(job, data, path)
            if ranges is None:
                if (
                    page_count > settings.pdf_whole_max_pages
                    or len(data) > settings.pdf_whole_max_bytes
                ):
                    raise pages_required(path, page_count, len(data), render, settings)
                wanted = list(range(1, page_count + 1))
            else:
                wanted = expand(ranges, page_count, path, settings.pdf_max_pages)
            chosen = wanted[: settings.pdf_max_pages]
            rest = wanted[settings.pdf_max_pages :]
            reading = Reading(
                job,
                path,
                len(data),
                chosen,
                rest,
                page_count,
                render,
                settings,
                lambda n: _other_fails(data, n, render, settings),
                room,
                chars,
            )
            if render:
                return render_pages(reading, output_dir, content_digest, counter)
            return _text(reading, data, ranges is None, counter)
    except worker.Failure as failure:  # no worker could start (the rest is handled inside)
        raise open_failed(path, failure) from None


def _page_count(job: worker.Lease, data: bytes, path: str) -> int:
    """The page count, from the worker that opened the PDF (the first job of a read)."""
    try:
        return int(job.call("open", data=data)["page_count"])
    except worker.Failure as failure:
        raise open_failed(path, failure) from None


# --- text -----------------------------------------------------------------------------


def _text(reading: Reading, data: bytes, whole: bool, counter: TokenCounter) -> PdfResult:
    settings, path, chosen = reading.settings, reading.path, reading.chosen
    texts: list[tuple[int, str, str | None]] = []

    def take(item: worker.Item, blobs: list[bytes]) -> None:
        texts.append((int(item["number"]), str(item["text"]), _problem(item)))

    notes: list[str] = []
    skipped: int | None = None
    try:
        args = {"pages": chosen, "stop_after": pdf_reading.MAX_SECONDS}
        if reading.job.call("text", args, on_item=take)["stopped"]:
            notes.append(f"Stopped after {pdf_reading.MAX_SECONDS:.0f} s of text extraction.")
    except worker.Failure as failure:
        skipped = failure.page or chosen[len(texts)]
        if not texts:
            raise reading.failed(failure, skipped) from None
        notes.append(reading.skipped(failure, skipped))
    blocks: list[str] = []
    done: list[int] = []
    textless: list[int] = []
    drawable: list[int] = []  # pages shown as images instead: named in the note
    asked: dict[str, tuple[int, str | None]] = {}
    for number, text, problem in texts:
        if problem is None and not text.strip():
            textless.append(number)
            problem = "no text layer on this page (scanned or drawn)"
        if problem is not None:
            told = _unread(number, problem, number in textless, asked, data, settings)
            if told is None:
                drawable.append(number)
                told = f"[{problem}: read it as an image (the note says how)]"
            blocks.append(f"--- page {number} ---\n{told}")
        else:  # the page's words fenced (none can pose as the next page's header), a cut
            # marker's `[` of their own escaped (quoting.marks)
            blocks.append(f"--- page {number} ---\n{quoting.fence(quoting.marks(text.strip()))}")
        done.append(number)
    if textless and textless == done and skipped is None:
        blank = compress(textless)
        raise ReadkeeperError(
            "unsupported",
            f"{path}: page{'s' if len(textless) > 1 else ''} {blank} "
            f"{'have' if len(textless) > 1 else 'has'} no text layer (scanned or drawn). "
            f"Read {'them' if len(textless) > 1 else 'it'} as images: "
            f"{again(pages=blank, render=True)}.",
            file_path=path,
            reason="no_text_layer",
            pages=blank,
            page_count=reading.page_count,
        )

    cap = lines_cap(settings.max_tokens, reading.room)
    content = "\n\n".join(blocks)
    fits = quoting.sent_chars(content) <= reading.chars
    within = count_within(counter, content, cap) if fits else None
    if within is not None:
        tokens = within
    else:
        blocks, tokens, by_chars = _fit_blocks(blocks, cap, counter, reading.chars)
        content = "\n\n".join(blocks)
        over = f"the {settings.max_tokens:,}-token cap"
        if by_chars:
            over = f"{over} or {chars_words(reading.chars)}"
        notes.append(f"The pages asked for are over {over}.")
    shown = done[: len(blocks)]
    cut_short = len(blocks) > 0 and blocks[-1].endswith(PAGE_CUT_MARK)
    unread = [p for p in chosen if p not in done and p != skipped]
    left = [p for p in done if p not in shown] + unread + reading.rest
    if cut_short:
        # A first page alone over the cap, cut: read again, it is cut the same (round 34:
        # the way on named it again, forever). Its rest shows drawn; the read goes on after.
        notes.append(
            f"The rest of page {shown[-1]} is over the cap on its own: read it as an image "
            f"({again(pages=str(shown[-1]), render=True)})."
        )
    partial = bool(left) or skipped is not None or cut_short
    if reading.rest and len(notes) == 0:
        notes.append(f"A read returns at most {settings.pdf_max_pages} pages.")
    # The pages shown without their text, drawn instead: said in the note, where each
    # front end says the call whole (round 35: each page's block named a bare run, and a
    # cut read named no call for them).
    drawn = compress([p for p in drawable if p in shown])
    if drawn:
        notes.append(
            f"Pages shown without their text (each says why): {drawn}. Read them as "
            f"images: {again(pages=drawn, render=True)}."
        )
    next_pages = compress(left[: settings.pdf_max_pages]) if left else None
    note = None
    if partial:
        note = (
            f"Showing page{'s' if len(shown) > 1 else ''} {compress(shown)} of "
            f"{reading.page_count}. " + " ".join(notes)
        )
        if next_pages:
            note += f" Continue with {again(pages=next_pages)}."
    elif drawn:
        note = " ".join(notes)  # the pages to draw (the same read: each front end says it whole)
    if not partial and shown and shown[-1] < reading.page_count:  # round 32, A20
        after = compress(
            list(range(shown[-1] + 1, reading.page_count + 1))[: settings.pdf_max_pages]
        )
        onward = f"The pages after {shown[-1]}: {again(pages=after)}."
        note = f"{note} {onward}" if note else onward
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


PAGE_CUT_MARK = "[page cut here: over the token cap]"


# The most pages a text read draws to learn whether a page whose text failed draws.
_MAX_DRAWS_ASKED = 2


def _unread(
    number: int,
    problem: str,
    textless: bool,
    asked: dict[str, tuple[int, str | None]],
    data: bytes,
    settings: Settings,
) -> str | None:
    """The note standing for page `number`'s text, which did not come (`problem`); None
    when the page draws (asked first, once for each problem, at most `_MAX_DRAWS_ASKED`
    a read; a textless page, a scan, draws), which the read's note names. A page whose
    problem is one a page did not draw with is told so, naming no read."""
    if not textless and problem not in asked and len(asked) < _MAX_DRAWS_ASKED:
        asked[problem] = (number, _draw_fails(data, number, settings))
    first, why = asked.get(problem, (number, None))
    if why is None:
        return None  # it draws: the note names the drawing
    if first == number:
        return f"[{problem}, and {why}: no read shows it; ask the user what it says]"
    return (
        f"[{problem}, as on page {first}, which did not draw either ({why}): ask the user "
        "what it says]"
    )


def _fit_blocks(
    blocks: list[str], cap: int, counter: TokenCounter, chars: int
) -> tuple[list[str], int, bool]:
    """The longest prefix of `blocks` within `cap` tokens and `chars` characters, its
    tokens, and whether the characters stopped it; a first block alone over the cap is
    cut (and marked) rather than dropped, so a read always makes progress."""
    kept: list[str] = []
    used = used_chars = 0
    by_chars = False
    for block in blocks:
        used_chars += quoting.sent_chars(block) + 2
        by_chars = used_chars > chars
        cost = None if by_chars else count_within(counter, block, cap - used - 1)
        if cost is None:
            break
        kept.append(block)
        used += cost + 1
    if kept:
        return kept, counter.count("\n\n".join(kept)), by_chars
    block = blocks[0]
    keep = over = len(block)
    over = min(over, chars - len(PAGE_CUT_MARK))  # every longer prefix is over in characters
    by_chars = over < len(block) or quoting.sent_chars(block) > chars
    while keep > 0:
        keep = int(keep * 0.9)
        if keep >= over:
            continue  # a longer prefix was over already
        candidate = block[:keep] + "\n" + PAGE_CUT_MARK
        if quoting.sent_chars(candidate) > chars:  # as JSON writes it (controls: six each)
            continue
        tokens, over = count_until(counter, candidate, cap)
        if tokens is not None:
            return [candidate], tokens, by_chars
    return [PAGE_CUT_MARK], counter.count(PAGE_CUT_MARK), by_chars
