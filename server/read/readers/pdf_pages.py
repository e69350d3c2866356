"""PDF page specs: '3', '1-5', '2,4-6', '7-', as a read asks for pages and as its
answer names them (`words.compress`), and the refusals of pages that cannot be read."""

from __future__ import annotations

import re

from ... import quoting, words
from ...errors import ReadkeeperError
from ...hints import again
from ...protocol.convert import as_sent
from ...settings import Settings

_RANGE_RE = re.compile(r"(\d+)(?:(-)(\d*))?")

Ranges = list[tuple[int, int | None]]  # (first, last); last None means "to the end"


def parse_pages(spec: str) -> Ranges:
    """'3', '1-5', '2,4-6', '7-' as 1-based inclusive ranges; `bad_params` otherwise."""
    ranges: Ranges = []
    for part in spec.replace(" ", "").split(","):
        match = _RANGE_RE.fullmatch(part)
        if match is None:
            raise _bad_pages(spec, f"{as_sent(part)} is not a page or a range")
        first = words.whole(match[1])
        last = None if match[2] and not match[3] else words.whole(match[3] or match[1])
        if first < 1 or (last is not None and last < first):
            raise _bad_pages(spec, f"{as_sent(part)} is not a range of pages counted from 1")
        ranges.append((first, last))
    return ranges


def canonical_pages(spec: str | None) -> str:
    """A normal form of `spec`, for telling whether two reads asked for the same pages."""
    if spec is None:
        return ""
    return ",".join(
        f"{a}" if a == b else f"{a}-{'' if b is None else b}" for a, b in parse_pages(spec)
    )


def expand(ranges: Ranges, page_count: int, path: str, max_pages: int) -> list[int]:
    """The pages `ranges` name in a PDF of `page_count` pages, in order, each once;
    `bad_params` for a range that starts past the end."""
    wanted: dict[int, None] = {}
    for first, last in ranges:
        if first > page_count:
            cap = f" (a read returns at most {max_pages} pages)" if page_count > max_pages else ""
            raise ReadkeeperError(
                "bad_params",
                f"Page {first} is past the end of {quoting.name(path)}, which has {page_count} "
                f"page{'s' if page_count > 1 else ''}. Ask for "
                f"{again(pages=f'1-{min(page_count, max_pages)}')}"
                f"{cap} or fewer pages.",
                field="pages",
                page_count=page_count,
            )
        for number in range(first, min(last or page_count, page_count) + 1):
            wanted[number] = None
    return list(wanted)


def pages_required(
    path: str, page_count: int, size: int, render: bool, settings: Settings
) -> ReadkeeperError:
    """The refusal of a whole read of a PDF too big to read whole, with the first pages
    to ask for."""
    first = f"1-{min(page_count, settings.pdf_max_pages)}"  # all that one read returns
    why = (
        words.count(page_count, "page")
        if page_count > settings.pdf_whole_max_pages
        else f"{words.count(page_count, 'page')} but {size:,} bytes"
    )
    start = again(pages=first)  # the read just refused, its other options kept
    return ReadkeeperError(
        "pages_required",
        f"{path} has {why}, too much to read whole. Read it in parts, at most "
        f"{settings.pdf_max_pages} pages at a time: start with {start}.",
        file_path=path,
        page_count=page_count,
        suggested_pages=first,
        max_pages=settings.pdf_max_pages,
    )


def _bad_pages(spec: str, why: str) -> ReadkeeperError:
    return ReadkeeperError(
        "bad_params",
        f"pages {as_sent(spec)} cannot be read: {why}. Use a page "
        '("3"), a range ("1-5"), '
        'ranges ("2,4-6") or a range to the end ("7-").',
        field="pages",
    )
