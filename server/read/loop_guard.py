"""Costly steps never run on a front end's event loop.

A front end answers a quick read (`calls.quick`) on its event loop, where a hop to a
worker thread would cost more than the read. Whether a read stays quick is only known
once it runs: a file over the token cap that comes back as an outline (a parse and a
walk), or a re-read answered with a diff (difflib), costs far more than its lines. Such
a step calls `costly_step` first: on the loop it raises `OffTheLoop` and the front end
hands the request to its workers, which run it from the start (what the read did
before the step, a snapshot kept, is the same when done twice).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

_on_the_loop = contextvars.ContextVar("readkeeper_on_the_loop", default=False)


class OffTheLoop(Exception):
    """A costly step was reached on the event loop: run the request on a worker."""

    # The call is run again on a worker, which journals it: this attempt is no call of
    # its own (state/journal.py), never a phantom `internal` error in the history.
    rerun = True


@contextlib.contextmanager
def on_the_loop() -> Iterator[None]:
    """Run the block as on the event loop: costly steps in it raise OffTheLoop."""
    token = _on_the_loop.set(True)
    try:
        yield
    finally:
        _on_the_loop.reset(token)


def costly_step() -> None:
    """Called before a step whose cost can grow faster than its input."""
    if _on_the_loop.get():
        raise OffTheLoop
