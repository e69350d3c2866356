"""What cancelling a readkeeper/* request does (`$/cancelRequest`, and pygls' cancel of
every request in flight at `shutdown`), so that its answer is always honest.

pygls cancels the handler's task, and answers `cancelled` at once, whatever the worker
thread running the request's core work goes on to do: an edit answered `cancelled` was
written a moment later, and undo took it back. So the cancel goes through `withdraw`:
work not yet started is taken off the thread pool's queue (it never runs, and the
answer says `cancelled`); work started runs to its end and the request is answered with
what it did, as LSP allows ("the server may still return a result"). The one step
stopped midway is a PDF worker's render (read/readers/worker.py): the read gives up
before recording anything, and its answer is `cancelled` too.

A handler that has not reached its core work (it waits for the user's permission, or
has not started) is cancelled as pygls would: it has done nothing yet.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import weakref
from typing import Any, NamedTuple


class Work(NamedTuple):
    """A request's core work handed to the thread pool, and how to stop a PDF render it
    waits for."""

    future: concurrent.futures.Future[Any]
    stop: threading.Event


class Works:
    """The core work of each readkeeper/* request in flight, by its handler's task (the
    future pygls keeps for the request)."""

    def __init__(self) -> None:
        # Weak: an entry goes with its task, answered or not.
        self._by_request: weakref.WeakKeyDictionary[Any, Work] = weakref.WeakKeyDictionary()

    def started(self, work: Work) -> None:
        """Note the work the running handler's task handed to the pool."""
        task = asyncio.current_task()
        if task is not None:
            self._by_request[task] = work

    def withdraw(self, request: Any) -> None:
        """Cancel the request whose future (pygls') is `request`, as far as honesty
        allows: see the module's docstring."""
        work = self._by_request.get(request)
        if work is None:
            request.cancel()  # no work handed over yet: the handler stops where it waits
        elif not work.future.cancel():  # it ran or runs: its answer is what it did
            work.stop.set()
