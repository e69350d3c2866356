"""One memory budget for every image the server decodes (image files, notebook images).

A PNG of 650 KB can hold 13,000 x 13,000 RGBA pixels: 676 MB once decoded, and four such
reads at once took the server to 5.4 GB. What a decode will hold is known from the header
before a byte of pixel data is inflated (decode_price.py: Pillow's image with its row
pointers, the decoder's own buffers, the copies fitting makes), so it is priced first:

- a decode that would take more than `DECODE_MAX_BYTES` is refused with `too_large`
  and what to do instead (JPEGs are priced at the reduced DCT scale `draft` decodes at,
  so a huge photo usually fits);
- decodes running at once share `TOTAL_BYTES`: one that does not fit waits for room
  (the others' decodes end within seconds), up to `WAIT_SECONDS`, and is then refused
  (never started beside the others to see whether memory lasts); at most `MAX_WAITING`
  wait, each on a thread of the server's pool, and the rest are refused at once;
- a read that decodes many images (a notebook) also has its own `Allowance` in total.

Memory given back: Pillow allocates an image in blocks of up to 16 MB. glibc serves the
first from mmap, then raises its mmap threshold to the freed block's size (its dynamic
threshold), so every later block comes from an arena's heap, and one thread's arena
keeps all it ever held once freed: four concurrent bombs left 1.96 GB resident after
they were answered. `malloc_trim(0)` after each large decode returns the free pages of
every arena to the system.

The limits are module constants, not settings: settings come partly from the client and
the workspace, which must not be able to lift them.
"""

from __future__ import annotations

from ...errors import ReadkeeperError
from ...files import held_bytes
from ...files.held_bytes import Busy, trim
from .decode_price import MB

# What one decode may hold: a 60-megapixel RGBA picture, eight 4K screenshots' worth.
DECODE_MAX_BYTES = 256 * MB
# What every decode in flight holds together: two decodes of the largest size at once
# (on a 2-core machine more would only compete for the cores).
TOTAL_BYTES = 512 * MB
# What one read decodes in total (a notebook's images, one after the other).
READ_DECODE_BYTES = 512 * MB
# How long a decode waits for the others to leave room before it is refused.
WAIT_SECONDS = 30.0
# At most this many decodes wait for room at once; more are refused at once.
MAX_WAITING = 2


class Budget(held_bytes.Budget):
    """Bytes of decoded pixels the server holds at once, shared by every reader: the
    server's one budget rule (files/held_bytes.py) with this file's limits."""

    def __init__(self, total: int = TOTAL_BYTES) -> None:
        super().__init__(total, MAX_WAITING, WAIT_SECONDS)


class Allowance:
    """What one read may decode in total (a notebook's images, one after another)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.spent = 0

    def take(self, nbytes: int) -> bool:
        """Count `nbytes` against the allowance; False (nothing counted) past it."""
        if self.spent + nbytes > self.total:
            return False
        self.spent += nbytes
        return True


_budget = Budget()


def budget() -> Budget:
    """The server's one budget."""
    return _budget


def busy(path: str) -> ReadkeeperError:
    """The refusal of a decode that found no room in the budget."""
    return ReadkeeperError(
        "too_large",
        f"{path}: other images being decoded hold the {TOTAL_BYTES // MB} MB the server "
        f"lets decodes use at once, and none finished within {WAIT_SECONDS:.0f} s. Read "
        "it again when the other image reads have answered.",
        file_path=path,
        reason="busy",
        max_total_decode_bytes=TOTAL_BYTES,
    )


__all__ = ["Allowance", "Budget", "Busy", "budget", "busy", "trim"]
