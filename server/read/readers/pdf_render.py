"""PDF pages drawn to PNG files (`render=true`), each sized to the image budget, for
scanned pages, slides and drawings. The worker draws; this module decides each page's
scale, and writes the pages into the session's output folder through its open
descriptor, never by a path a symlink could redirect. The answer (`parts`) lists the
files, for the agent to read each as an image."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import stat
from collections.abc import Callable

import attrs

from ...errors import ReadkeeperError
from ...hints import again, call
from ...progress import step
from ...protocol import PartsFile, PartsResult, unstructure
from ...settings import Settings
from ...words import compress
from ..tokens import TokenCounter
from . import pdf_reading, worker
from .image import PIXELS_PER_TOKEN, budget_size, tokens_for
from .pdf_reading import Reading, open_failed

# Rendering never goes past this many pixels per PDF point (300 dpi).
_MAX_RENDER_SCALE = 300 / 72
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def render_pages(
    reading: Reading, output_dir: Callable[[], str], content_digest: str, counter: TokenCounter
) -> PartsResult:
    """The `parts` result: the pages asked for, drawn into a folder of the session's
    output folder (`output_dir()`) named by the PDF's content, so each is drawn once."""
    settings, path, chosen = reading.settings, reading.path, reading.chosen
    try:
        sizes = reading.job.call("sizes", {"pages": chosen})["sizes"]
    except worker.Failure as failure:
        raise open_failed(path, failure) from None
    # Each page's scale and final size are decided here, so the worker only draws.
    plan = {
        number: page_plan(width_pt, height_pt, settings)
        for number, (width_pt, height_pt) in zip(chosen, sizes, strict=True)
    }

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
                step(f"page {number} drawn", len(have), len(chosen))

            if missing:
                drawing = [[n, *plan[n]] for n in missing]
                try:
                    args = {"pages": drawing, "stop_after": pdf_reading.MAX_SECONDS}
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
        f"Read each page file with {call('read')} to see it "
        f"(about {image_tokens // max(1, len(shown)):,} tokens a page)."
    )
    # The way on is the same read, its pages changed: each front end says it whole (with
    # the caller's session); the note names another call (each page file's read).
    onward = again(pages=next_pages)
    if skipped is not None:
        more = f" Continue with {onward}." if next_pages else ""
        note = (
            f"Rendered page{'s' if len(shown) > 1 else ''} {compress(shown)} of "
            f"{reading.page_count}. {' '.join(notes)}{more} {note}"
        )
    elif left:
        why = (
            f"rendering stopped after {pdf_reading.MAX_SECONDS:.0f} s"
            if stopped
            else f"a read renders at most {settings.pdf_max_pages} pages"
        )
        note = (
            f"Rendered pages {compress(shown)} of {reading.page_count} ({why}); continue with "
            f"{onward}. {note}"
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
    return PartsResult(attrs.evolve(file, tokens=own_tokens(file, counter)))


def own_tokens(file: PartsFile, counter: TokenCounter) -> int:
    """The result is paths and numbers: its cost is the count of its own JSON (compact),
    `tokens` included. A count changes the digits it is counted with by a token at most,
    so a few rounds settle it."""
    tokens = 0
    for _ in range(4):
        sent = json.dumps(
            unstructure(attrs.evolve(file, tokens=tokens)),
            ensure_ascii=False,
            separators=(",", ":"),
        )
        counted = counter.count(sent)
        if counted == tokens:
            break
        tokens = counted
    return tokens


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


def page_plan(width_pt: float, height_pt: float, settings: Settings) -> tuple[float, int, int]:
    """A page's scale and final size in pixels, as the worker is asked to draw it."""
    scale = _render_scale(width_pt, height_pt, settings)
    drawn = max(1, math.ceil(width_pt * scale)), max(1, math.ceil(height_pt * scale))
    return (scale, *budget_size(*drawn, settings))


def _render_scale(width_pt: float, height_pt: float, settings: Settings) -> float:
    """Pixels per point so the page fits the image budget (and is no sharper than 300 dpi)."""
    width_pt, height_pt = max(width_pt, 1.0), max(height_pt, 1.0)
    return min(
        _MAX_RENDER_SCALE,
        settings.image_max_edge / max(width_pt, height_pt),
        math.sqrt(settings.image_max_tokens * PIXELS_PER_TOKEN / (width_pt * height_pt)),
    )
