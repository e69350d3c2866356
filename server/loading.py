"""Loading a server's modules with the garbage collector's full passes held off."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def loading() -> Iterator[None]:
    """Load a server's modules without the garbage collector's full passes, then freeze
    what loading left. Importing lsprotocol, pygls and readkeeper makes a few hundred
    thousand objects that live as long as the process, and each full collection while
    they load walks all of them again for nothing (a tenth of the import time here).
    The young generations are still collected, so loading's own garbage is freed as it
    goes: with the collector simply off, about 10 MB of it stayed for good. Frozen
    (`gc.freeze`), what stays is left out of every later collection too, so the
    collector's pauses stay short while serving."""
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], 1 << 30)  # no full collection
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.freeze()


__all__ = ["loading"]
